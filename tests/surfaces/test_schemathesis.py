"""Property-based runs over /api/v1's OpenAPI document with every schemathesis check.

In process: for every operation, schemathesis generates requests from the document (valid
and invalid bodies, parameters of every type) against a home with stored runs, episodes and
facts, and every registered check judges each answer (``--checks all``: no 5xx, documented
status, content type, headers and body, valid data accepted, invalid data refused).
Derandomized, with a fixed number of examples per operation.

Against a real daemon: ``st run --checks all`` (the CLI, every phase: examples, coverage,
fuzzing, stateful) against ``fleetmem serve`` on 127.0.0.1, which adds what only a live
server and whole scenarios show: 405 with Allow for undeclared methods, 401 without
credentials, use after DELETE, resources that stay available.

Five operations keep one rule JSON Schema cannot state, so ``positive_data_acceptance`` skips
them (docs/http-api.md, "What the document cannot say"): a run record's ``ended_at`` must
not precede its ``started_at`` and its session ids are unique; a ``reference`` fact's
source must be a URL or a repository path; asking for a change to an agent's file addresses
that agent (``to`` equals ``agent``); a workspace's name, created or renamed, needs a letter
or a digit of any script and must not read as another workspace's.

Requests carry ``Authorization: Bearer`` with the home's ``control.token`` when the daemon
made one, so the run exercises handlers, not only the auth gate. ``POST /runs/heartbeat``
and ``GET /caller`` authenticate a *run* token in their handlers: with the control token they
answer 403 (documented), so they stay in the run.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import CHECKS as REGISTERED
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    ignored_auth,
    negative_data_rejection,
    positive_data_acceptance,
)

from fleetmem.service.bootstrap import App, build
from fleetmem.surfaces.http.app import create_app
from tests.conftest import EXAMPLE, make_record, session, write_config
from tests.surfaces.api_contract import CHECKS, auth_headers, send

#: The daemon run's seed: fresh each run (printed by st in its summary to replay a failure).
RANDOM_SEED = random.SystemRandom().randrange(2**31)

#: Cross-field rules JSON Schema cannot state (see the module docstring).
NOT_EXPRESSIBLE = frozenset(
    {
        "POST /api/v1/runs",
        "POST /api/v1/facts",
        "GET /api/v1/files/{name}/ask",
        "POST /api/v1/workspaces",
        "PATCH /api/v1/workspaces/{workspace_id}",
    }
)


def _all_checks(mode: GenerationMode, label: str) -> list[Any]:
    """Every registered check (``--checks all``), the mode's data check included, plus ours.

    ignored_auth re-sends a case through schemathesis' own transport, which the in-process
    client here does not use; the run against the real daemon below applies it."""
    skipped = {
        c.__name__ for c in (negative_data_rejection, positive_data_acceptance, ignored_auth)
    }
    checks = [c for c in REGISTERED.get_all() if c.__name__ not in skipped]
    if mode is GenerationMode.NEGATIVE:
        checks.append(negative_data_rejection)
    elif label not in NOT_EXPRESSIBLE:
        checks.append(positive_data_acceptance)
    return [*checks, *(c for c in CHECKS if c not in checks)]


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


def _run_operation(
    operation: Any, mode: GenerationMode, client: TestClient, headers: dict[str, str]
) -> None:
    """EXAMPLES generated requests to one operation, each judged by every check."""
    checks = _all_checks(mode, operation.label)

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def keeps_contract(case: schemathesis.Case) -> None:
        case.validate_response(
            send(client, case, headers), checks=checks, excluded_checks=[ignored_auth]
        )

    keeps_contract()


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
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 35  # every /api/v1 operation is in the run
    if mode is GenerationMode.NEGATIVE:
        operations = [op for op in operations if _can_be_invalid(op.definition.raw)]
        assert len(operations) >= 20
    failures: list[str] = []
    for operation in operations:
        try:
            _run_operation(operation, mode, client, headers)
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


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_st_run_with_all_checks_against_a_real_daemon(tmp_path: Path) -> None:
    """``st run --checks all`` over every phase against ``fleetmem serve`` on 127.0.0.1.

    positive_data_acceptance is left to the in-process run above, which applies it to every
    operation but the three whose rules JSON Schema cannot state; ``/provider/check`` (it runs
    the seven conformance checks over a scratch store per call) is also covered there only.
    """
    import subprocess
    import sys

    from tests.surfaces.test_http import SLOW_START_S, Daemon

    home = tmp_path / "home"
    home.mkdir()
    write_config(home, '[model_api]\nembedding_model = ""\n[agent.api-fixer]\n')
    daemon = Daemon(home, patience=SLOW_START_S)
    try:
        assert daemon.client.post("/api/v1/runs", content=EXAMPLE.read_bytes()).status_code == 201
        token = (home / "control.token").read_text(encoding="utf-8").strip()
        st = str(Path(sys.executable).with_name("st"))
        proc = subprocess.run(
            [
                st,
                "run",
                f"{daemon.url}/api/v1/openapi.json",
                "-H",
                f"Authorization: Bearer {token}",
                "--checks",
                "all",
                "--exclude-checks",
                # Speed is measured in bench/, never asserted: a loaded machine is slow.
                "positive_data_acceptance",
                "--include-path-regex",
                "^/api/v1/",
                "--exclude-path",
                "/api/v1/provider/check",
                "--max-examples",
                "3",
                "--seed",
                str(RANDOM_SEED),
                "--workers",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=850,
            cwd=tmp_path,
        )
    finally:
        err = daemon.stop()
    assert "Traceback" not in err, err[-2000:]
    summary = proc.stdout[proc.stdout.find("SUMMARY") :]
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert "Server error" not in proc.stdout and "failures" not in summary.split("\n")[-2], summary
