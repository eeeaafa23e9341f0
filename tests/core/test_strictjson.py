"""core/strictjson: each refusal names the field path, and a valid document parses as json."""

from __future__ import annotations

import json
import math
import random
import string
from typing import Any

import pytest

from fleetmem.core import strictjson
from fleetmem.errors import InvalidInput


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))


def _refusal(raw: str | bytes, **kw: Any) -> InvalidInput:
    with pytest.raises(InvalidInput) as info:
        strictjson.loads(raw, **kw)
    return info.value


def test_a_valid_document_parses_as_the_json_module_does(rng: random.Random) -> None:
    doc = {
        _word(rng): [rng.randint(-(2**62), 2**62), rng.random(), _word(rng), None, True],
        _word(rng): {_word(rng): "é ✓ " + _word(rng)},
    }
    text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
    assert strictjson.loads(text) == json.loads(text)
    assert strictjson.loads(text.encode()) == json.loads(text)


@pytest.mark.parametrize("spelling", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_non_finite_numbers_are_refused_naming_the_field(spelling: str, rng: random.Random) -> None:
    key, inner = _word(rng), _word(rng)
    error = _refusal(f'{{"{key}": {{"{inner}": [1, {spelling}]}}}}')
    assert error.field == f"{key}.{inner}[1]", error.field
    assert "finite" in error.reason


def test_integers_past_64_bits_surrogates_and_repeated_keys_are_refused(rng: random.Random) -> None:
    key = _word(rng)
    big = 2**63 + rng.randint(0, 2**20)
    assert _refusal(f'{{"{key}": {big}}}').field == key
    assert strictjson.loads(f'{{"{key}": {2**63 - 1}}}') == {key: 2**63 - 1}
    surrogate = f"\\u{rng.randint(0xD800, 0xDFFF):04x}"
    error = _refusal(f'{{"{key}": "{_word(rng)}{surrogate}"}}')
    assert error.field == key and "surrogate" in error.reason
    # A surrogate pair is one character, not a refusal.
    assert strictjson.loads('{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}
    error = _refusal(f'{{"{key}": 1, "{key}": 2}}')
    assert error.field == key and "twice" in error.reason


def test_depth_size_bom_and_bytes_are_bounded_at_the_document(rng: random.Random) -> None:
    depth = strictjson.MAX_DEPTH + rng.randint(1, 40)
    error = _refusal("[" * depth + "]" * depth)
    assert "nested deeper" in error.reason
    shallow = strictjson.MAX_DEPTH - 1
    assert strictjson.loads("[" * shallow + "]" * shallow) is not None
    limit = rng.randint(16, 256)
    error = _refusal('"' + "x" * limit + '"', max_bytes=limit, root="<record>")
    assert error.field == "<record>" and "larger than the limit" in error.reason
    assert "byte order mark" in _refusal("\ufeff{}").reason
    assert "UTF-8" in _refusal(b'{"a": "\xc0\xaf"}').reason


def test_check_value_applies_the_same_rules_to_decoded_values(rng: random.Random) -> None:
    key = _word(rng)
    with pytest.raises(InvalidInput) as info:
        strictjson.check_value({key: [math.nan]}, root="arguments")
    assert info.value.field == f"{key}[0]"
    with pytest.raises(InvalidInput):
        strictjson.check_value({key: "\ud800"})
    strictjson.check_value({key: [1, 2.5, "fine"]})


def test_finite_turns_non_finite_numbers_into_null_anywhere() -> None:
    value = {"a": [math.inf, {"b": -math.inf, "c": math.nan}], "d": 1.5}
    assert strictjson.finite(value) == {"a": [None, {"b": None, "c": None}], "d": 1.5}
