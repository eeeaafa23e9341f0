"""Episode summaries against a real local HTTP server speaking the OpenAI wire format."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fleetmem.errors import ConfigError
from fleetmem.service.summaries import (
    INPUT_MAX_CHARS,
    MAX_OUTPUT_TOKENS,
    SUMMARY_MAX_CHARS,
    UNCONFIGURED,
    Summarizer,
    SummaryResult,
    make_summarizer,
    parse_answer,
)
from tests.fakes.openai_server import DEFAULT_SUMMARY, FakeOpenAI

DEADLINE_S = 1.0
#: How late a fallback may come back: thread start-up and scheduling, not another round trip.
MARGIN_S = 0.35
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # 36 characters after ghp_


@pytest.fixture
def summarizer(fake_openai: FakeOpenAI) -> Iterator[Summarizer]:
    with Summarizer(fake_openai.base_url, "utility-mini", "sk-util", deadline_s=DEADLINE_S) as s:
        yield s


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_good_answer_is_the_summary(summarizer: Summarizer) -> None:
    assert summarizer.summarize("run text") == SummaryResult(DEFAULT_SUMMARY, "ok", "ok")


def test_the_request_is_one_small_deterministic_chat_completion(
    fake_openai: FakeOpenAI, summarizer: Summarizer
) -> None:
    summarizer.summarize("the agent ran make test")
    (request,) = fake_openai.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-util"
    body = request.json
    assert body["model"] == "utility-mini"
    assert body["max_tokens"] == MAX_OUTPUT_TOKENS == 128
    assert body["temperature"] == 0
    assert "tools" not in body
    system, user = body["messages"]
    assert system["role"] == "system"
    assert '{"summary"' in system["content"]
    assert "280" in system["content"]
    assert user == {"role": "user", "content": "the agent ran make test"}


def test_a_redaction_marker_cannot_push_the_summary_past_280(
    fake_openai: FakeOpenAI, summarizer: Summarizer
) -> None:
    # "token=abc12345" (14 chars) redacts to "token=[REDACTED]" (16): a full-length summary
    # that ends with it grows past the cap and must be cut back to it.
    tail = " token=abc12345"
    fake_openai.chat_content = json.dumps({"summary": "z" * (280 - len(tail)) + tail})
    result = summarizer.summarize("run text")
    assert result.outcome == "ok"
    assert result.summary is not None
    assert len(result.summary) == SUMMARY_MAX_CHARS
    assert "abc12345" not in result.summary


def test_input_is_capped_at_8000_characters(
    fake_openai: FakeOpenAI, summarizer: Summarizer
) -> None:
    text = "".join(f"{i:05d}," for i in range(4000))  # 24,000 characters
    summarizer.summarize(text)
    sent = fake_openai.requests[0].json["messages"][1]["content"]
    assert INPUT_MAX_CHARS == 8000
    assert sent == text[:8000]


def test_a_secret_in_the_answer_is_redacted(
    fake_openai: FakeOpenAI, summarizer: Summarizer
) -> None:
    fake_openai.chat_content = json.dumps({"summary": f"Rotated the token {GITHUB_TOKEN} in CI."})
    result = summarizer.summarize("run text")
    assert result.outcome == "ok"
    assert result.summary is not None
    assert GITHUB_TOKEN not in result.summary
    assert "[REDACTED]" in result.summary
    assert result.summary.startswith("Rotated the token")


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("error_503", "http_error"),
        ("broken_json", "bad_json"),
        ("wrong_shape", "bad_shape"),
        ("oversized_summary", "too_long"),
    ],
)
def test_bad_answers_fall_back(
    fake_openai: FakeOpenAI, summarizer: Summarizer, mode: str, reason: str
) -> None:
    fake_openai.mode = mode  # type: ignore[assignment]
    assert summarizer.summarize("run text") == SummaryResult(None, "fallback", reason)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["slow", "drip"])
def test_a_slow_or_dripping_model_falls_back_within_the_deadline(
    fake_openai: FakeOpenAI, summarizer: Summarizer, mode: str
) -> None:
    fake_openai.mode = mode  # type: ignore[assignment]
    fake_openai.slow_s = 3.0
    started = time.monotonic()
    result = summarizer.summarize("run text")
    elapsed = time.monotonic() - started
    assert result == SummaryResult(None, "fallback", "timeout")
    assert elapsed < DEADLINE_S + MARGIN_S
    # A drip is answering, just too slowly: the deadline, not a read timeout, must stop it.
    assert elapsed > DEADLINE_S - 0.1


def test_nothing_listening_is_a_connect_error() -> None:
    with Summarizer(f"http://127.0.0.1:{_free_port()}", "m", None, deadline_s=DEADLINE_S) as s:
        assert s.summarize("x") == SummaryResult(None, "fallback", "connect_error")


def test_the_url_rule_is_shared_with_embeddings(fake_openai: FakeOpenAI) -> None:
    with Summarizer(fake_openai.base_url + "/v1/", "m", None, deadline_s=DEADLINE_S) as s:
        assert s.summarize("x").outcome == "ok"
    assert fake_openai.requests[0].path == "/v1/chat/completions"
    assert "authorization" not in fake_openai.requests[0].headers


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('  {"summary": "Fixed it."}  \n', SummaryResult("Fixed it.", "ok", "ok")),
        ('```json\n{"summary": "Fixed it."}\n```', SummaryResult("Fixed it.", "ok", "ok")),
        ('```\n{"summary": "Fixed it."}\n```', SummaryResult("Fixed it.", "ok", "ok")),
        ('{"summary": "  padded  "}', SummaryResult("padded", "ok", "ok")),
        ('{"summary": "' + "y" * SUMMARY_MAX_CHARS + '"}', SummaryResult("y" * 280, "ok", "ok")),
        ('{"summary": "' + "y" * 281 + '"}', SummaryResult(None, "fallback", "too_long")),
        ("The agent fixed the test.", SummaryResult(None, "fallback", "bad_json")),
        ('{"summary": 42}', SummaryResult(None, "fallback", "bad_shape")),
        ('{"summary": ""}', SummaryResult(None, "fallback", "bad_shape")),
        ('{"summary": "ok", "mood": "happy"}', SummaryResult(None, "fallback", "bad_shape")),
        ('["summary"]', SummaryResult(None, "fallback", "bad_shape")),
        ('{"summary": "\\u200b\\u0007"}', SummaryResult(None, "fallback", "bad_shape")),
    ],
)
def test_content_rules(
    fake_openai: FakeOpenAI, summarizer: Summarizer, content: str, expected: SummaryResult
) -> None:
    fake_openai.chat_content = content
    assert summarizer.summarize("run text") == expected


@given(st.binary(max_size=400))
def test_parse_answer_never_raises_on_arbitrary_bytes(body: bytes) -> None:
    result = parse_answer(body)
    assert result.outcome in ("ok", "fallback")
    assert (result.summary is None) == (result.outcome == "fallback")


@given(st.text(max_size=400))
def test_parse_answer_never_raises_on_arbitrary_content(content: str) -> None:
    envelope = {"choices": [{"message": {"role": "assistant", "content": content}}]}
    result = parse_answer(json.dumps(envelope).encode())
    if result.summary is not None:
        assert 1 <= len(result.summary) <= SUMMARY_MAX_CHARS


def test_absurdly_deep_json_is_bad_json() -> None:
    assert parse_answer(b"[" * 100_000) == SummaryResult(None, "fallback", "bad_json")
    envelope = {"choices": [{"message": {"content": "[" * 100_000}}]}
    assert parse_answer(json.dumps(envelope).encode()).reason == "bad_json"


def test_unconfigured_summarizer_answers_without_calling() -> None:
    assert Summarizer(None, "m", None).summarize("x") == UNCONFIGURED
    assert Summarizer("http://model.test", None, None).summarize("x") == UNCONFIGURED
    assert SummaryResult(None, "fallback", "unconfigured") == UNCONFIGURED


def test_a_closed_summarizer_falls_back(fake_openai: FakeOpenAI) -> None:
    summarizer = Summarizer(fake_openai.base_url, "m", None)
    summarizer.close()
    assert summarizer.summarize("x").outcome == "fallback"
    assert fake_openai.requests == []


def test_make_summarizer_when_off_or_unconfigured() -> None:
    assert make_summarizer(False, "http://model.test", "mini", None, {}) is None
    assert make_summarizer(True, None, "mini", None, {}) is None
    assert make_summarizer(True, "http://model.test", None, None, {}) is None
    assert make_summarizer(True, "http://model.test", "", None, {}) is None


def test_make_summarizer_reads_the_key_from_the_named_variable(fake_openai: FakeOpenAI) -> None:
    environ = {"UTILITY_KEY": "sk-utility-secret"}
    summarizer = make_summarizer(True, fake_openai.base_url, "mini", "UTILITY_KEY", environ)
    assert summarizer is not None and summarizer.configured
    with summarizer:
        assert summarizer.summarize("x").outcome == "ok"
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-utility-secret"


def test_make_summarizer_refuses_an_unset_key_variable() -> None:
    with pytest.raises(ConfigError, match="UTILITY_KEY"):
        make_summarizer(True, "http://model.test", "mini", "UTILITY_KEY", {})
