"""Mine commit-localisation queries from a repository's history (a held-out check, not a dev set).

    python bench/mine_commits.py --git DIR --name NAME --snapshot TAG --language python \\
        --source '^src/requests/' --exclude '(^|/)tests?/' --out bench/data/held-out/candidates

repos-dev (``shared/golden/repos-dev/README.md``) was made this way: every non-merge commit after
the snapshot S that *modifies* one or two non-test source files (adds, deletes and renames none)
and changes one or two top-level callables that exist, under the same path and dotted symbol,
exactly once in S; changed lines outside a definition may only be blank, comments or imports.
The gold range is the definition's range in S. This script does the mechanical half and writes
one candidate per line (``<name>.candidates.jsonl``: subject, sha, gold, the source diff) for
the hand curation the README describes (release bumps, typo / lint / doc-only changes,
refactors with no behaviour to search for, vague subjects dropped), and ``corpus``: how to export
S (``git archive``). Definitions are found with tree-sitter (``tree-sitter-language-pack``):
functions and methods not nested in another function; the symbol is the enclosing classes'
names and the callable's, dotted (Go: ``Receiver.Method``, the receiver type without ``*``).
Python, Java, PHP, Go, Rust (``Type.method`` for an ``impl`` block's functions), TypeScript and
JavaScript (functions, methods, and a variable or member assigned an arrow or function
expression: ``exports.main``, ``Runner.prototype.run``), Ruby, C#
(namespaces not in the symbol), Kotlin (a companion object is ``Companion``), Swift (an
extension's functions are its type's), C and C++ (the declarator's name: ``Foo::bar`` is
``Foo.bar``, a method defined in its class ``Foo.bar`` too; namespaces not in the symbol) are known.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# node types: callables, and containers whose name joins the dotted symbol
CALLABLES = {
    "go": {"function_declaration", "method_declaration"},
    "python": {"function_definition"},
    "java": {"method_declaration", "constructor_declaration"},
    "php": {"function_definition", "method_declaration"},
    "rust": {"function_item"},
    "typescript": {"function_declaration", "generator_function_declaration", "method_definition"},
    "javascript": {"function_declaration", "generator_function_declaration", "method_definition"},
    "ruby": {"method", "singleton_method"},
    "csharp": {"method_declaration", "constructor_declaration", "operator_declaration"},
    "kotlin": {"function_declaration"},
    "swift": {"function_declaration", "init_declaration"},
    "c": {"function_definition"},
    "cpp": {"function_definition"},
}
# a variable bound to one of these is a callable (``const f = () => {}``)
FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
CONTAINERS = {
    "go": set(),
    "python": {"class_definition"},
    "java": {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"},
    "php": {"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"},
    "rust": {"impl_item", "trait_item", "mod_item"},
    "typescript": {"class_declaration", "abstract_class_declaration", "class"},
    "javascript": {"class_declaration", "class"},
    "ruby": {"class", "module"},
    "csharp": {"class_declaration", "struct_declaration", "interface_declaration", "record_declaration"},
    "kotlin": {"class_declaration", "object_declaration", "companion_object"},
    "swift": {"class_declaration", "protocol_declaration"},  # classes, structs, enums, extensions
    "c": set(),
    "cpp": {"class_specifier", "struct_specifier"},  # namespaces not in the symbol
}
IMPORT_LINE = {
    "go": re.compile(r"^\s*(?:import\b|package\s|\"[\w./-]+\"\s*$|\w+\s+\"[\w./-]+\"\s*$|\)\s*$)"),
    "python": re.compile(r"^\s*(?:import\s|from\s+\S+\s+import\s)"),
    "java": re.compile(r"^\s*(?:import|package)\s"),
    "php": re.compile(r"^\s*(?:use|namespace|require|require_once|include)\b"),
    "rust": re.compile(r"^\s*(?:(?:pub(?:\([\w:]+\))?\s+)?use\s|extern\s+crate\s|(?:pub\s+)?mod\s+\w+;)"),
    "typescript": re.compile(r"^\s*(?:import\b|export\s+(?:\*|\{[^}]*\})\s+from\b)"),
    "javascript": re.compile(r"^\s*(?:import\b|export\s+(?:\*|\{[^}]*\})\s+from\b|(?:const|let|var)\s+[\w{}\s,]+=\s*require\()"),
    "ruby": re.compile(r"^\s*(?:require|require_relative|autoload)\b"),
    "csharp": re.compile(r"^\s*(?:using\s|namespace\s)"),
    "kotlin": re.compile(r"^\s*(?:import|package)\s"),
    "swift": re.compile(r"^\s*(?:@testable\s+)?import\s"),
    "c": re.compile(r"^\s*#\s*include\b"),
    "cpp": re.compile(r"^\s*(?:#\s*include\b|using\s+namespace\s|import\s)"),
}
# C and C++: the declarator chain down to the name (``static int *f(void)``, ``Foo::bar``)
_C_NAMES = {"identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name"}
COMMENT_LINE = re.compile(r"^\s*(?:#|//|/\*|\*|\*/|\"\"\"|''')")


@dataclass(frozen=True)
class Def:
    symbol: str
    start: int  # 1-based, inclusive; a Python range starts at its first decorator
    end: int


def definitions(language: str, text: bytes) -> list[Def]:
    """Top-level callables (not nested in another callable) with their dotted symbols."""
    from tree_sitter_language_pack import get_parser

    root = get_parser(language).parse(text).root_node
    out: list[Def] = []

    def name_of(node) -> str:
        if language in ("c", "cpp") and node.type == "function_definition":
            d = node.child_by_field_name("declarator")
            while d is not None and d.type not in _C_NAMES:
                d = d.child_by_field_name("declarator")
            name = text[d.start_byte:d.end_byte].decode("utf-8", "replace") if d is not None else "?"
            return re.sub(r"<[^<>]*>", "", name).replace("::", ".")
        n = node.child_by_field_name("left" if node.type == "assignment_expression" else "name")
        if n is None and node.type == "impl_item":  # Rust: the type the block implements
            n = node.child_by_field_name("type")
        if n is None:  # Kotlin's grammar has no field names: the first identifier child
            n = next((c for c in node.children if c.type in ("simple_identifier", "type_identifier")), None)
        if n is None:
            return "Companion" if node.type == "companion_object" else "?"
        return re.sub(r"<.*", "", text[n.start_byte:n.end_byte].decode("utf-8", "replace"))

    def bound_function(node) -> bool:
        field = {"variable_declarator": "value", "assignment_expression": "right"}.get(node.type)
        value = node.child_by_field_name(field) if field else None
        return value is not None and value.type in FUNCTION_VALUES

    def walk(node, scope: tuple[str, ...]) -> None:
        for child in node.children:
            target, start = child, child.start_point[0]
            if language == "python" and child.type == "decorated_definition":
                inner = child.child_by_field_name("definition")
                if inner is not None:
                    target = inner
            if target.type in CALLABLES[language] or bound_function(target):
                name = name_of(target)
                if language == "java" and target.type == "constructor_declaration":
                    name = "constructor"
                if language == "go" and target.type == "method_declaration":
                    name = f"{receiver_type(target)}.{name}"
                out.append(Def(".".join((*scope, name)), start + 1, child.end_point[0] + 1))
                continue  # nested callables are not gold
            if target.type in CONTAINERS[language]:
                walk(target.child_by_field_name("body") or target, (*scope, name_of(target)))
            elif child.child_count:
                walk(child, scope)

    walk(root, ())
    return out


def receiver_type(method) -> str:
    """A Go method's receiver type, without ``*`` and type arguments (``(c *Command)`` -> Command)."""
    recv = method.child_by_field_name("receiver")
    for node in _walk(recv) if recv is not None else ():
        if node.type == "type_identifier":
            return node.text.decode("utf-8", "replace")
    return "?"


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


