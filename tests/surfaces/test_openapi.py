"""The OpenAPI document of /api/v1 against the answers the server really sends.

A walk through every operation with real objects (an ingested run and its episode, facts, a
live run with its run token, context files with a stale save) sends each request as a
schemathesis case and checks the answer against the document: a documented status and
content type, and a body valid against the declared model. Response models forbid unknown
fields, so a view that gains a field fails here until its model says so. The random
property run is tests/surfaces/test_schemathesis.py; this one reaches the success bodies
that random ids cannot (a detail view needs an id that exists).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from schemathesis.core import NOT_SET

from fleetmem.core.facts import FORGET_ALL_PHRASE
from fleetmem.service.bootstrap import App, build
from fleetmem.surfaces.http.app import create_app
from fleetmem.surfaces.http.schemas import OPENAPI_PATH
from tests.conftest import EXAMPLE, write_config
from tests.surfaces.api_contract import CHECKS, auth_headers, send

REPO = "github.com/acme/api"
AGENT = "api-fixer"


@dataclass
class Walk:
    """Sends cases, validates answers, and remembers which operations it reached."""

    client: TestClient
    schema: schemathesis.BaseSchema
    headers: dict[str, str]
    reached: set[str] = field(default_factory=set)

    def __call__(
        self,
        method: str,
        path: str,
        expect: int,
        *,
        path_parameters: dict[str, Any] | None = None,
        query: dict[str, Any] | None = None,
        body: Any = NOT_SET,
        headers: dict[str, str] | None = None,
    ) -> Any:
        operation = self.schema[path][method]
        case = operation.Case(path_parameters=path_parameters, query=query, body=body)
        response = send(self.client, case, headers if headers is not None else self.headers)
        assert response.status_code == expect, (method, path, response.text[:400])
        case.validate_response(response, checks=CHECKS)
        self.reached.add(f"{method} {path}")
        return response.json()


@pytest.fixture
def walk(home: Path) -> Iterator[Walk]:
    write_config(home, f'[model_api]\nembedding_model = ""\n[agent.{AGENT}]\n')
    app: App = build(home, {"HOME": str(home.parent)})
    api = create_app(app)
    schema = schemathesis.openapi.from_dict(api.openapi()).include(path_regex=r"^/api/v1/")
    try:
        with TestClient(api) as client:
            yield Walk(client, schema, auth_headers(home))
    finally:
        app.close()


def test_every_operation_answers_as_documented(walk: Walk) -> None:
    _memory(walk)
    _runs(walk)
    _facts(walk)
    _files(walk)
    _workspaces(walk)
    documented = {
        f"{op.method.upper()} {op.path}"
        for op in (r.ok() for r in walk.schema.get_all_operations())
    }
    assert documented - walk.reached == set()


def _memory(walk: Walk) -> None:
    ingested = walk("POST", "/api/v1/runs", 201, body=_example())
    episode = ingested["episode_id"]
    assert walk("POST", "/api/v1/runs", 200, body=_example())["status"] == "duplicate"
    walk("GET", "/api/v1/status", 200)
    listed = walk("GET", "/api/v1/episodes", 200, query={"repo": REPO, "limit": 5})
    assert [e["episode_id"] for e in listed["episodes"]] == [episode]
    ep = {"episode_id": episode}
    detail = walk("GET", "/api/v1/episodes/{episode_id}", 200, path_parameters=ep)
    assert detail["index"] and detail["text"]
    recalled = walk("POST", "/api/v1/recall", 200, body={"query": "ledger", "repo": REPO})
    assert [i["episode_id"] for i in recalled["items"]] == [episode]
    walk("GET", "/api/v1/episodes/{episode_id}", 404, path_parameters={"episode_id": "ep-nope"})
    walk("POST", "/api/v1/recall", 400, body={"query": "ledger", "repo": REPO, "extra": 1})
    walk("DELETE", "/api/v1/episodes/{episode_id}", 200, path_parameters=ep)
    checked = walk("POST", "/api/v1/provider/check", 200, body={})
    assert checked["provider"] == "builtin" and checked["passed"] and len(checked["checks"]) == 7
    walk("POST", "/api/v1/provider/check", 404, body={"provider": "nowhere"})  # well-formed
    walk("POST", "/api/v1/provider/check", 400, body={"provider": "Not A Name"})


def _workspaces(walk: Walk) -> None:
    listed = walk("GET", "/api/v1/workspaces", 200)
    assert [w["id"] for w in listed["workspaces"]] == ["default"] and listed["current"] == "default"
    made = walk("POST", "/api/v1/workspaces", 201, body={"name": "Acme"})
    ws = {"workspace_id": made["id"]}
    walk("POST", "/api/v1/workspaces", 409, body={"name": "ACME"})
    walk("POST", "/api/v1/workspaces", 400, body={"name": ""})
    walk("GET", "/api/v1/workspaces/{workspace_id}", 200, path_parameters=ws)
    walk("GET", "/api/v1/workspaces/{workspace_id}", 404, path_parameters={"workspace_id": "no"})
    renamed = walk(
        "PATCH",
        "/api/v1/workspaces/{workspace_id}",
        200,
        path_parameters=ws,
        body={"name": "Globex"},
    )
    assert renamed["name"] == "Globex" and renamed["id"] == made["id"]
    preview = walk("GET", "/api/v1/workspaces/{workspace_id}/delete", 200, path_parameters=ws)
    assert preview["confirm"] == "Globex" and preview["total_rows"] == 0
    walk(
        "POST",
        "/api/v1/workspaces/{workspace_id}/delete",
        400,
        path_parameters=ws,
        body={"confirm": "globex"},
    )
    done = walk(
        "POST",
        "/api/v1/workspaces/{workspace_id}/delete",
        200,
        path_parameters=ws,
        body={"confirm": "Globex"},
    )
    assert done["deleted"]["id"] == made["id"]


def _runs(walk: Walk) -> None:
    opened = walk("POST", "/api/v1/runs/open", 201, body={"agent": AGENT, "repo": REPO})
    as_run = {"Authorization": f"Bearer {opened['token']}"}
    walk("POST", "/api/v1/runs/heartbeat", 200, body={"files": ["billing/x.py"]}, headers=as_run)
    caller = walk("GET", "/api/v1/caller", 200, headers=as_run)
    assert caller["run_id"] == opened["run_id"]
    walk("GET", "/api/v1/caller", 403)  # the control token is not a run token
    walk("GET", "/api/v1/runs", 200, query={"repo": REPO})
    stored = walk("GET", "/api/v1/runs/{run_id}", 200, path_parameters={"run_id": _run_id()})
    assert stored["record"] is not None and stored["sessions"]
    live = walk("GET", "/api/v1/runs/{run_id}", 200, path_parameters={"run_id": opened["run_id"]})
    assert live["live"] is not None
    presence = walk("GET", "/api/v1/presence", 200, query={"repo": REPO})
    assert presence["runs"][0]["files"] == ["billing/x.py"]
    walk("GET", "/api/v1/runs/{run_id}/context-loads", 200, path_parameters={"run_id": _run_id()})
    agent = {"agent": AGENT}
    brief = walk("GET", "/api/v1/agents/{agent}/briefing", 200, path_parameters=agent)
    assert brief["repo"] == REPO  # the agent's live run above
    walk("GET", "/api/v1/agents/{agent}/briefing", 400, path_parameters={"agent": "Bad Name!"})


def _facts(walk: Walk) -> None:
    one = {"body": "Reconcile the ledger with an explicit cutoff.", "kind": "decision"}
    added = walk("POST", "/api/v1/facts", 201, body=one)
    fid = {"fact_id": added["fact"]["id"]}
    walk("POST", "/api/v1/facts", 409, body=one)  # a duplicate names the existing fact
    walk("GET", "/api/v1/facts", 200, query={"limit": 10})
    walk("GET", "/api/v1/facts/counts", 200)
    walk("GET", "/api/v1/facts/search", 200, query={"q": "ledger cutoff"})
    walk("GET", "/api/v1/facts/offered", 200, query={"run_id": _run_id()})
    walk("GET", "/api/v1/facts/{fact_id}", 200, path_parameters=fid)
    walk("PATCH", "/api/v1/facts/{fact_id}", 200, path_parameters=fid, body={"body": "Cutoffs!"})
    walk("PUT", "/api/v1/facts/{fact_id}/scope", 200, path_parameters=fid,
         body={"scope": f"agent:{AGENT}"})  # fmt: skip
    walk("PUT", "/api/v1/facts/{fact_id}/scope", 200, path_parameters=fid,
         body={"scope": "workspace"})  # fmt: skip
    walk("POST", "/api/v1/facts/{fact_id}/pin", 200, path_parameters=fid)
    walk("DELETE", "/api/v1/facts/{fact_id}/pin", 200, path_parameters=fid)
    walk(
        "POST",
        "/api/v1/facts/{fact_id}/review",
        409,
        path_parameters=fid,
        body={"action": "confirm"},
    )
    twin = walk("POST", "/api/v1/facts", 201, body={"body": "Cutoffs, cutoffs."})  # same words
    tidy = walk("GET", "/api/v1/facts/tidy-up", 200, query={"limit": 5})
    assert [p["fold"]["id"] for p in tidy["pairs"]] == [twin["fact"]["id"]]
    pair = {"first": fid["fact_id"], "second": twin["fact"]["id"]}
    walk("POST", "/api/v1/facts/tidy-up/keep-both", 200, body=pair)
    walk("POST", "/api/v1/facts/tidy-up/keep-both", 404, body={**pair, "second": "f_0"})
    assert walk("GET", "/api/v1/facts/tidy-up", 200)["total"] == 0
    walk("GET", "/api/v1/facts/{fact_id}/history", 200, path_parameters=fid)
    walk("GET", "/api/v1/facts/{fact_id}/votes", 200, path_parameters=fid)
    walk("DELETE", "/api/v1/facts/{fact_id}", 200, path_parameters=fid)
    walk("POST", "/api/v1/facts/{fact_id}/restore", 200, path_parameters=fid)
    preview = walk("GET", "/api/v1/facts/forget-all", 200)
    assert preview["confirm"] == FORGET_ALL_PHRASE
    walk("POST", "/api/v1/facts/forget-all", 400, body={"confirm": "yes"})
    done = walk("POST", "/api/v1/facts/forget-all", 200, body={"confirm": FORGET_ALL_PHRASE})
    assert done["forgotten"] == 2  # the fact and its twin


def _files(walk: Walk) -> None:
    name = {"name": "glossary"}
    walk("GET", "/api/v1/files", 200)
    walk("GET", "/api/v1/files", 200, query={"agent": AGENT})
    walk("GET", "/api/v1/files/{name}", 200, path_parameters=name, query={"preview": True})
    saved = walk("PUT", "/api/v1/files/{name}", 200, path_parameters=name,
                 body={"text": "ledger: the books", "base_revision": 0})  # fmt: skip
    assert saved["revision"] == 1
    stale = walk("PUT", "/api/v1/files/{name}", 409, path_parameters=name,
                 body={"text": "mine", "base_revision": 0})  # fmt: skip
    assert stale["yours"] == "mine" and stale["error"]["current_revision"] == 1
    walk("PUT", "/api/v1/files/{name}/mode", 200, path_parameters=name, body={"mode": "on_demand"})
    walk("GET", "/api/v1/files/{name}/revisions", 200, path_parameters=name)
    revision = {**name, "revision": 1}
    walk("GET", "/api/v1/files/{name}/revisions/{revision}", 200, path_parameters=revision)
    walk("POST", "/api/v1/files/{name}/revisions/{revision}/restore", 200,
         path_parameters=revision, body={"user": "ops"})  # fmt: skip
    walk("GET", "/api/v1/files/{name}/ask", 200, path_parameters=name, query={"to": AGENT})
    walk("GET", "/api/v1/context-files/activity", 200)
    feed = walk("GET", "/api/v1/activity", 200, query={"limit": 2})
    assert [e["source"] for e in feed["entries"]] == ["file", "file"] and feed["next_cursor"]
    older = walk("GET", "/api/v1/activity", 200, query={"cursor": feed["next_cursor"]})
    assert {"fact", "file"} <= {e["source"] for e in older["entries"]}
    walk("GET", "/api/v1/activity", 400, query={"cursor": "1.5:fact:x"})
    report = walk("GET", "/api/v1/agents/{agent}/context-report", 200,
                  path_parameters={"agent": AGENT}, query={"repo": REPO})  # fmt: skip
    assert report["segments"]
    walk("GET", "/api/v1/agents/{agent}/context", 200, path_parameters={"agent": AGENT},
         query={"repo": REPO})  # fmt: skip


def test_parameter_errors_use_the_api_error_shape(walk: Walk) -> None:
    body = walk("GET", "/api/v1/episodes", 422, query={"limit": "many"})
    assert body["error"]["code"] == "invalid_input"
    assert body["error"]["field"] == "limit"
    assert '"many"' in body["error"]["message"]


def test_the_document_declares_bodies_models_and_errors(walk: Walk) -> None:
    document = walk.client.get(OPENAPI_PATH, headers=walk.headers).json()
    assert document == walk.client.get("/openapi.json").json()
    without_body = {
        ("post", "/api/v1/facts/{fact_id}/restore"),
        ("post", "/api/v1/facts/{fact_id}/pin"),
    }
    for path, operations in document["paths"].items():
        if not path.startswith("/api/v1/"):
            continue
        for method, op in operations.items():
            responses = op["responses"]
            ok = next(code for code in responses if code.startswith("2"))
            schema = responses[ok]["content"]["application/json"]["schema"]
            assert "$ref" in schema or "anyOf" in schema, (method, path)
            for code in ("400", "401", "403", "422"):
                error = responses[code]["content"]["application/json"]["schema"]
                assert error == {"$ref": "#/components/schemas/ErrorResponse"}, (method, path)
            # Agents are names, not stored objects: any valid name has a briefing.
            if "{" in path and not path.startswith("/api/v1/agents/"):
                assert "404" in responses, (method, path)
            if method in ("post", "put", "patch") and (method, path) not in without_body:
                assert "requestBody" in op, (method, path)
    # Request bodies say exactly which fields the handlers take: unknown ones are refused.
    components = document["components"]["schemas"]
    assert components["FactIn"]["additionalProperties"] is False
    assert set(components["FactIn"]["properties"]) == {
        "body", "kind", "scope", "pin", "source", "idempotency_key",
    }  # fmt: skip
    assert components["RunRecord"]["required"]


def _example() -> dict[str, Any]:
    import json

    data: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return data


def _run_id() -> str:
    return str(_example()["run_id"])
