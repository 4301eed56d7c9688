"""Secret and personal-data redaction before anything reaches the index (DESIGN §3).

::

    from codeseam.scrub import scrub_text, load_allow
    result = scrub_text(text, allow=load_allow(repo_root, settings.scrub_allow))
    result.text          # each secret replaced by "[REDACTED:<kind>]", same line count
    result.redactions    # (Redaction(line, kind, preview, rule), ...): never the secret itself

Rules are data: provider token formats (``providers.py``), generic credential shapes
(``generic.py``: URL credentials, command lines, headers, connection strings, Kubernetes
Secrets ...), the name rule for a literal under a secret-named key in any case style
(``assign.py``), personal data (``shapes.py``). ``engine.py`` finds every rule's literals in
one pass and runs the rules there. Kinds: see ``KINDS``; families: ``rules.py``.
"""

from __future__ import annotations

from .engine import ALLOW_FILE, AllowList, ScrubResult, load_allow, placeholder, scrub_text
from .rules import KINDS, RULES_VERSION
from .shapes import mask

__all__ = ["ALLOW_FILE", "KINDS", "AllowList", "RULES_VERSION", "ScrubResult", "load_allow", "mask", "placeholder",
           "scrub_text"]
