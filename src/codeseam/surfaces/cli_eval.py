"""`codeseam eval GOLDEN --root CORPUS_DIR [--k 1,5,10] [--variants ...] [--out DIR]`.

GOLDEN is one golden set (a JSONL file, or a semble benchmark ``.json`` file) or a suite (a
folder of ``<repo>.jsonl`` sets, or of semble ``<repo>.json`` files, each over
``<root>/<repo>/``, such as ``golden/repos-dev/`` or ``golden/semble-dev/``).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .cli import emit_json, settings_from


def _ks(value: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(x) for x in value.split(",") if x.strip()}))
    except ValueError:
        raise click.BadParameter(f"expected a comma list of integers, not {value!r}") from None
    if not ks or any(k < 1 or k > 20 for k in ks):
        raise click.BadParameter("each k must be within 1..20")
    return ks


class _Progress:
    """Indexing progress (rich, TTY only) plus one line per index and variant on stderr."""

    def __init__(self, enabled: bool) -> None:
        from .render import IndexProgress

        self.enabled = enabled
        self.index = IndexProgress(enabled=enabled)

    def __call__(self, event: str, **f: Any) -> None:
        if event == "repo":
            click.echo(f"repo {f['repo']}", err=True)
        elif event == "index":
            click.echo(f"index {f['spec']} ...", err=True)
        elif event == "skipped":
            click.echo(f"warning: {f['reason']}", err=True)
        elif event == "query":
            if f["done"] == f["total"]:
                click.echo(f"  {f['variant']}: {f['total']} queries", err=True)
        elif self.enabled:
            self.index(event, **f)


@click.command("eval")
@click.argument("golden", type=click.Path(exists=True, path_type=str))
@click.option("--root", required=True, type=click.Path(exists=True, file_okay=False, path_type=str),
              help="Folder the golden set's paths are relative to; for a suite folder, the folder that "
                   "holds one corpus folder per repository (<root>/<repo>/).")
@click.option("--k", "ks", default="1,5,10", show_default=True, help="Cut-offs reported in the tables (1..20).")
@click.option("--variants", default="default", show_default=True,
              help="Comma list: names like hybrid-ast, bm25-window, dense-ast-enriched, hybrid-ast+rrf20, "
                   "or axis values (dense,bm25,hybrid / ast,window / plain,enriched) combined.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=str),
              help="Folder for eval.json, eval.md and the PNG plots (default: <cache>/report).")
@click.option("--corpus", type=click.Choice(["gold", "all"]),
              help="gold: index exactly the files the golden set names; all: every file under --root "
                   "(default: gold for a set, all for a suite).")
@click.option("--repos", help="Suite only: a comma list of the repositories to run (default: all).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=str),
              help="Where the eval keeps its corpus copy and index (default: the user cache dir).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def eval_cmd(golden: str, root: str, ks: str, variants: str, out: str | None, corpus: str | None,
             repos: str | None, cache_dir: str | None, as_json: bool) -> None:
    """Measure retrieval on GOLDEN: variants side by side, per kind and overall.

    \b
    GOLDEN is a golden set (JSONL) or a suite: a folder of <repo>.jsonl sets, each
    run over its own whole corpus <root>/<repo>/ and reported per repository and
    pooled (e.g. golden/repos-dev with --root corpora). A folder in the semble
    benchmark's format (golden/semble-dev with --root corpora/semble) is reported
    as the benchmark does: NDCG@10 per repository and category, the mean of the
    repository means, beside the published systems of its published.json.
    A folder holding SWE-bench-style instances.jsonl (golden/swe-dev, with --root
    the folder of <owner>+<name>/repo bare mirrors) is run as issue localization:
    each base commit exported and indexed incrementally, the issue text searched,
    file Acc@1/3/5/10 and function Acc@5/10 beside the published retrievers
    (--variants: default, bm25, dense; default: default,bm25).
    Indexes the corpus into the eval's own index (never yours), reused across runs
    when nothing changed; runs every query per variant (top 20) and reports
    Recall@k, whole@k, file-Recall@k, MRR, and for negatives the abstain rate
    (false-weak rate on the others). Writes eval.json (every per-query rank),
    eval.md and PNG plots.
    """
    from pathlib import Path

    from ..eval.swe import instances_file

    k_values = _ks(ks)
    settings = settings_from()
    progress = _Progress(enabled=sys.stderr.isatty() and not as_json)
    swe = instances_file(golden)
    if swe is not None:
        _swe(swe, root, variants, out, repos, cache_dir, as_json, settings, progress)
        return
    if Path(golden).is_dir():
        _suite(golden, root, k_values, variants, out, corpus or "all", repos, cache_dir, as_json, settings,
               progress)
        return
    if repos:
        raise click.UsageError("--repos applies to a suite folder, not to one golden set")
    _single(golden, root, k_values, variants, out, corpus or "gold", cache_dir, as_json, settings, progress)


def _single(golden, root, k_values, variants, out, corpus, cache_dir, as_json, settings, progress) -> None:
    from pathlib import Path

    from ..eval.report import calibration, overall_table, write_report
    from ..eval.runner import run_eval

    with progress.index:
        res = run_eval(golden, root, variants=variants, ks=k_values, settings=settings, cache_dir=cache_dir,
                       corpus=corpus, progress=progress)
    cal = calibration(res, "hybrid-ast") or calibration(res)
    sections = [cal[1]] if cal else []
    out_dir = Path(out) if out else Path(res.cache_dir) / "report"
    paths = write_report(res, out_dir, settings=settings, sections=sections,
                         extra_json={"calibration": cal[0]} if cal else None)
    if as_json:
        from ..eval.report import result_json

        data = result_json(res, settings=settings, extra={"calibration": cal[0]} if cal else None)
        for v in data["variants"].values():
            v.pop("queries", None)
        data["files"] = [str(p) for p in paths]
        emit_json(data)
        return
    click.echo(overall_table(res))
    for r in res.results:
        if r.skipped:
            click.echo(f"skipped {r.name}: {r.skipped}", err=True)
    click.echo("wrote " + ", ".join(str(p) for p in paths), err=True)


def _suite(golden, root, k_values, variants, out, corpus, repos, cache_dir, as_json, settings, progress) -> None:
    from pathlib import Path

    from ..eval.report import calibration
    from ..eval.suite import per_repo_long_table, run_suite, suite_json, write_suite_report

    wanted = [r.strip() for r in (repos or "").split(",") if r.strip()]
    with progress.index:
        suite = run_suite(golden, root, variants=variants, ks=k_values, settings=settings, cache_dir=cache_dir,
                          corpus=corpus, repos=wanted, progress=progress)
    from ..eval import semble

    pooled = suite.pooled
    cal = calibration(pooled, "hybrid-ast") or calibration(pooled)
    out_dir = Path(out) if out else Path(suite.cache_dir) / "report"
    extra = {"calibration": cal[0]} if cal else {}
    sections = [cal[1]] if cal else []
    bench = semble.is_semble_suite(suite)
    if bench:
        table = semble.markdown(suite, title="The semble benchmark: NDCG@10", golden_dir=golden)
        sections.insert(0, table.replace("# The semble", "## The semble", 1))
        extra["semble"] = semble.summary_json(suite, golden_dir=golden)
    paths = write_suite_report(suite, out_dir, settings=settings, sections=sections, extra_json=extra or None)
    if as_json:
        data = suite_json(suite, settings=settings, extra=extra or None)
        for v in data["variants"].values():
            v.pop("queries", None)
        data["files"] = [str(p) for p in paths]
        emit_json(data)
        return
    if bench:
        click.echo(semble.markdown(suite, title="The semble benchmark: NDCG@10", golden_dir=golden))
    else:
        click.echo(per_repo_long_table(suite))
    for r in pooled.results:
        if r.skipped:
            click.echo(f"skipped {r.name}: {r.skipped}", err=True)
    click.echo("wrote " + ", ".join(str(p) for p in paths), err=True)


def _swe(instances, mirrors, variants, out, repos, cache_dir, as_json, settings, progress) -> None:
    import json
    from pathlib import Path

    from ..eval import swe

    names = [v.strip() for v in (variants if variants != "default" else "default,bm25").split(",") if v.strip()]
    modes = tuple(dict.fromkeys({"default": "hybrid", "hybrid": "hybrid"}.get(n, n) for n in names))
    bad = [m for m in modes if m not in ("hybrid", "bm25", "dense")]
    if bad:
        raise click.BadParameter(f"a SWE-bench run takes the variants default, bm25 and dense, not {bad[0]!r}",
                                 param_hint="--variants")
    only = [r.strip() for r in (repos or "").split(",") if r.strip()]
    result = swe.run_swe(instances, mirrors, modes=modes, settings=settings, cache_dir=cache_dir, only=only,
                         progress=progress)
    out_dir = Path(out) if out else Path(result.cache_dir) / "report"
    out_dir.mkdir(parents=True, exist_ok=True)
    data = swe.to_json(result)
    (out_dir / "swe.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    (out_dir / "swe.md").write_text(swe.markdown(result), encoding="utf-8")
    if as_json:
        emit_json({k: v for k, v in data.items() if k != "per_instance"})
    else:
        click.echo(swe.markdown(result).split("\n## Per instance", 1)[0])
    click.echo(f"wrote {out_dir / 'swe.json'}, {out_dir / 'swe.md'}", err=True)