def git(d: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(d), *args], check=True, capture_output=True, text=True,
                          errors="replace").stdout


def show(d: Path, rev: str, path: str) -> bytes | None:
    r = subprocess.run(["git", "-C", str(d), "show", f"{rev}:{path}"], capture_output=True)
    return r.stdout if r.returncode == 0 else None


def hunks(d: Path, sha: str, path: str) -> list[tuple[int, int, int, int]]:
    """(old start, old count, new start, new count) of each whitespace-insensitive hunk."""
    diff = git(d, "diff", "-w", "-U0", f"{sha}^", sha, "--", path)
    out = []
    for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", diff, re.M):
        out.append((int(m[1]), int(m[2] or 1), int(m[3]), int(m[4] or 1)))
    return out


def touched(defs: list[Def], lines: list[int]) -> tuple[set[str], list[int]]:
    """The definitions holding ``lines``, and the lines outside every definition."""
    hit, outside = set(), []
    for n in lines:
        d = next((d for d in defs if d.start <= n <= d.end), None)
        if d:
            hit.add(d.symbol)
        else:
            outside.append(n)
    return hit, outside


def harmless(text: bytes, lines: list[int], language: str) -> bool:
    src = text.decode("utf-8", "replace").split("\n")
    for n in lines:
        s = src[n - 1] if 0 < n <= len(src) else ""
        if s.strip() and not COMMENT_LINE.match(s) and not IMPORT_LINE[language].match(s):
            return False
    return True


def clean_subject(s: str) -> str:
    s = re.sub(r"^(?:\[[^\]]*\]\s*)+", "", s)
    s = re.sub(r"^[\w./-]+(?:\([^)]*\))?!?:\s+", "", s)  # type(scope): / component:
    s = re.sub(r"\s*\((?:#|gh-|GH-)\d+\)", "", s)
    s = re.sub(r"[\s,;]*(?:closes|fixes|fix|resolves)\s+#\d+\s*$", "", s, flags=re.I)
    return s.strip().rstrip(".").strip()


