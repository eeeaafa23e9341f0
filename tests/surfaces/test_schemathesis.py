"""A property-based run over /api/v1's OpenAPI document (schemathesis, in-process ASGI).

For every operation, schemathesis generates requests from the document (valid and invalid
bodies, parameters of every type) against a home with stored runs, episodes and facts. Each
answer must be no 5xx, a documented status, a documented content type, and a body valid
against the documented schema. Derandomized, with a fixed number of examples per operation,
so CI runs the same requests every time.

Requests carry ``Authorization: Bearer`` with the home's ``control.token`` when the daemon
made one, so the run exercises handlers, not only the auth gate. ``POST /runs/heartbeat``
and ``GET /caller`` authenticate a *run* token in their handlers: with the control token they
answer 403 (documented), so they stay in the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    negative_data_rejection,
)

from fleetmem.service.bootstrap import App, build
from fleetmem.surfaces.http.app import create_app
from tests.conftest import EXAMPLE, make_record, session, write_config
from tests.surfaces.api_contract import CHECKS, auth_headers, send

#: The module's daemon: its ASGI app, home, one client (one lifespan) and the App behind it.
Daemon = tuple[FastAPI, Path, TestClient, App]

#: Examples per operation: ~40 operations stay well under a minute on two busy cores.
EXAMPLES = 12


def _seed(app: App) -> None:
    app.memory.ingest_run(EXAMPLE.read_bytes())
    app.memory.ingest_run(
        make_record(run_id="run-web-1", sessions=[session(repo="github.com/acme/web")])
    )
    app.facts.add("Use UTC in every ledger test.", kind="decision", scope="workspace")
    app.facts.add("The api repo pins its clock.", scope="project:github.com/acme/api")


@pytest.fixture(scope="module")
def api_home(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Daemon]:
    home = tmp_path_factory.mktemp("schemathesis") / "home"
    home.mkdir()
    write_config(home, '[model_api]\nembedding_model = ""\n[agent.api-fixer]\n')
    app = build(home, {"HOME": str(home.parent)})
    _seed(app)
    api = create_app(app)
    # One client for the module: the app's lifespan (its MCP session manager) runs once.
    with TestClient(api, raise_server_exceptions=False) as client:
        yield api, home, client, app
    app.close()


@pytest.fixture(scope="module")
def api_schema(api_home: Daemon) -> schemathesis.BaseSchema:
    api = api_home[0]
    schema = schemathesis.openapi.from_dict(api.openapi()).include(path_regex=r"^/api/v1/")
    # Unknown query parameters are ignored, as HTTP APIs do; and the run always sends the
    # control token (auth refusals are tests/surfaces/test_api_tokens.py's subject).
    schema.config.generation.update(allow_extra_parameters=False, with_security_parameters=False)
    return schema


def _stored(app: App) -> tuple[object, ...]:
    """Everything a request could have written, counted."""
    return (
        app.facts.counts(),
        app.store.episode_counts(),
        app.store.run_status_counts(),
        len(app.runs.live_runs(None)),
        len(app.files.activity(limit=1000)),
    )


def _can_be_invalid(operation: dict[str, Any]) -> bool:
    """Whether a request can break this operation's declaration: a body, a required query
    parameter, or a typed (non-string) parameter. Free-form strings alone cannot."""
    if "requestBody" in operation:
        return True
    for param in operation.get("parameters", []):
        if param["in"] == "query" and param.get("required"):
            return True
        if param.get("schema", {}).get("type") != "string":
            return True
    return False


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_api_keeps_its_documented_contract(
    mode: GenerationMode,
    api_schema: schemathesis.BaseSchema,
    api_home: Daemon,
) -> None:
    """Positive: requests the document allows; negative: requests it forbids, which must
    all be refused with a documented 4xx (schemathesis' negative_data_rejection)."""
    _, home, client, app = api_home
    headers = auth_headers(home)
    stored_before = _stored(app)
    checks = CHECKS + ([negative_data_rejection] if mode is GenerationMode.NEGATIVE else [])
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 35  # every /api/v1 operation is in the run
    if mode is GenerationMode.NEGATIVE:
        operations = [op for op in operations if _can_be_invalid(op.definition.raw)]
        assert len(operations) >= 20
    failures: list[str] = []
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def keeps_contract(case: schemathesis.Case) -> None:
            case.validate_response(send(client, case, headers), checks=checks)

        try:
            keeps_contract()
        except Unsatisfiable:
            # Negative mode only: nothing in this operation can be made invalid (no body, only
            # free-form string parameters), so there is no bad request to send.
            assert mode is GenerationMode.NEGATIVE, operation.label
        except Exception as exc:  # gather every operation's finding, then report them all
            failures.append(f"{operation.label}: {exc}")
    assert not failures, "\n\n".join(failures)
    if mode is GenerationMode.NEGATIVE:
        # Every refused request left the store as it was.
        assert _stored(app) == stored_before


def test_the_document_is_served_under_api_v1(api_home: Daemon) -> None:
    api, home, client, _ = api_home
    served = client.get("/api/v1/openapi.json", headers=auth_headers(home))
    assert served.status_code == 200
    assert served.json() == api.openapi()
