"""`codeseam scrub PATH... [--json]`: a dry run of the secret scrubber.

Lists ``path:line kind preview`` for every redaction that indexing would make (the preview
is masked: never the secret), then ``N redactions in M files`` on stderr. ``--json`` gives
each finding's path, line, kind (the family in the placeholder), rule (the rule that found
it: ``gitlab-pat``, ``url-credentials`` ...) and preview. Folders are
walked with ``codeseam.discover`` (the same files, ignore rules and skips as ``index``),
files are read with the same decoding policy. The allow-list is ``.codeseamallow`` at the
repository root (the nearest folder above PATH with a ``.codeseamallow`` or ``.git``: exact
values, one a line, never regexes; an entry it ignores is a warning on stderr) plus the
user's regexes in ``scrub_allow`` / ``RAG_SCRUB_ALLOW`` (the env variable is split on commas,
or on line breaks when it has any, so a pattern that holds a comma goes one per line, or in
the config file's TOML list).

Exit status: 0 when the scan ran, with or without findings (it is a report, not a gate);
1 for a fatal error such as a bad allow pattern; 2 for a usage error (e.g. a missing PATH).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from .cli import emit_json, settings_from


@dataclass
class ScanReport:
    findings: list[dict[str, Any]] = field(default_factory=list)
    files_scanned: int = 0
    files_with_redactions: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # allow-file entries ignored, with why

    def to_json(self, scrub_enabled: bool) -> dict[str, Any]:
        return {
            "findings": self.findings,
            "redactions": len(self.findings),
            "files_with_redactions": self.files_with_redactions,
            "files_scanned": self.files_scanned,
            "skipped": self.skipped,
            "warnings": self.warnings,
            "scrub_enabled": scrub_enabled,
        }


def allow_root(path: Path) -> Path:
    """The folder whose ``.codeseamallow`` applies to ``path``: the nearest one above it
    holding a ``.codeseamallow`` or a ``.git`` (a repository root), else ``path`` itself."""
    from ..scrub import ALLOW_FILE

    start = path if path.is_dir() else path.parent
    for folder in (start, *start.parents):
        if (folder / ALLOW_FILE).is_file() or (folder / ".git").exists():
            return folder
    return start


def _targets(path: Path, shown: str, max_file_bytes: int, report: ScanReport) -> list[tuple[str, str]]:
    """(shown path, absolute path) of the files to scan under ``path``."""
    if path.is_dir():
        from ..discover import discover

        found = discover(path, max_file_bytes=max_file_bytes)
        report.skipped += [{"path": os.path.join(shown, s.path), "reason": s.reason, "detail": s.detail}
                           for s in found.skips]
        return [(os.path.join(shown, f.path), f.abs_path) for f in found.files]
    return [(shown, str(path.resolve()))]


def scan_paths(paths: tuple[str, ...], settings) -> ScanReport:
    """Scrub every file under ``paths`` in memory and collect the redactions (no writes)."""
    from ..discover import read_text
    from ..errors import FileSkipped
    from ..scrub import AllowList, load_allow, scrub_text

    report = ScanReport()
    allow_cache: dict[Path, AllowList] = {}
    for given in paths:
        path = Path(given)
        root = allow_root(path.resolve())
        if root not in allow_cache:
            allow_cache[root] = load_allow(root, settings.scrub_allow)
            report.warnings += [f"{root}/{w}" for w in allow_cache[root].ignored]
        for shown, abs_path in _targets(path, given, settings.max_file_bytes, report):
            try:
                text, _ = read_text(abs_path, max_file_bytes=settings.max_file_bytes)
            except FileSkipped as exc:
                report.skipped.append({"path": shown, "reason": exc.reason, "detail": exc.detail})
                continue
            report.files_scanned += 1
            result = scrub_text(text, allow=allow_cache[root], path=shown)
            name = scrub_text(shown)  # a file named after a secret is shown redacted
            if result.redactions or name.redactions:
                report.files_with_redactions += 1
            report.findings += [{"path": name.text, "line": 0, "kind": r.kind, "rule": r.rule,
                                 "preview": r.preview} for r in name.redactions]
            report.findings += [{"path": name.text, "line": r.line, "kind": r.kind, "rule": r.rule,
                                 "preview": r.preview} for r in result.redactions]
    for skip in report.skipped:
        skip["path"] = scrub_text(skip["path"]).text
    return report


@click.command("scrub")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print the findings as one JSON document.")
def scrub_cmd(paths: tuple[str, ...], as_json: bool) -> None:
    """Dry-run the secret scrubber over PATH... (files or folders).

    Prints 'path:line kind preview' for each secret or personal detail that indexing would
    redact (previews are masked, the secret itself is never printed), then
    'N redactions in M files'. Nothing is written. Known false positives go into
    .codeseamallow (one exact value per line, at least 8 characters) or, as
    regexes, your own scrub_allow / RAG_SCRUB_ALLOW. Exit status 0 when the scan
    ran, findings or not.
    """
    settings = settings_from()
    report = scan_paths(paths, settings)
    if as_json:
        emit_json(report.to_json(settings.scrub))
        return
    for f in report.findings:
        click.echo(f"{f['path']}:{f['line']} {f['kind']} {f['preview']}")
    n, m = len(report.findings), report.files_with_redactions
    summary = (f"{n} redaction{'s' * (n != 1)} in {m} file{'s' * (m != 1)} "
               f"({report.files_scanned} scanned, {len(report.skipped)} skipped)")
    for w in report.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(summary, err=True)
    if not settings.scrub:
        click.echo("note: scrubbing is off (RAG_SCRUB=off): indexing would store these unredacted",
                   err=True)
