"""Workspaces over a real daemon (`fleetmem serve` on 127.0.0.1): every API token is bound to
one workspace and acts only there; another workspace's facts, files, proposals, activity, Tidy
up pairs, exposures and context loads do not exist for it (404, never 403); only the operator
(control.token) manages workspaces; deleting one revokes its tokens and leaves no row."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from fleetmem.service.api_tokens import MINTED_TOKENS_FILE, Tier, mint_token, token_hash
from fleetmem.service.bootstrap import build
from tests.conftest import home_store, write_config
from tests.surfaces.test_http import Daemon
from tests.workspace_fill import CONFIG, every_table, fill

REPO = "github.com/acme/api"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class World:
    daemon: Daemon
    acme: str
    home_ids: dict[str, str]
    acme_ids: dict[str, str]
    acme_control: str
    acme_read: str

    def as_acme(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        return self.daemon.client.request(
            method,
            path,
            headers=bearer(self.acme_control),
            **kwargs,  # type: ignore[arg-type]
        )


@pytest.fixture
def world(home: Path) -> Iterator[World]:
    write_config(home, CONFIG)
    app = build(home, {"HOME": str(home.parent)})
    try:
        acme = app.workspaces.create("Acme").id
        acme_ids = fill(app.in_workspace(acme), "acme")
        home_ids = fill(app, "home")
        control = mint_token(home, Tier.CONTROL, "acme-ctl", 0.0, acme)
        read = mint_token(home, Tier.READ, "acme-read", 0.0, acme)
    finally:
        app.close()
    daemon = Daemon(home)
    yield World(daemon, acme, home_ids, acme_ids, control, read)
    daemon.stop()


def test_a_token_acts_in_its_workspace_only(world: World) -> None:
    c, acme = world.daemon.client, world.as_acme
    theirs, mine = world.home_ids, world.acme_ids
    # Facts: the list, counts and search are the workspace's own.
    listed = acme("GET", "/api/v1/facts").json()
    assert {f["id"] for f in listed["facts"]} == {mine["fact"], mine["other_fact"]}
    assert all("acme" in f["body"] for f in listed["facts"])
    found = acme("GET", "/api/v1/facts/search", params={"q": "deploys tuesdays"}).json()
    assert found["hits"] and all("acme" in h["fact"]["body"] for h in found["hits"])
    # Another workspace's fact is not found, by every route that names one.
    fact = theirs["fact"]
    for method, path, body in [
        ("GET", f"/api/v1/facts/{fact}", None),
        ("PATCH", f"/api/v1/facts/{fact}", {"body": "Rewritten."}),
        ("DELETE", f"/api/v1/facts/{fact}", None),
        ("POST", f"/api/v1/facts/{fact}/restore", None),
        ("POST", f"/api/v1/facts/{fact}/pin", None),
        ("PUT", f"/api/v1/facts/{fact}/scope", {"scope": "agent:writer"}),
        ("POST", f"/api/v1/facts/{fact}/review", {"action": "confirm"}),
        ("GET", f"/api/v1/facts/{fact}/history", None),
        ("GET", f"/api/v1/facts/{fact}/votes", None),
        (
            "POST",
            "/api/v1/facts/tidy-up/keep-both",
            {"first": fact, "second": theirs["other_fact"]},
        ),
    ]:
        answer = acme(method, path, json=body) if body is not None else acme(method, path)
        assert answer.status_code == 404, (method, path, answer.text)
        assert "acme" not in answer.text and "home" not in answer.json()["error"]["message"]
    # The default workspace still has it, untouched.
    assert c.get(f"/api/v1/facts/{fact}").json()["body"].startswith("Deploys of home")
    # Files: the same name holds each workspace's own text.
    assert acme("GET", "/api/v1/files/voice").json()["body"] == "Short sentences for acme."
    assert c.get("/api/v1/files/voice").json()["body"] == "Short sentences for home."
    notes = acme("GET", "/api/v1/files/notes", params={"agent": "writer"}).json()["body"]
    assert "acme" in notes and "home" not in notes
    book = acme("GET", "/api/v1/files/notebook", params={"repo": REPO}).json()["body"]
    assert "acme notebook" in book and "home" not in book
    # Activity, Tidy up, exposures, context loads and the context report are the workspace's.
    entries = acme("GET", "/api/v1/activity", params={"limit": 200}).json()["entries"]
    assert entries and all(
        e["fact_id"] in (None, mine["fact"], mine["other_fact"]) for e in entries
    )
    assert all("home" not in (e["fact_body"] or "") for e in entries)
    files_activity = acme("GET", "/api/v1/context-files/activity").json()["activity"]
    assert files_activity and all(a["run_id"] != "run-home" for a in files_activity)
    assert acme("GET", "/api/v1/facts/tidy-up").json()["pairs"] == []
    assert (
        acme("GET", "/api/v1/facts/offered", params={"run_id": "run-home"}).json()["offered"] == []
    )
    assert acme("GET", "/api/v1/runs/run-home/context-loads").json()["loads"] == []
    context = acme("GET", "/api/v1/agents/writer/context", params={"repo": REPO}).json()
    assert "acme" in json.dumps(context) and "for home" not in json.dumps(context)
    recalled = acme("POST", "/api/v1/recall", json={"query": "deploys", "repo": REPO}).json()
    assert "Deploys of home" not in json.dumps(recalled)
    # A write lands in the token's workspace only.
    added = acme("POST", "/api/v1/facts", json={"body": "Acme ships on Fridays."})
    assert added.status_code == 201, added.text
    new_id = added.json()["fact"]["id"]
    assert c.get(f"/api/v1/facts/{new_id}").status_code == 404
    # Forget all forgets the workspace's facts, and nothing of the default one.
    live = c.get("/api/v1/facts/counts").json()["live"]
    acme("POST", "/api/v1/facts/forget-all", json={"confirm": "FORGET ALL"})
    assert acme("GET", "/api/v1/facts/counts").json()["live"] == 0
    assert c.get("/api/v1/facts/counts").json()["live"] == live


def test_workspaces_through_the_api_operator_and_tenant(world: World) -> None:
    c, acme = world.daemon.client, world.as_acme
    mine = acme("GET", "/api/v1/workspaces").json()
    assert mine["current"] == world.acme
    assert [w["id"] for w in mine["workspaces"]] == [world.acme]  # it sees its own only
    everyone = c.get("/api/v1/workspaces").json()
    assert [w["id"] for w in everyone["workspaces"]] == ["default", world.acme]
    assert everyone["current"] == "default"
    # Another workspace does not exist for a tenant token; its own may not be managed by it.
    for method, path, body in [
        ("GET", "/api/v1/workspaces/default", None),
        ("PATCH", "/api/v1/workspaces/default", {"name": "Mine now"}),
        ("GET", "/api/v1/workspaces/default/delete", None),
        ("POST", "/api/v1/workspaces/default/delete", {"confirm": "default"}),
    ]:
        answer = acme(method, path, json=body) if body is not None else acme(method, path)
        assert answer.status_code == 404, (method, path, answer.text)
    assert acme("GET", f"/api/v1/workspaces/{world.acme}").json()["current"] is True
    for method, path, body in [
        ("POST", "/api/v1/workspaces", {"name": "Sneaky"}),
        ("PATCH", f"/api/v1/workspaces/{world.acme}", {"name": "Renamed"}),
        ("POST", f"/api/v1/workspaces/{world.acme}/delete", {"confirm": "Acme"}),
    ]:
        answer = acme(method, path, json=body)
        assert answer.status_code == 403, (method, path, answer.text)
        assert "only the operator" in answer.json()["error"]["message"]
    read = c.post("/api/v1/facts", json={"body": "Nope."}, headers=bearer(world.acme_read))
    assert read.status_code == 403  # the tier still applies
    # The operator creates and renames, with errors naming the field.
    made = c.post("/api/v1/workspaces", json={"name": "Globex"})
    assert made.status_code == 201 and made.json()["name"] == "Globex"
    for bad, status, reason in [
        ({"name": ""}, 400, "must not be empty"),
        ({"name": "x" * 65}, 400, "at most 64"),
        ({"name": "Glob\u202eex"}, 400, "U+202E"),
        ({"name": 5}, 400, "must be a string"),
        ({}, 400, "is required"),
        ({"name": "GLOBEX"}, 409, "already named 'Globex'"),
        ({"name": "Аcme"}, 409, "already named 'Acme'"),  # Cyrillic А
        ({"name": "Fine", "extra": 1}, 400, "extra"),
    ]:
        answer = c.post("/api/v1/workspaces", json=bad)
        assert answer.status_code == status, (bad, answer.text)
        error = answer.json()["error"]
        assert reason in error["message"], error
        assert error.get("field") in ("name", "extra"), error
    renamed = c.patch(f"/api/v1/workspaces/{world.acme}", json={"name": "Acme Corp"})
    assert renamed.json()["name"] == "Acme Corp" and renamed.json()["id"] == world.acme
    # The acme token still works after the rename: it is bound to the id.
    assert acme("GET", "/api/v1/facts/counts").status_code == 200
    gone = c.post("/api/v1/workspaces/default/delete", json={"confirm": "default"})
    assert gone.status_code == 400 and gone.json()["error"]["field"] == "workspace"


def test_deleting_a_workspace_over_the_api(world: World) -> None:
    c, home = world.daemon.client, world.daemon.home
    preview = c.get(f"/api/v1/workspaces/{world.acme}/delete").json()
    assert preview["confirm"] == "Acme" and preview["tokens"] == ["acme-ctl", "acme-read"]
    assert preview["total_rows"] > 0 and set(preview["rows"]) == set(every_table())
    wrong = c.post(f"/api/v1/workspaces/{world.acme}/delete", json={"confirm": "FORGET ALL"})
    assert wrong.status_code == 400 and wrong.json()["error"]["field"] == "confirm"
    assert world.as_acme("GET", "/api/v1/facts/counts").status_code == 200
    done = c.post(f"/api/v1/workspaces/{world.acme}/delete", json={"confirm": "Acme"})
    assert done.status_code == 200, done.text
    assert done.json()["tokens_revoked"] == ["acme-ctl", "acme-read"]
    assert done.json()["total_rows"] == preview["total_rows"]
    refused = world.as_acme("GET", "/api/v1/facts/counts")
    assert refused.status_code == 401
    assert c.get(f"/api/v1/workspaces/{world.acme}").status_code == 404
    assert [w["id"] for w in c.get("/api/v1/workspaces").json()["workspaces"]] == ["default"]
    with home_store(home) as store:
        assert set(store.workspace_row_counts(world.acme).values()) == {0}
        assert store.workspace_get(world.acme) is None
    assert c.get("/api/v1/facts/counts").json()["live"] == 2  # the default is untouched


def test_tokens_from_before_workspaces_act_in_the_default_one(home: Path) -> None:
    write_config(home, CONFIG)
    app = build(home, {"HOME": str(home.parent)})
    fact = app.facts.add("An old fact.").fact
    app.close()
    old = "fmro_" + "o" * 43
    row = {"name": "old-ci", "tier": "read", "sha256": token_hash(old), "created_at": 1.0}
    path = home / MINTED_TOKENS_FILE
    path.write_text(json.dumps(row) + "\n")
    path.chmod(0o600)
    configured = "fmro_" + "c" * 43
    write_config(
        home,
        CONFIG + f'[server]\ntokens = [{{tier = "read", sha256 = "{token_hash(configured)}"}}]\n',
    )
    daemon = Daemon(home)
    try:
        for token in (old, configured):
            got = daemon.client.get(f"/api/v1/facts/{fact.id}", headers=bearer(token))
            assert got.status_code == 200, got.text
            listed = daemon.client.get("/api/v1/workspaces", headers=bearer(token)).json()
            assert listed["current"] == "default"
    finally:
        daemon.stop()


def test_a_configured_token_is_bound_to_its_workspace(home: Path) -> None:
    write_config(home, CONFIG)
    app = build(home, {"HOME": str(home.parent)})
    acme = app.workspaces.create("Acme").id
    app.in_workspace(acme).facts.add("Only in acme.")
    app.close()
    token = "fmc_" + "a" * 43
    write_config(
        home,
        CONFIG
        + '[server]\ntokens = [{tier = "control", sha256 = '
        + f'"{token_hash(token)}", workspace = "{acme}"}}]\n',
    )
    daemon = Daemon(home)
    try:
        listed = daemon.client.get("/api/v1/facts", headers=bearer(token)).json()["facts"]
        assert [f["body"] for f in listed] == ["Only in acme."]
        assert daemon.client.get("/api/v1/facts").json()["facts"] == []
    finally:
        daemon.stop()
