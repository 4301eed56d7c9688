"""References (``codeseam.refs``): where a name is defined and used, in code only, as the files are now.

- ``names.py``: what a name means (``parse``, ``Type.method``, ``pkg::name``);
- ``occur.py``: the pure core, source text + grammar -> occurrences with their kind
  (def, call, import, use) and enclosing symbol (``find_occurrences``);
- ``find.py``: over an index, the candidate files read as they are now (``find_references``),
  callers, and a reference as one line (``reference_line``).

The records (``Reference``, ``Caller``, ``RefsResult``) are in ``records.py``, their JSON in
``codec.py``; ``fit.fit_refs`` sizes a result for a token budget.
"""

from __future__ import annotations

from .names import Name, parse_name
from .occur import KINDS, Occurrence, find_occurrences, is_code_language

__all__ = ["KINDS", "Name", "Occurrence", "find_occurrences", "is_code_language", "parse_name"]
