"""Validating run records against the JSON Schema shipped in the package."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from fleetmem.core import strictjson
from fleetmem.core.ingress import clean_run_record
from fleetmem.core.runrecord import RunRecord, from_validated
from fleetmem.errors import InvalidRunRecord

if TYPE_CHECKING:  # jsonschema costs ~0.1 s to import: loaded when a record is first checked
    import jsonschema
    from jsonschema.exceptions import ValidationError

#: A run record larger than this is refused before parsing; real ones are a few KiB.
MAX_RECORD_BYTES = 16 * 1024 * 1024


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The run-record JSON Schema (draft 2020-12) as shipped in ``fleetmem/schemas``."""
    text = resources.files("fleetmem").joinpath("schemas/run-record.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema

    return jsonschema.Draft202012Validator(schema())


def _field(error: ValidationError) -> str:
    """A readable path such as ``sessions[0].events[2].path``."""
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    if error.validator == "required" and isinstance(error.validator_value, list):
        instance = error.instance if isinstance(error.instance, Mapping) else {}
        missing = [k for k in error.validator_value if k not in instance]
        if missing:
            return f"{out}.{missing[0]}" if out else str(missing[0])
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        sub = error.schema if isinstance(error.schema, Mapping) else {}
        allowed = set(sub.get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        if extra:
            return f"{out}.{extra[0]}" if out else str(extra[0])
    return out or "<record>"


def _reason(error: ValidationError) -> str:
    if error.validator == "required":
        return "is required"
    if error.validator == "additionalProperties":
        return "is not a known field"
    if error.validator == "enum":
        options = error.validator_value if isinstance(error.validator_value, list) else []
        return "must be one of " + ", ".join(map(str, options))
    if error.validator == "type":
        return f"must be of type {error.validator_value}"
    if error.validator == "pattern":
        return "has the wrong format"
    if error.validator in ("maxLength", "minLength", "maxItems", "minimum", "maximum"):
        return f"breaks {error.validator} {error.validator_value}"
    return error.message[:200]


def parse_run_record(raw: bytes | str | Mapping[str, Any]) -> tuple[RunRecord, dict[str, Any]]:
    """Validate a run record; return it typed and as the plain mapping that was validated.

    The mapping is the record after the ingress boundary
    (:func:`fleetmem.core.ingress.clean_run_record`): every text string redacted, every label
    checked. Both results carry only cleaned strings. Raises InvalidRunRecord naming the first
    offending field; never a partial result.
    """
    if isinstance(raw, (bytes, str)):
        # Strict JSON (docs/http-api.md, "Bad input"): NaN, infinities, lone surrogates,
        # nesting past the limit and a leading BOM are refused naming the field.
        data = strictjson.loads(
            raw, root="<record>", max_bytes=MAX_RECORD_BYTES, error=InvalidRunRecord
        )
    else:
        data = dict(raw)
        strictjson.check_value(data, root="<record>", error=InvalidRunRecord)
    if not isinstance(data, dict):
        raise InvalidRunRecord("<record>", type(data).__name__, "must be a JSON object")
    # The ingress boundary: text redacted and labels checked before anything looks further.
    data = clean_run_record(data)
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(data), key=_relevance)
    if error is not None:
        field = _field(error)
        value = error.instance
        if error.validator in ("required", "additionalProperties"):
            value = None if error.validator == "required" else "(present)"
        raise InvalidRunRecord(field, value, _reason(error))
    return from_validated(data), data


def _relevance(error: ValidationError) -> tuple[int, int]:
    # Prefer the deepest error: it names the precise field rather than a parent object.
    return (len(error.path), 0)
