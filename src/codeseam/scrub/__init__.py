"""Secret and personal-data redaction before anything reaches the index (DESIGN §3).

::

    from codeseam.scrub import scrub_text, load_allow
    result = scrub_text(text, allow=load_allow(repo_root, settings.scrub_allow))
    result.text          # each secret replaced by "[REDACTED:<kind>]", same line count
    result.redactions    # (Redaction(line, kind, preview), ...): never the secret itself

Rules match shapes, not names (``rules.py``, data); one name rule catches a literal assigned
to a SCREAMING_SNAKE secret name. ``engine.py`` runs them. Kinds: see ``KINDS``.
"""

from __future__ import annotations

from .engine import ALLOW_FILE, ScrubResult, load_allow, placeholder, scrub_text
from .rules import KINDS, RULES_VERSION
from .shapes import mask

__all__ = ["ALLOW_FILE", "KINDS", "RULES_VERSION", "ScrubResult", "load_allow", "mask", "placeholder",
           "scrub_text"]
