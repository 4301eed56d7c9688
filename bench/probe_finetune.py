"""Probe: does fine-tuning the bundled model on docstring -> code pairs help retrieval?

    python bench/probe_finetune.py pairs OUT.json [--cap 400]      # pairs from installed packages
    python bench/probe_finetune.py group PAIRS.json OUT.json         # batches of one package and folder
    python bench/probe_finetune.py train PAIRS.json MODEL_DIR [--steps 270 --batch 16 --seq 128]
    python bench/probe_finetune.py eval MODEL_DIR CACHE_DIR OUT.json # a subset of the three dev sets

A probe for planning (bench/results/finetune-probe.md), not a shipped path: no fine-tuned
weights ship, and the product's model is unchanged. It needs the ``st`` extra (torch,
sentence-transformers).

- ``pairs``: training pairs in codeseam's own embedded-text format. Installed packages that no
  eval set holds (``PACKAGES``; flask, click, requests, httpx and model2vec are eval corpora and
  refused) are chunked by codeseam's chunker; a function or method chunk whose header carries a
  ``doc:`` line (its docstring's first line, 4 to 40 words) gives the pair (that line, the chunk's
  embedded text without the ``doc:`` line and without the docstring itself). At most ``--cap``
  pairs a package.
- ``group``: pairs sorted by package and file, cut into batches, the batches shuffled: a batch's
  other pairs (its in-batch negatives) are routines of the same package and mostly the same
  folder or file, the hard case of the commit queries ("the right file, another routine").
- ``train``: MultipleNegativesRankingLoss (in-batch negatives), AdamW at 2e-5, one pass.
- ``eval``: hybrid-ast and dense-ast on stdlib-dev, repos-dev's got and testify and six small
  semble-dev repositories, through the sentence-transformers backend with the far threshold
  pinned at the bundled model's (0.265: an uncalibrated model is never "far", which would change
  the fusion), so the base model through the same backend is the comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

BASE_MODEL = ROOT / "src" / "codeseam" / "embed" / "models" / "all-MiniLM-L6-v2"
EVAL_CORPORA = {"flask", "click", "requests", "httpx", "httpx2", "model2vec", "codeseam"}
PACKAGES = ("jinja2", "matplotlib", "sympy", "hypothesis", "_pytest", "fastapi", "anyio", "jsonschema",
            "huggingface_hub", "sentence_transformers", "setuptools", "pip", "attr", "fsspec", "joblib",
            "markdown_it", "PIL", "dateutil", "fontTools", "onnx", "pymilvus", "transformers", "torch", "numpy")
REPOS_DEV = ["got", "testify"]
SEMBLE_DEV = ["express", "sinatra", "xmonad", "http-dart", "dio", "model2vec"]
_DOCSTRING = re.compile(r'^[ \t]*[rbuRBU]?("""|\'\'\')(.*?)\1[ \t]*\n', re.S | re.M)


def pairs(out: str, cap: int) -> None:
    import codeseam.chunk as ch

    site = sysconfig.get_paths()["purelib"]
    rng = random.Random(0)
    found: list[dict] = []
    for pkg in PACKAGES:
        if pkg in EVAL_CORPORA:
            raise SystemExit(f"{pkg} is an eval corpus")
        got = []
        for dp, dn, fn in os.walk(os.path.join(site, pkg)):
            dn[:] = [d for d in dn if d not in ("tests", "test", "testing", "__pycache__")]
            for f in fn:
                if not f.endswith(".py") or f.startswith("test_"):
                    continue
                path = os.path.join(dp, f)
                try:
                    text = Path(path).read_text(encoding="utf-8")
                    if len(text) > 400_000:
                        continue
                    chunks = ch.chunk_file(os.path.relpath(path, site), text)
                except Exception:  # noqa: BLE001 - a file the probe cannot read is left out
                    continue
                for c in chunks:
                    if c.kind not in ("function", "method"):
                        continue
                    lines = c.indexed_text.split("\n")
                    doc = next((line[5:].strip() for line in lines if line.startswith("doc: ")), "")
                    if not 4 <= len(doc.split()) <= 40 or doc.startswith(("See ", "Same as", "Alias", "Deprecated")):
                        continue
                    body = _DOCSTRING.sub("", "\n".join(line for line in lines if not line.startswith("doc: ")), count=1)
                    if doc.split(".")[0][:30] in body:
                        continue
                    got.append({"q": doc, "p": body, "pkg": pkg})
        rng.shuffle(got)
        found += got[:cap]
        print(pkg, len(got), file=sys.stderr)
    rng.shuffle(found)
    Path(out).write_text(json.dumps(found))
    print(len(found), "pairs", file=sys.stderr)


def group(src: str, out: str, batch: int = 16) -> None:
    d = json.loads(Path(src).read_text())
    d.sort(key=lambda x: (x["pkg"], x["p"].split("\n")[0]))
    batches = [d[i:i + batch] for i in range(0, len(d), batch)]
    random.Random(1).shuffle(batches)
    Path(out).write_text(json.dumps([x for b in batches for x in b]))


def train(src: str, out: str, steps: int, batch: int, seq: int, lr: float) -> None:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.losses import MultipleNegativesRankingLoss

    data = json.loads(Path(src).read_text())
    model = SentenceTransformer(str(BASE_MODEL), device="cpu")
    model.max_seq_length = seq
    loss = MultipleNegativesRankingLoss(model)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    t0 = time.time()
    for step in range(steps):
        start = (step * batch) % len(data)
        b = data[start:start + batch]
        if len(b) < batch:
            continue
        value = loss([model.tokenize([x["q"] for x in b]), model.tokenize([x["p"] for x in b])], None)
        value.backward()
        opt.step()
        opt.zero_grad()
        if step % 10 == 0:
            print(step, round(value.item(), 4), round(time.time() - t0, 1), flush=True)
    model.max_seq_length = 256
    model.save(out)


def evaluate(model: str, cache: str, out: str) -> None:
    import bench_rank

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    variants = ["hybrid-ast", "dense-ast"]
    overrides = {"embedding_backend": "sentence-transformers", "embedding_model": model, "weak_threshold": 0.265,
                 "embedding_threads": 2}
    res = bench_rank.run_sets(variants, bench_rank.SETS, Path(cache), tuple(REPOS_DEV + SEMBLE_DEV), overrides)
    Path(out).write_text(json.dumps({n: bench_rank.scores(res, n) for n in variants}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pairs")
    p.add_argument("out")
    p.add_argument("--cap", type=int, default=400)
    g = sub.add_parser("group")
    g.add_argument("src")
    g.add_argument("out")
    t = sub.add_parser("train")
    t.add_argument("src")
    t.add_argument("out")
    t.add_argument("--steps", type=int, default=270)
    t.add_argument("--batch", type=int, default=16)
    t.add_argument("--seq", type=int, default=128)
    t.add_argument("--lr", type=float, default=2e-5)
    e = sub.add_parser("eval")
    e.add_argument("model")
    e.add_argument("cache")
    e.add_argument("out")
    a = ap.parse_args()
    if a.cmd == "pairs":
        pairs(a.out, a.cap)
    elif a.cmd == "group":
        group(a.src, a.out)
    elif a.cmd == "train":
        train(a.src, a.out, a.steps, a.batch, a.seq, a.lr)
    else:
        evaluate(a.model, a.cache, a.out)


if __name__ == "__main__":
    main()
