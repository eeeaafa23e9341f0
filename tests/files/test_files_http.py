"""The context-file API of a real ``fleetmem serve`` on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.files.conftest import corpus
from tests.surfaces.test_http import VECTORS_OFF, Daemon


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home: Path = tmp_path_factory.mktemp("files-http")
    write_config(home, VECTORS_OFF)
    d = Daemon(home)
    yield d
    d.stop()


def test_save_show_and_a_stale_save_answers_409_with_both_texts(daemon: Daemon) -> None:
    c = daemon.client
    r = c.put("/api/v1/files/glossary", json={"text": "invoice: a bill\n", "base_revision": 0})
    assert r.status_code == 200, r.text
    assert r.json()["revision"] == 1 and r.json()["updated_by"] == "user:api"
    r = c.put(
        "/api/v1/files/glossary",
        json={"text": "invoice: mine\n", "base_revision": 0, "user": "dev"},
    )
    assert r.status_code == 409
    body = r.json()
    assert body["error"]["code"] == "stale_revision"
    assert body["error"]["current_revision"] == 1 and body["error"]["changed_by"] == "user:api"
    assert body["yours"] == "invoice: mine\n"
    assert body["current"]["body"] == "invoice: a bill\n"
    assert "-invoice: a bill" in body["diff"] and "+invoice: mine" in body["diff"]
    shown = c.get("/api/v1/files/glossary").json()
    assert shown["body"] == "invoice: a bill\n" and shown["meter"]["state"] == "on_demand"


def test_agent_files_notebooks_report_and_context(daemon: Daemon) -> None:
    c = daemon.client
    notes = corpus()["rtl_indic.md"] * 30
    r = c.put(
        "/api/v1/files/notes",
        params={"agent": "research-agent"},
        json={"text": notes, "base_revision": 0, "user": "marina"},
    )
    assert r.status_code == 200, r.text
    meter = r.json()["meter"]
    assert meter["state"] == "over" and meter["used"] == 1500 and meter["skipped"]["chars"] > 0
    r = c.put(
        "/api/v1/files/notebook",
        params={"repo": "github.com/acme/api"},
        json={"text": corpus()["ops.sh"], "base_revision": 0},
    )
    assert r.status_code == 200, r.text
    preview = c.get(
        "/api/v1/files/notes", params={"agent": "research-agent", "preview": "true"}
    ).json()["preview"]
    assert "Skipped — the agent never sees this" in preview
    report = c.get(
        "/api/v1/agents/research-agent/context-report", params={"repo": "github.com/acme/api"}
    ).json()
    segments = {s["key"]: s for s in report["segments"]}
    assert segments["notes"]["used"] == 1500 and segments["notes"]["state"] == "over"
    assert segments["notebook"]["used"] > 0
    context = c.get(
        "/api/v1/agents/research-agent/context", params={"repo": "github.com/acme/api"}
    ).json()
    assert corpus()["ops.sh"] in context["text"] and context["total"] <= 17_000
    ask = c.get("/api/v1/files/notes/ask", params={"agent": "research-agent"}).json()
    assert ask["message"] == "@research-agent update your Notes file: "
    assert ask["attachment"]["text"] == preview
    history = c.get("/api/v1/files/notes/revisions", params={"agent": "research-agent"}).json()
    assert [h["revision"] for h in history["revisions"]] == [1, 0]
    listing = c.get("/api/v1/files").json()
    assert listing["agents"] == ["research-agent"]
    assert listing["notebooks"] == ["github.com/acme/api"]


def test_mode_restore_activity_and_errors(daemon: Daemon) -> None:
    c = daemon.client
    assert c.put("/api/v1/files/people/mode", json={"mode": "every_run"}).status_code == 200
    r = c.put("/api/v1/files/roster/mode", json={"mode": "every_run"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "cap_reached"
    assert "Switch one of About you, Voice or People" in r.json()["error"]["message"]
    c.put("/api/v1/files/voice", json={"text": "one\n", "base_revision": 0})
    c.put("/api/v1/files/voice", json={"text": "two\n", "base_revision": 1})
    r = c.post("/api/v1/files/voice/revisions/1/restore", json={"user": "marina"})
    assert r.status_code == 200 and r.json()["revision"] == 3
    assert c.get("/api/v1/files/voice/revisions/2").json()["body"] == "two\n"
    activity = c.get("/api/v1/context-files/activity").json()["activity"]
    assert activity[0]["action"] == "restore" and activity[0]["actor"] == "user:marina"
    # Errors name the field; unknown revisions and files are 404 / 400.
    r = c.put("/api/v1/files/voice", json={"text": "x\u202ey", "base_revision": 3})
    assert r.status_code == 400 and r.json()["error"]["field"] == "text"
    secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    r = c.put("/api/v1/files/voice", json={"text": secret, "base_revision": 3})
    assert r.status_code == 400 and secret not in r.text
    assert c.put("/api/v1/files/voice", json={"text": "x"}).status_code == 400
    assert c.put("/api/v1/files/voice", json={"txt": "x", "base_revision": 3}).status_code == 400
    assert c.get("/api/v1/files/voice/revisions/99").status_code == 404
    assert c.get("/api/v1/files/handbook").status_code == 400
    assert c.get("/api/v1/runs/unknown/context-loads").json() == {"loads": []}
