"""The ingress boundary: what comes from outside is cleaned once, here, before anything else.

Every string that enters fleetmem from outside (a run record, a hook payload, an attribution
name) goes through one of the walkers below before it is validated in detail, normalised,
stored, logged or indexed:

* **text** (paths, prompts, results, URLs, tool arguments, any field not listed as a label):
  invisible and control characters are stripped and every secret the redactor recognises is
  replaced by ``[REDACTED]`` (:func:`fleetmem.core.redact.redact`, which does both). Paths are
  redacted *before* they are normalised, so ``deploy/postgres://app:PASSWORD@db`` cannot lose
  the ``//`` that lets the URL rule see the password.
* **labels** (identifier-like fields, listed in :data:`RUN_RECORD_LABELS`): checked against
  the character set and length of their kind (:mod:`fleetmem.core.labels`); a bad one, or one
  that holds a secret, refuses the whole input with an error naming the field, never echoing
  the value. Nothing is stored.

The walk is structural: it visits every string of the input, keys included, whatever the
schema says, so a field added to the run-record schema later is cleaned as text by default.
Only its *label* treatment needs an entry here; ``tests/ingress`` walks the schema and fails
when an identifier-like field (one with a ``pattern``) is not listed.

Pure: standard library and ``core`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fleetmem.core import labels
from fleetmem.core.redact import find_secrets, redact
from fleetmem.core.scope import validate_repo_key
from fleetmem.errors import InvalidInput, InvalidRunRecord

#: Nesting beyond this refuses the input: a run record is five levels deep, a hook payload
#: a few more; a deeper one is hostile, and walking it would only risk the recursion limit.
MAX_DEPTH = 64

#: Identifier-like run-record fields, by path (``[]`` stands for any array index), and the
#: label kind each must be. ``repo`` is a repository key, checked here by
#: :func:`fleetmem.core.scope.validate_repo_key` after the secret check.
RUN_RECORD_LABELS: dict[str, str] = {
    "run_id": "ident",
    "agent": "agent",
    "adapter": "adapter",
    "trace_id": "trace_id",
    "model.served": "model",
    "model.pinned": "model",
    "model.configured": "model",
    "trigger": "trigger",
    "sessions[].id": "ident",
    "sessions[].parent_id": "ident",
    "sessions[].repo": "repo",
    "sessions[].branch": "branch",
    "sessions[].events[].error_class": "error_class",
}


def clean_text(text: str) -> str:
    """One string of outside text, stripped of invisible characters and redacted."""
    return redact(text)


def clean_run_record(data: Mapping[str, Any]) -> dict[str, Any]:
    """The run record with every text string cleaned and every label checked.

    Raises InvalidRunRecord naming the first bad label (``sessions[0].branch``) or a nesting
    deeper than :data:`MAX_DEPTH`; the error describes the value without repeating it.
    """
    cleaned = _walk(dict(data), "", "", 0, RUN_RECORD_LABELS, InvalidRunRecord)
    assert isinstance(cleaned, dict)
    return cleaned


def clean_payload(value: Any, *, what: str = "payload") -> Any:
    """Any decoded JSON value (a hook payload) with every string and key cleaned as text."""
    return _walk(value, "", what, 0, {}, InvalidInput)


def _walk(
    value: Any,
    pattern: str,
    where: str,
    depth: int,
    label_fields: Mapping[str, str],
    error: type[InvalidInput],
) -> Any:
    if isinstance(value, str):
        kind = label_fields.get(pattern)
        if kind is None:
            return redact(value)
        field = where or pattern
        if kind == "repo":
            found = find_secrets(value)
            if found:
                raise error(
                    field,
                    labels.describe(value),
                    f"holds a secret ({', '.join(found)}); a repository key is stored and"
                    " shown, so it is refused",
                )
            try:
                return validate_repo_key(value)
            except InvalidInput as exc:
                raise error(field, labels.describe(value), exc.reason) from None
        return labels.check(kind, value, field, error=error)
    if not isinstance(value, dict | list):
        return value
    if depth >= MAX_DEPTH:
        raise error(where or "<input>", "(nested)", f"nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, list):
        return [
            _walk(item, f"{pattern}[]", f"{where}[{i}]", depth + 1, label_fields, error)
            for i, item in enumerate(value)
        ]
    out: dict[Any, Any] = {}
    for key, item in value.items():
        name = redact(key) if isinstance(key, str) else key
        child = f"{pattern}.{name}" if pattern else str(name)
        shown = f"{where}.{name}" if where else str(name)
        out[name] = _walk(item, child, shown, depth + 1, label_fields, error)
    return out
