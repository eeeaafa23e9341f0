"""core/ingress.py's walkers: every string and key visited, depth bounded, labels by path."""

from __future__ import annotations

import random

import pytest

from fleetmem.core.ingress import MAX_DEPTH, clean_payload, clean_run_record
from fleetmem.errors import InvalidInput, InvalidRunRecord
from tests.ingress.corpus import samples
from tests.ingress.schema_walk import base_record


def test_a_payload_is_cleaned_in_every_string_and_key() -> None:
    for sample in samples(random.Random()):
        payload = {
            "session_id": "abc",
            f"key-{sample.text}": [{"deep": {"deeper": f"x {sample.text} \u202ey"}}],
            "n": 3,
            "ok": True,
            "none": None,
        }
        cleaned = clean_payload(payload)
        text = repr(cleaned)
        assert all(f not in text for f in sample.fragments), text
        assert "\u202e" not in text and cleaned["n"] == 3 and cleaned["ok"] is True


def test_nesting_past_the_bound_is_refused_not_recursed() -> None:
    deep: object = "leaf"
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(InvalidInput, match="nests deeper"):
        clean_payload({"x": deep})
    record = base_record("r")
    record["sessions"][0]["events"][2]["args"] = deep
    with pytest.raises(InvalidRunRecord, match="nests deeper"):
        clean_run_record(record)


def test_a_record_keeps_valid_labels_and_non_strings_untouched() -> None:
    record = base_record("run-1")
    cleaned = clean_run_record(record)
    assert cleaned == record  # nothing to redact, every label valid: the same record


def test_an_unknown_field_is_cleaned_as_text_by_default() -> None:
    [sample] = samples(random.Random())[:1]
    record = base_record("run-1")
    record["a_field_added_later"] = f"note {sample.text}"
    cleaned = clean_run_record(record)
    assert sample.secret not in cleaned["a_field_added_later"]
    assert "[REDACTED]" in cleaned["a_field_added_later"]
