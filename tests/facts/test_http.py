"""The facts API of a real ``fleetmem serve`` over HTTP on 127.0.0.1 (seed 003 S18, NFR-6)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fleetmem.core.facts import FORGET_ALL_UNTOUCHED
from tests.conftest import write_config
from tests.facts.conftest import VECTORS_OFF
from tests.surfaces.test_http import Daemon


@pytest.fixture
def api(home: Path) -> Iterator[Daemon]:
    write_config(home, VECTORS_OFF)
    d = Daemon(home)
    yield d
    d.stop()


def test_the_facts_api_round_trip(api: Daemon) -> None:
    c = api.client
    assert c.get("/api/v1/facts").json()["facts"] == []
    r = c.post("/api/v1/facts", json={"body": "Use Decimal for money.", "kind": "constraint"})
    assert r.status_code == 201, r.text
    fact = r.json()["fact"]
    same = c.post(
        "/api/v1/facts",
        json={"body": "Tag from main.", "idempotency_key": "k"},
    )
    again = c.post(
        "/api/v1/facts", json={"body": "Tag from main."}, headers={"Idempotency-Key": "k"}
    )
    assert (same.status_code, again.status_code) == (201, 200)
    assert again.json()["fact"]["id"] == same.json()["fact"]["id"]
    dup = c.post("/api/v1/facts", json={"body": "use decimal for money"})
    assert dup.status_code == 409
    assert dup.json()["error"] == {
        "code": "duplicate_fact",
        "message": dup.json()["error"]["message"],
        "summary": f"already remembered as {fact['id']} (active)",
        "existing": fact["id"],
    }
    listed = c.get("/api/v1/facts", params={"limit": 1}).json()
    assert len(listed["facts"]) == 1 and listed["next_cursor"]
    more = c.get("/api/v1/facts", params={"limit": 1, "cursor": listed["next_cursor"]}).json()
    assert [f["id"] for f in more["facts"]] == [fact["id"]]
    hits = c.get("/api/v1/facts/search", params={"q": "decimal"}).json()
    assert hits["degraded"] == "embeddings_unavailable"
    assert [h["fact"]["id"] for h in hits["hits"]] == [fact["id"]]
    edited = c.patch(f"/api/v1/facts/{fact['id']}", json={"body": "Use Decimal for all money."})
    assert edited.json()["fact"]["revision"] == 2
    assert c.post(f"/api/v1/facts/{fact['id']}/pin").json()["pinned"] is True
    assert c.delete(f"/api/v1/facts/{fact['id']}/pin").json()["pinned"] is False
    review = c.post(f"/api/v1/facts/{fact['id']}/review", json={"action": "evidence"})
    assert review.json()["status"] == "evidence"
    wrong = c.post(f"/api/v1/facts/{fact['id']}/review", json={"action": "reject"})
    assert wrong.status_code == 409 and wrong.json()["error"]["code"] == "invalid_transition"
    forgot = c.delete(f"/api/v1/facts/{fact['id']}").json()
    assert forgot["fact"]["status"] == "forgotten"
    assert c.post(f"/api/v1/facts/{fact['id']}/restore").json()["status"] == "evidence"
    history = c.get(f"/api/v1/facts/{fact['id']}/history").json()
    assert [e["action"] for e in history["entries"]] == [
        "create",
        "edit",
        "pin",
        "unpin",
        "review:evidence",
        "forget",
        "restore",
    ]
    assert c.get(f"/api/v1/facts/{fact['id']}/votes").json()["votes"] == []
    assert c.get(f"/api/v1/facts/{fact['id']}").json()["status"] == "evidence"
    assert c.get("/api/v1/facts/counts").json()["live"] == 2
    assert c.get("/api/v1/facts/offered", params={"run_id": "run-1"}).json()["offered"] == []


def test_bad_input_unknown_ids_and_forget_all(api: Daemon) -> None:
    c = api.client
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0" * 2
    r = c.post("/api/v1/facts", json={"body": f"token {secret}"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "body"
    assert secret not in r.text
    assert c.post("/api/v1/facts", json={"body": "x", "colour": "red"}).status_code == 400
    assert c.post("/api/v1/facts", json={"body": 5}).status_code == 400
    assert c.post("/api/v1/facts", content=b"[1]").status_code == 400
    missing = c.get("/api/v1/facts/f_0123456789abcdef")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_fact"
    assert c.delete("/api/v1/facts/f_nope").status_code == 404
    c.post("/api/v1/facts", json={"body": "Keep me."})
    preview = c.get("/api/v1/facts/forget-all").json()
    assert preview == {"live": 1, "untouched": FORGET_ALL_UNTOUCHED, "confirm": "FORGET ALL"}
    assert c.post("/api/v1/facts/forget-all", json={"confirm": "yes"}).status_code == 400
    done = c.post("/api/v1/facts/forget-all", json={"confirm": "FORGET ALL"})
    assert done.json()["forgotten"] == 1
    for _ in range(2):
        c.post("/api/v1/facts/forget-all", json={"confirm": "FORGET ALL"})
    limited = c.post("/api/v1/facts/forget-all", json={"confirm": "FORGET ALL"})
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) > 3000
    error = limited.json()["error"]
    assert error["code"] == "rate_limited"
    # The message keeps its context for scripts; the summary is for a person reading a page.
    assert "retry_after=" in error["message"] and "user=" in error["message"]
    assert "=" not in error["summary"] and error["summary"].endswith("seconds.")
    assert error["summary"].startswith("At most 3 forget-alls per hour per user. Try again in ")


def test_s18_another_workspaces_fact_is_a_404_not_a_403(api: Daemon, home: Path) -> None:
    from fleetmem.service.bootstrap import build
    from tests.facts.conftest import ALICE

    app = build(home, {"HOME": str(home.parent)})
    try:
        theirs = app.facts.in_workspace("acme").add("Acme ships on Mondays.", actor=ALICE).fact
    finally:
        app.close()
    for method, path in [
        ("GET", f"/api/v1/facts/{theirs.id}"),
        ("GET", f"/api/v1/facts/{theirs.id}/history"),
        ("DELETE", f"/api/v1/facts/{theirs.id}"),
        ("POST", f"/api/v1/facts/{theirs.id}/pin"),
        ("PUT", f"/api/v1/facts/{theirs.id}/scope"),
    ]:
        body = {"scope": "agent:research"} if path.endswith("/scope") else None
        r = api.client.request(method, path, json=body)
        assert r.status_code == 404, (method, path, r.text)
    assert api.client.get("/api/v1/facts").json()["facts"] == []


def test_a_facts_scope_changes_through_the_api(api: Daemon) -> None:
    c = api.client
    fact = c.post("/api/v1/facts", json={"body": "Deploy on Tuesdays."}).json()["fact"]
    url = f"/api/v1/facts/{fact['id']}/scope"
    limited = c.put(url, json={"scope": "agent:outreach"})
    assert limited.status_code == 200, limited.text
    assert limited.json()["scope"] == "agent:outreach"
    assert c.get(f"/api/v1/facts/{fact['id']}").json()["scope"] == "agent:outreach"
    history = c.get(f"/api/v1/facts/{fact['id']}/history").json()["entries"]
    assert [e["action"] for e in history] == ["create", "scope"]
    assert history[1]["after"]["scope"] == "agent:outreach"
    bad = c.put(url, json={"scope": "agent:Not A Name"})
    assert bad.status_code == 400 and "scope" in bad.json()["error"]["message"]
    assert c.put(url, json={}).status_code == 400
    assert c.put(url, json={"scope": "workspace", "extra": 1}).status_code == 400
    c.delete(f"/api/v1/facts/{fact['id']}")
    assert c.put(url, json={"scope": "workspace"}).status_code == 404  # forgotten
