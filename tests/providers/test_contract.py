"""The contract's schemas and response checks (seed 000 REQ-3)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.validators import validator_for

from fleetmem.core.episode import render_text
from fleetmem.providers import contract
from fleetmem.providers.conformance import canonical_requests, synthetic_episode
from tests.surfaces.cli_helpers import run_cli


def test_every_schema_is_a_valid_json_schema() -> None:
    for tool, directions in contract.all_schemas().items():
        assert tool in contract.TOOLS
        for body in directions.values():
            validator_for(body).check_schema(body)


def test_canonical_requests_satisfy_our_own_input_schemas() -> None:
    episode = synthetic_episode("fmc0123456789abcdef", datetime(2026, 11, 28, tzinfo=UTC))
    for tool, requests in canonical_requests("fmc0123456789abcdef", episode).items():
        for request in requests:
            assert contract.schema_problems(tool, "input", request) == [], (tool, request)
    assert render_text(episode).count("fmc0123456789abcdef") >= 1


def test_requests_outside_the_bounds_fail_the_input_schemas() -> None:
    ok = {"query": "q", "scope": ["project:github.com/acme/api"], "limit": 8}
    assert contract.schema_problems("memory_recall", "input", ok) == []
    for bad, where in [
        ({**ok, "query": "x" * 513}, "query: maxLength"),
        ({**ok, "scope": []}, "scope: minItems"),
        ({**ok, "scope": ["project:a", "project:b", "project:c"]}, "scope: maxItems"),
        ({**ok, "limit": 21}, "limit: maximum"),
        ({**ok, "limit": 0}, "limit: minimum"),
        ({**ok, "paths": ["p"] * 21}, "paths: maxItems"),
    ]:
        assert where in contract.schema_problems("memory_recall", "input", bad)


def test_an_out_of_bounds_item_is_invalid_not_a_failed_response() -> None:
    items = [
        {"id": "a", "text": "fine", "score": 0.5},
        {"id": "b", "text": "x" * 5000, "score": 0.4},
        {"id": "c" * 129, "text": "long id"},
        {"id": "d", "text": "nan", "score": math.nan},
        {"id": "e", "text": "inf", "score": math.inf},
        {"id": 7, "text": "wrong type"},
        "not an object",
        {"id": "f", "text": "no score"},
    ]
    checked = contract.check_response("memory_recall", {"items": items})
    assert checked.invalid_items == {1, 2, 3, 4, 5, 6}
    assert "items/1/text: maxLength" in checked.problems


@pytest.mark.parametrize(
    ("tool", "data", "where"),
    [
        ("memory_recall", {"items": "nope"}, "items: type"),
        ("memory_recall", {}, "<root>: required"),
        ("memory_recall", {"items": [], "degraded": 3}, "degraded: type"),
        ("memory_record_episode", {"ids": []}, "ids: minItems"),
        ("memory_record_episode", {"ids": ["x"] * 33}, "ids: maxItems"),
        ("memory_record_episode", {"ids": ["i" * 129]}, "ids/0: maxLength"),
        ("memory_forget", {"forgotten": "yes"}, "forgotten: type"),
        ("memory_contract", {"contract": "1", "provider": {"name": "p", "version": ""}}, "type"),
    ],
)
def test_a_response_failing_its_schema_is_a_provider_error(
    tool: str, data: object, where: str
) -> None:
    with pytest.raises(contract.ContractViolation) as info:
        contract.check_response(tool, data)
    assert where in info.value.reason
    # Reasons name places and keywords, never values (a value may be provider text).
    assert "nope" not in info.value.reason and "yes" not in info.value.reason


def test_payload_prefers_json_text_and_falls_back_to_structured() -> None:
    text = json.dumps({"items": [{"id": "a", "text": "t", "score": math.nan}]})
    structured = {"items": [{"id": "a", "text": "t", "score": None}]}
    got = contract.payload_of("memory_recall", is_error=False, structured=structured, texts=[text])
    assert math.isnan(got["items"][0]["score"])  # the serializer's null would hide it
    got = contract.payload_of(
        "memory_recall", is_error=False, structured=structured, texts=["a summary, not JSON"]
    )
    assert got == structured
    with pytest.raises(contract.ContractViolation):
        contract.payload_of("memory_recall", is_error=False, structured=None, texts=["[1, 2]"])
    with pytest.raises(contract.ContractViolation):
        contract.payload_of("memory_recall", is_error=True, structured=structured, texts=[text])


def test_provider_schema_prints_the_shipped_schemas(home: Path) -> None:
    every = json.loads(run_cli(home, "provider", "schema").stdout)
    assert every["contract"] == 1
    assert list(every["tools"]) == list(contract.TOOLS)
    assert every["tools"]["memory_recall"]["output"] == dict(
        contract.schema("memory_recall", "output")
    )
    one = json.loads(
        run_cli(home, "provider", "schema", "memory_forget", "--direction", "input").stdout
    )
    assert one["required"] == ["id"]
    bad = run_cli(home, "provider", "schema", "memory_delete", check=False)
    assert bad.returncode == 2 and "memory_delete" in bad.stderr


def test_a_tool_error_carries_the_providers_redacted_message() -> None:
    import secrets

    from fleetmem.providers.contract import ContractViolation, payload_of

    password = "Pw" + secrets.token_urlsafe(12)
    texts = [f"store refused the write:\n  postgres://app:{password}@db.internal/mem", " "]
    with pytest.raises(ContractViolation) as caught:
        payload_of("memory_record_episode", is_error=True, structured=None, texts=texts)
    message = str(caught.value)
    assert "store refused the write: postgres://app:[REDACTED]@db.internal/mem" in message
    assert password not in message and "\n" not in message
    with pytest.raises(ContractViolation, match="no message"):
        payload_of("memory_recall", is_error=True, structured=None, texts=[])


_ANY_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
)


def _around(low: object, high: object, default: tuple[int, int]) -> st.SearchStrategy[int]:
    """Sizes at, just inside and just past each bound."""
    lo = low if isinstance(low, int) else default[0]
    hi = high if isinstance(high, int) else default[1]
    edges = {max(0, n) for b in (lo, hi) for n in (b - 1, b, b + 1)}
    return st.sampled_from(sorted(edges)) | st.integers(max(0, lo - 1), min(hi + 1, lo + 8))


def _from_schema(
    body: Mapping[str, Any], root: Mapping[str, Any], *, strict: bool = False
) -> st.SearchStrategy[object]:
    """Values following ``body`` with every bound probed, and (unless ``strict``) one in ten
    of any other kind: what a provider gets right, nearly right and wrong."""
    if "$ref" in body:
        name = str(body["$ref"]).rsplit("/", 1)[-1]
        return st.deferred(lambda: _from_schema(root["$defs"][name], root, strict=strict))
    if "enum" in body:
        right: st.SearchStrategy[object] = st.sampled_from(list(body["enum"]))
        return right | _ANY_SCALAR
    kinds = body.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    options: list[st.SearchStrategy[object]] = []
    for kind in kinds:
        if kind == "object":
            props = body.get("properties") or {}
            fields = {k: _from_schema(v, root) for k, v in props.items()}
            required = set(body.get("required") or ())
            options.append(
                st.fixed_dictionaries(
                    {k: v for k, v in fields.items() if k in required},
                    optional={
                        **{k: v for k, v in fields.items() if k not in required},
                        "unexpected": _ANY_SCALAR,
                    },
                )
                | st.dictionaries(st.sampled_from(sorted(props) or ["k"]), _ANY_SCALAR, max_size=3)
            )
        elif kind == "array":
            # Long arrays of items each nearly right would hardly ever be right as a whole.
            item = _from_schema(body.get("items") or {}, root) | _from_schema(
                body.get("items") or {}, root, strict=True
            )
            sizes = _around(body.get("minItems"), body.get("maxItems"), (0, 4))
            options.append(
                sizes.flatmap(lambda n, item=item: st.lists(item, min_size=n, max_size=n))
            )
        elif kind == "string":
            sizes = _around(body.get("minLength"), body.get("maxLength"), (0, 8))
            text = sizes.map(lambda n: "x" * n)
            if "pattern" in body:
                shaped = st.from_regex(body["pattern"], fullmatch=True)
                text = st.one_of(shaped, shaped, shaped, text)
            options.append(text | st.text(max_size=10))
        elif kind in ("integer", "number"):
            low, high = body.get("minimum"), body.get("maximum")
            near = _around(low, high, (-2, 40))
            options.append(near | near.map(float) | st.floats(allow_nan=True))
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "null":
            options.append(st.none())
    right = st.one_of(options) if options else _ANY_SCALAR
    return right if strict else st.one_of(*[right] * 9, _ANY_SCALAR)


@pytest.mark.parametrize("direction", contract.DIRECTIONS)
@pytest.mark.parametrize("tool", contract.TOOLS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_compiled_schema_passes_only_what_jsonschema_passes(
    tool: str, direction: str, data: st.DataObject
) -> None:
    """check_response skips jsonschema for an answer the compiled schema passes, so the
    compiled schema must never pass one that jsonschema would fault."""
    from fastjsonschema import JsonSchemaValueException

    body = contract.schema(tool, direction)
    value = data.draw(_from_schema(body, body))
    try:
        contract._passes(tool, direction)(value)
    except JsonSchemaValueException:
        return
    assert contract.schema_problems(tool, direction, value) == [], value


def test_an_answer_the_compiled_schema_passes_is_not_checked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fast path is taken (and jsonschema still names the problems of a bad answer)."""
    calls: list[str] = []
    real = contract._validator

    def counting(tool: str, direction: str) -> object:
        calls.append(tool)
        return real(tool, direction)

    monkeypatch.setattr(contract, "_validator", counting)
    good = {"items": [{"id": f"ep_{i}", "text": "t" * 1500, "score": 0.5} for i in range(20)]}
    assert contract.check_response("memory_recall", good).invalid_items == frozenset()
    assert calls == []
    bad = {"items": [*good["items"], {"id": "", "text": "t"}]}
    assert contract.check_response("memory_recall", bad).problems == ("items/20/id: minLength",)
    assert calls == ["memory_recall"]
