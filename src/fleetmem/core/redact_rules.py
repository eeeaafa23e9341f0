"""The redactor's rule table: every kind of secret, in the order names are reported.

:mod:`fleetmem.core.redact` runs these after stripping invisible characters, merges the spans
they report and names what fired. The rules themselves live in three modules by how they
recognise a secret:

* :mod:`fleetmem.core.redact_tokens`: by its own shape (vendor prefixes, key blocks);
* :mod:`fleetmem.core.redact_context`: by what stands before it (URLs, headers, command
  lines, named JSON/YAML keys);
* :mod:`fleetmem.core.redact_assign`: key = value assignments in every config syntax, and
  the generic rule for random-looking values under secret-ish key names.

Encoded and split forms (base64, %xx, \\uXXXX, continuation lines) are decoded by
:mod:`fleetmem.core.redact_encoded` and rescanned with this same table.
"""

from __future__ import annotations

from fleetmem.core.redact_assign import ASSIGNMENT_RULES, WEAK_RULE
from fleetmem.core.redact_base import REDACTED, Rule
from fleetmem.core.redact_context import CONTEXT_RULES
from fleetmem.core.redact_tokens import TOKEN_RULES

#: Reported for a base64 run whose decoded text holds a secret.
BASE64_RULE = "base64_encoded_secret"

# Order matters only for naming: within one merged span, specific rules are reported before
# context rules, and earlier rules before later ones.
RULES: tuple[Rule, ...] = TOKEN_RULES + CONTEXT_RULES + ASSIGNMENT_RULES

RULE_NAMES: tuple[str, ...] = (*(rule.name for rule in RULES), WEAK_RULE, BASE64_RULE)

__all__ = ["BASE64_RULE", "REDACTED", "RULES", "RULE_NAMES", "Rule"]
