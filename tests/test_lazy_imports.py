"""`import codeseam` and `codeseam --help` stay fast: no torch, no model libraries, no Milvus."""
from __future__ import annotations

import json
import resource
import subprocess
import sys

HEAVY = ["torch", "sentence_transformers", "transformers", "onnxruntime", "tokenizers", "pymilvus",
         "milvus_lite", "tree_sitter", "tree_sitter_language_pack", "matplotlib", "fastapi", "mcp", "numpy"]


def _loaded_after(code: str) -> list[str]:
    probe = code + f"\nimport sys, json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_codeseam_is_light():
    assert _loaded_after("import codeseam") == []


def test_help_is_light_and_fast():
    code = ("import sys\nfrom codeseam.surfaces.cli import cli\n"
            "try:\n    cli.main(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass")
    assert _loaded_after(code) == []
    for command in ("search", "index", "chunk", "scrub"):
        sub = ("from codeseam.surfaces.cli import cli\n"
               f"try:\n    cli.main(['{command}', '--help'], standalone_mode=False)\nexcept SystemExit:\n    pass")
        assert [m for m in _loaded_after(sub) if m in ("torch", "pymilvus", "onnxruntime", "tree_sitter")] == []


def test_help_returns_under_half_a_second():
    """CPU seconds (user + sys) of the child, best of 3: wall time on this shared machine
    depends on what else runs, the work `--help` does does not. The wall-clock figure is
    recorded by bench/bench_cli.py."""
    exe = [sys.executable, "-m", "codeseam.surfaces.cli", "--help"]
    subprocess.run(exe, capture_output=True, check=True)  # warm the file cache
    best = min(_cpu_seconds(exe) for _ in range(3))
    assert best < 0.5, f"codeseam --help used {best:.2f} CPU seconds"


def _cpu_seconds(cmd: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