def mine(d: Path, snapshot: str, language: str, source: re.Pattern, exclude: re.Pattern) -> list[dict]:
    def is_source(p: str) -> bool:
        return bool(source.search(p)) and not exclude.search(p)

    snap_defs: dict[str, list[Def]] = {}
    out = []
    shas = git(d, "rev-list", "--reverse", "--no-merges", "--ancestry-path", f"{snapshot}..HEAD").split()
    for sha in shas:
        status = git(d, "diff", "--name-status", "-M", f"{sha}^", sha).split("\n")
        files = [ln.split("\t") for ln in status if ln.strip()]
        src = [f for f in files if is_source(f[-1]) or (len(f) > 2 and is_source(f[1]))]
        if not 1 <= len(src) <= 2 or any(f[0] != "M" for f in src):
            continue
        gold, ok = [], True
        for _, path in src:
            old, new = show(d, f"{sha}^", path), show(d, sha, path)
            if old is None or new is None:
                ok = False
                break
            old_defs, new_defs = definitions(language, old), definitions(language, new)
            old_lines, new_lines = [], []
            for a, ac, b, bc in hunks(d, sha, path):
                old_lines += range(a, a + ac)
                new_lines += range(b, b + bc)
            hit_old, out_old = touched(old_defs, old_lines)
            hit_new, out_new = touched(new_defs, new_lines)
            added = hit_new - {x.symbol for x in old_defs}
            if added or not harmless(old, out_old, language) or not harmless(new, out_new, language):
                ok = False
                break
            if path not in snap_defs:
                text = show(d, snapshot, path)
                snap_defs[path] = definitions(language, text) if text is not None else []
            for sym in sorted(hit_old | hit_new):
                in_snap = [x for x in snap_defs[path] if x.symbol == sym]
                if len(in_snap) != 1:
                    ok = False
                    break
                gold.append({"path": path, "symbol": sym, "start": in_snap[0].start, "end": in_snap[0].end})
            if not ok:
                break
        if not ok or not 1 <= len(gold) <= 2:
            continue
        subject = git(d, "log", "-1", "--format=%s", sha).strip()
        diff = git(d, "diff", "-w", f"{sha}^", sha, "--", *(p for _, p in src))
        out.append({"commit": sha, "date": git(d, "log", "-1", "--format=%as", sha).strip(), "subject": subject,
                    "query": clean_subject(subject), "gold": gold, "diff": diff[:6000]})
    return out


def golden(candidates: list[dict], curated: list[dict]) -> list[dict]:
    """The kept candidates as repos-dev records (``id`` ``<repo>-cNN`` in commit order, the
    curated query, ``kind`` commit, ``commit``, ``gold``; plus ``snapshot``)."""
    keep = {c["commit"]: c["query"] for c in curated if c.get("keep")}
    rows = [c for c in candidates if c["commit"] in keep]
    return [{"id": f"{c['repo']}-c{i:02d}", "repo": c["repo"], "query": keep[c["commit"]], "kind": "commit",
             "commit": c["commit"], "gold": c["gold"], "snapshot": c["snapshot"]}
            for i, c in enumerate(rows, 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git",  help="a git directory with the history")
    ap.add_argument("--name", required=True)
    ap.add_argument("--snapshot",  help="the tag or commit the corpus is exported at")
    ap.add_argument("--language",  choices=sorted(CALLABLES))
    ap.add_argument("--source",  help="regex: source paths")
    ap.add_argument("--exclude", default=r"(^|/)tests?/", help="regex: test and other excluded paths")
    ap.add_argument("--out", required=True, help="folder for <name>.candidates.jsonl")
    ap.add_argument("--curated", help="the hand curation (one {commit, keep, query, reason} per candidate): "
                                      "write <out>/<name>.jsonl, the kept ones as records, instead of mining")
    args = ap.parse_args()
    out = Path(args.out)
    if args.curated:
        def read(p: Path) -> list[dict]:
            return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]
        rows = golden(read(out / f"{args.name}.candidates.jsonl"), read(Path(args.curated)))
        (out / f"{args.name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        print(f"{args.name}: {len(rows)} records", file=sys.stderr)
        return
    missing = [f"--{k}" for k in ("git", "snapshot", "language", "source") if not getattr(args, k)]
    if missing:
        ap.error("mining needs " + ", ".join(missing))
    d = Path(args.git)
    rows = mine(d, args.snapshot, args.language, re.compile(args.source), re.compile(args.exclude))
    out.mkdir(parents=True, exist_ok=True)
    snap = git(d, "rev-parse", f"{args.snapshot}^{{commit}}").strip()
    with (out / f"{args.name}.candidates.jsonl").open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({"repo": args.name, "snapshot": snap, **r}) + "\n")
    print(f"{args.name}: {len(rows)} candidates after {args.snapshot} ({snap[:10]})", file=sys.stderr)


if __name__ == "__main__":
    main()
