"""Identifier-like labels: the character set and length each one may have.

A label (an agent name, an adapter, a model, a branch, an error class, a trigger, a trace or
run id, a file author) is shown in lists, web pages, metric labels and the header of what an
agent reads. So it is an identifier, not text: it is checked against a small ASCII character
set that cannot carry spaces, quotes, angle brackets, newlines, markers or prose, and it must
not hold anything the redactor recognises as a secret. A label that fails is refused, never
repaired: a repaired label would be a different identifier, and a redacted one
(``[REDACTED]``) is not in any label's character set.

The error never repeats the value (it may be a credential): it names the field, the label's
rule and, for a character outside the set, that character's code point and position.

docs/run-record.md documents every rule; the run-record JSON Schema carries the same patterns
(a test checks they agree). Pure: standard library, the redactor and the errors module only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fleetmem.core.redact import find_secrets
from fleetmem.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class LabelRule:
    """One kind of label: an anchored pattern (the JSON Schema's) and a rule to show people."""

    kind: str
    pattern: str
    max_chars: int
    #: One allowed character, as a regex class: lets an error point at the first bad one.
    chars: str
    rule: str

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)

    def allows(self, ch: str) -> bool:
        """Whether ``ch`` is in this label's character set."""
        return bool(_compiled(self.chars).fullmatch(ch))


_CACHE: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    found = _CACHE.get(pattern)
    if found is None:
        found = _CACHE[pattern] = re.compile(pattern, re.ASCII)
    return found


# Git allows far more in a ref name than fleetmem shows: the subset here is what real branch
# names use (letters, digits, ``. _ / + # @ = , % -``), minus git's own refusals (``..``,
# ``//``, a component starting with ``.``, a trailing ``/``, ``.`` or ``.lock``).
_BRANCH = r"^(?!.*(?:\.\.|//|/\.|\.lock$|[./]$))[A-Za-z0-9_][A-Za-z0-9._/+#@=,%-]{0,254}$"

RULES: dict[str, LabelRule] = {
    rule.kind: rule
    for rule in (
        LabelRule(
            "agent",
            r"^[a-z0-9][a-z0-9._-]{0,63}$",
            64,
            r"[a-z0-9._-]",
            "1-64 of a-z 0-9 . _ -, starting with a letter or digit",
        ),
        LabelRule(
            "adapter",
            r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
            64,
            r"[A-Za-z0-9._-]",
            "1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit",
        ),
        LabelRule(
            "model",
            r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$",
            128,
            r"[A-Za-z0-9._:/@+-]",
            "1-128 of A-Z a-z 0-9 . _ : / @ + -, starting with a letter or digit",
        ),
        LabelRule(
            "branch",
            _BRANCH,
            255,
            r"[A-Za-z0-9._/+#@=,%-]",
            "1-255 of A-Z a-z 0-9 . _ / + # @ = , % -, starting with a letter, digit or _;"
            " no '..', '//', '/.', and no trailing '/', '.' or '.lock'",
        ),
        LabelRule(
            "error_class",
            r"^[A-Za-z0-9_.:-]{1,64}$",
            64,
            r"[A-Za-z0-9_.:-]",
            "1-64 of A-Z a-z 0-9 _ . : -",
        ),
        LabelRule(
            "trigger",
            r"^(manual|schedule|webhook:[A-Za-z0-9._-]{1,64}|channel:[A-Za-z0-9._-]{1,64})$",
            72,
            r"[A-Za-z0-9._:-]",
            "manual, schedule, webhook:NAME or channel:NAME (NAME: 1-64 of A-Z a-z 0-9 . _ -)",
        ),
        LabelRule(
            "ident",
            r"^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,255}$",
            256,
            r"[A-Za-z0-9._:@+=-]",
            "1-256 of A-Z a-z 0-9 . _ : @ + = -, starting with a letter or digit",
        ),
        LabelRule(
            "trace_id",
            r"^[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}$",
            128,
            r"[A-Za-z0-9._:/+=-]",
            "1-128 of A-Z a-z 0-9 . _ : / + = -, starting with a letter or digit",
        ),
        LabelRule(
            "user",
            r"^[A-Za-z0-9_][A-Za-z0-9._@+-]{0,63}$",
            64,
            r"[A-Za-z0-9._@+-]",
            "1-64 of A-Z a-z 0-9 . _ @ + -, starting with a letter, digit or _",
        ),
    )
}


def describe(value: str) -> str:
    """What an error may say about a refused label: its length, never its characters."""
    return f"<{len(value)} characters, not shown>"


def problem(kind: str, value: object) -> str | None:
    """Why ``value`` is not a valid label of ``kind`` (a reason without the value), or None."""
    rule = RULES[kind]
    if not isinstance(value, str):
        return "must be a string"
    if not value:
        return "must not be empty"
    if len(value) > rule.max_chars:
        return f"is longer than {rule.max_chars} characters: {kind} is {rule.rule}"
    secrets = find_secrets(value)
    if secrets:
        # Checked before the character set, so a key that also breaks the set is reported
        # as what it is.
        names = ", ".join(secrets)
        return f"holds a secret ({names}); a label is stored and shown, so it is refused"
    if rule.regex.fullmatch(value):
        return None
    bad = next((i for i, ch in enumerate(value) if not rule.allows(ch)), None)
    if bad is not None:
        return (
            f"character {bad + 1} (U+{ord(value[bad]):04X}) is not allowed: {kind} is {rule.rule}"
        )
    return f"has the wrong shape: {kind} is {rule.rule}"


def check(kind: str, value: object, field: str, *, error: type[InvalidInput] = InvalidInput) -> str:
    """Return ``value`` when it is a valid ``kind`` label, else raise ``error`` naming ``field``.

    The error describes the value (its length) and why it fails, never the value itself.
    """
    reason = problem(kind, value)
    if reason is None:
        assert isinstance(value, str)
        return value
    shown = describe(value) if isinstance(value, str) else type(value).__name__
    raise error(field, shown, reason)


def coerce(kind: str, value: object) -> str | None:
    """``value`` when it is a valid ``kind`` label, else None: for labels fleetmem derives
    itself (a model an agent's stream reports, a branch git names), where a bad one should
    be dropped rather than fail the run it belongs to."""
    return value if isinstance(value, str) and problem(kind, value) is None else None


#: The longest run id any surface accepts: the run record's ``ident`` bound, so a run the
#: schema stores can also be served facts, frozen context and a forget.
MAX_RUN_ID_CHARS: int = RULES["ident"].max_chars


def check_run_id(run_id: object, field: str) -> str:
    """``run_id`` if it is 1 to :data:`MAX_RUN_ID_CHARS` printable characters, else
    :class:`InvalidInput` naming ``field``."""
    if isinstance(run_id, str) and 0 < len(run_id) <= MAX_RUN_ID_CHARS and run_id.isprintable():
        return run_id
    raise InvalidInput(field, run_id, f"must be 1 to {MAX_RUN_ID_CHARS} printable characters")
