"""References (``codeseam.refs``): where a name is defined and used, in code only, as the files are now.

- ``names.py``: what a name means (``parse``, ``Type.method``, ``pkg::name``);
- ``occur.py``: the pure core, source text + grammar -> occurrences with their kind
  (def, call, import, use) and enclosing symbol (``find_occurrences``).
"""

from __future__ import annotations

from .names import Name, parse_name
from .occur import KINDS, Occurrence, find_occurrences, is_code_language

__all__ = ["KINDS", "Name", "Occurrence", "find_occurrences", "is_code_language", "parse_name"]
