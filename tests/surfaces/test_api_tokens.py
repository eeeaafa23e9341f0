"""API tokens with tiers: the control token file, minted and configured tokens, the guard
that answers 401/403 before any /api/v1 handler runs, and binding beyond loopback."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from fleetmem.config import load_global
from fleetmem.errors import ConfigError, InvalidInput
from fleetmem.service.api_tokens import (
    CONTROL_TOKEN_FILE,
    MINTED_TOKENS_FILE,
    ApiTokens,
    Tier,
    ensure_control_token,
    mint_token,
    revoke_minted,
    token_hash,
)
from fleetmem.service.bootstrap import App
from fleetmem.surfaces.http.app import create_app
from fleetmem.surfaces.http.auth import (
    ROUTE_EXCEPTIONS,
    Access,
    UnclassifiedRoute,
    access_for,
    classify_routes,
    flatten_routes,
    is_api_route,
)
from fleetmem.surfaces.http.server import check_bind
from fleetmem.surfaces.web.auth import CSRF_HEADER, SESSION_COOKIE
from tests.surfaces.cli_helpers import FLEETMEM, env_for, run_cli
from tests.surfaces.test_http import VECTORS_OFF, free_port

RUN_TOKEN = "fmr_" + "r" * 43


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def control_token(home: Path) -> str:
    return (home / CONTROL_TOKEN_FILE).read_text().strip()


@pytest.fixture
def served(make_app: Callable[..., App]) -> tuple[App, FastAPI, TestClient]:
    app = make_app(VECTORS_OFF)
    api = create_app(app)
    return app, api, TestClient(api)


def facts_written(app: App) -> int:
    return int(app.facts.counts()["live"])


# --------------------------------------------------------------------------- the token file


def test_control_token_is_created_0600_once_and_reused(make_app: Callable[..., App]) -> None:
    app = make_app(VECTORS_OFF)
    path = app.home / CONTROL_TOKEN_FILE
    assert not path.exists()
    create_app(app)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert re.fullmatch(r"fmc_[A-Za-z0-9_-]{43}\n", text), text
    create_app(app)  # a second app (a restart) keeps the token
    assert path.read_text() == text


def test_a_token_file_others_may_read_is_refused(make_app: Callable[..., App]) -> None:
    app = make_app(VECTORS_OFF)
    create_app(app)
    path = app.home / CONTROL_TOKEN_FILE
    path.chmod(0o640)
    with pytest.raises(ConfigError) as caught:
        create_app(app)
    assert str(path) in str(caught.value) and "0640" in str(caught.value)
    proc = run_cli(app.home, "serve", "--port", str(free_port()), check=False)
    assert proc.returncode == 2
    assert str(path) in proc.stderr and "0640" in proc.stderr


def test_a_token_file_that_is_not_one_token_is_refused(home: Path) -> None:
    (home / CONTROL_TOKEN_FILE).write_text("two tokens\n")
    (home / CONTROL_TOKEN_FILE).chmod(0o600)
    proc = run_cli(home, "serve", "--port", str(free_port()), check=False)
    assert proc.returncode == 2 and "one token on one line" in proc.stderr


def test_a_symlink_in_place_of_the_token_file_is_refused(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.token"
    elsewhere.write_text("fmc_" + "e" * 43 + "\n")
    elsewhere.chmod(0o600)
    (home / CONTROL_TOKEN_FILE).symlink_to(elsewhere)
    with pytest.raises(ConfigError, match="cannot open"):
        ensure_control_token(home)


# --------------------------------------------------------------------------- route tiers


def test_every_api_route_has_a_tier_and_the_exceptions_are_live(served: tuple) -> None:
    _app, api, _client = served
    table = classify_routes(api.routes)
    routes = [r for r in flatten_routes(api.routes) if is_api_route(r)]
    assert len(routes) >= 40  # the whole API, not an empty walk
    for route in routes:
        assert isinstance(route, APIRoute)
        for method in route.methods:
            assert (method, route.path) in table
    # An exception for a route that no longer exists would be a silent hole.
    assert set(ROUTE_EXCEPTIONS) <= set(table)
    assert access_for("GET", "/api/v1/facts") is Access.READ
    assert access_for("DELETE", "/api/v1/facts/{fact_id}") is Access.CONTROL


def test_a_route_without_a_tier_rule_stops_the_app() -> None:
    def endpoint() -> None:
        return None

    odd = APIRoute("/api/v1/odd", endpoint, methods=["OPTIONS"])
    with pytest.raises(UnclassifiedRoute, match="OPTIONS /api/v1/odd"):
        classify_routes([odd])


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", path)


def test_a_read_token_reaches_no_control_route(served: tuple) -> None:
    app, api, client = served
    read = mint_token(app.home, Tier.READ, "walker", app.memory.now())
    table = classify_routes(api.routes)
    controls = [(m, p) for (m, p), access in table.items() if access is Access.CONTROL]
    reads = [(m, p) for (m, p), access in table.items() if access is Access.READ]
    assert len(controls) >= 12 and len(reads) >= 20
    for method, path in controls:
        url = _concrete(path)
        with_read = client.request(method, url, headers=bearer(read), content=b"{}")
        assert with_read.status_code == 403, (method, path, with_read.text)
        assert with_read.json()["error"]["code"] == "insufficient_tier"
        assert client.request(method, url, content=b"{}").status_code == 401, (method, path)
    for method, path in reads:
        r = client.request(method, _concrete(path), headers=bearer(read))
        assert r.status_code not in (401, 403), (method, path, r.text)
    assert facts_written(app) == 0


# --------------------------------------------------------------------------- 401 and 403


def test_missing_or_wrong_credentials_get_401_in_the_error_shape(served: tuple) -> None:
    app, _api, client = served
    none = client.get("/api/v1/status")
    assert none.status_code == 401
    assert none.headers["www-authenticate"].startswith("Bearer")
    error = none.json()["error"]
    assert error["code"] == "unauthorized" and error["field"] == "Authorization"
    assert CONTROL_TOKEN_FILE in error["message"]
    wrong = client.get("/api/v1/status", headers=bearer("fmc_" + "x" * 43))
    assert wrong.status_code == 401 and "unknown API token" in wrong.json()["error"]["message"]
    basic = client.get("/api/v1/status", headers={"Authorization": "Basic dXNlcjpwdw=="})
    assert basic.status_code == 401 and "Bearer" in basic.json()["error"]["message"]
    run = client.get("/api/v1/status", headers=bearer(RUN_TOKEN))
    assert run.status_code == 401 and "run token" in run.json()["error"]["message"]
    # Unknown API paths ask for a token too: probing tells nothing about what exists.
    assert client.get("/api/v1/no-such-thing").status_code == 401
    assert (
        client.get("/api/v1/no-such-thing", headers=bearer(control_token(app.home))).status_code
        == 404
    )
    # Health, metrics, the login page and static files stay open.
    assert client.get("/healthz").status_code == 200
    assert client.get("/metrics").status_code == 200
    assert client.get("/login").status_code == 200
    assert client.get("/static/app.js").status_code == 200


def test_a_read_token_is_refused_before_the_handler_and_nothing_is_stored(
    served: tuple,
) -> None:
    app, _api, client = served
    read = mint_token(app.home, Tier.READ, "reader", app.memory.now())
    add = client.post(
        "/api/v1/facts", json={"body": "Use Decimal for money."}, headers=bearer(read)
    )
    assert add.status_code == 403
    assert "POST /api/v1/facts" in add.json()["error"]["message"]
    # Not even the body was looked at: invalid JSON still gets 403, not the handler's 400.
    garbage = client.post("/api/v1/facts", content=b"\xff not json", headers=bearer(read))
    assert garbage.status_code == 403
    save = client.put(
        "/api/v1/files/glossary",
        json={"text": "invoice: a bill\n", "base_revision": 0},
        headers=bearer(read),
    )
    assert save.status_code == 403
    assert facts_written(app) == 0
    assert client.get("/api/v1/files/glossary", headers=bearer(read)).json()["revision"] == 0
    # The same calls with the control token are stored.
    control = bearer(control_token(app.home))
    assert (
        client.post("/api/v1/facts", json={"body": "Use Decimal."}, headers=control).status_code
        == 201
    )
    assert facts_written(app) == 1


def test_a_read_token_reads_and_recalls(served: tuple) -> None:
    app, _api, client = served
    read = bearer(mint_token(app.home, Tier.READ, "reader", app.memory.now()))
    assert client.get("/api/v1/status", headers=read).status_code == 200
    assert client.get("/api/v1/facts", headers=read).json()["facts"] == []
    recall = client.post("/api/v1/recall", json={"query": "money", "repo": "a/b"}, headers=read)
    assert recall.status_code == 200, recall.text


def test_run_endpoints_keep_their_run_token_check(served: tuple) -> None:
    app, _api, client = served
    opened = client.post(
        "/api/v1/runs/open",
        json={"agent": "api-fixer", "repo": "github.com/acme/api"},
        headers=bearer(control_token(app.home)),
    )
    assert opened.status_code == 201
    run_token = opened.json()["token"]
    beat = client.post(
        "/api/v1/runs/heartbeat", json={"files": ["a.py"]}, headers=bearer(run_token)
    )
    assert beat.status_code == 200
    assert client.get("/api/v1/caller", headers=bearer(run_token)).status_code == 200
    # With no credentials at all: 401, as on every route; a token that is not a live run's
    # is the handler's 403 not_attributed.
    assert client.get("/api/v1/caller").status_code == 401
    wrong = client.get("/api/v1/caller", headers=bearer("fmr_" + "0" * 32))
    assert wrong.json()["error"]["code"] == "not_attributed"


def test_a_web_session_reads_and_with_its_csrf_token_writes(served: tuple) -> None:
    app, api, client = served
    login = api.state.web_auth.new_login_token()
    assert client.get(f"/login?token={login}").status_code == 200
    cookie = client.cookies.get(SESSION_COOKIE)
    session = api.state.web_auth.session(cookie)
    assert session is not None
    assert client.get("/api/v1/facts/counts").status_code == 200
    no_csrf = client.post("/api/v1/facts", json={"body": "From the browser."})
    assert no_csrf.status_code == 403 and "X-CSRF-Token" in no_csrf.json()["error"]["message"]
    wrong = client.post("/api/v1/facts", json={"body": "x"}, headers={CSRF_HEADER: "nope"})
    assert wrong.status_code == 403
    assert facts_written(app) == 0
    ok = client.post(
        "/api/v1/facts", json={"body": "From the browser."}, headers={CSRF_HEADER: session.csrf}
    )
    assert ok.status_code == 201
    api.state.web_auth.end(cookie)
    assert client.get("/api/v1/facts/counts").status_code == 401


# --------------------------------------------------------------------------- token sources


def test_minted_tokens_are_printed_once_kept_as_hashes_and_revocable(served: tuple) -> None:
    app, _api, client = served
    made = json.loads(run_cli(app.home, "token", "create", "--tier", "read", "--json").stdout)
    assert made["name"] == "read-1" and made["tier"] == "read"
    token = made["token"]
    assert token.startswith("fmro_")
    stored = app.home / MINTED_TOKENS_FILE
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert token not in stored.read_text() and token_hash(token) in stored.read_text()
    assert client.get("/api/v1/status", headers=bearer(token)).status_code == 200
    listed = json.loads(run_cli(app.home, "token", "list", "--json").stdout)["tokens"]
    assert [(t["name"], t["tier"]) for t in listed] == [("read-1", "read")]
    assert token not in json.dumps(listed)
    dup = run_cli(app.home, "token", "create", "--tier", "read", "--name", "read-1", check=False)
    assert dup.returncode == 6 and "read-1" in dup.stderr
    bad = run_cli(app.home, "token", "create", "--tier", "read", "--name", "Bad Name", check=False)
    assert bad.returncode == 2 and "name" in bad.stderr
    run_cli(app.home, "token", "revoke", "read-1")
    assert client.get("/api/v1/status", headers=bearer(token)).status_code == 401
    missing = run_cli(app.home, "token", "revoke", "read-1", check=False)
    assert missing.returncode == 2 and "read-1" in missing.stderr


def test_a_minted_control_token_may_write(served: tuple) -> None:
    app, _api, client = served
    token = mint_token(app.home, Tier.CONTROL, "ops", app.memory.now())
    assert token.startswith("fmc_")
    r = client.post("/api/v1/facts", json={"body": "Ops may write."}, headers=bearer(token))
    assert r.status_code == 201
    revoke_minted(app.home, "ops")
    assert client.get("/api/v1/status", headers=bearer(token)).status_code == 401


def test_configured_tokens_by_hash_and_by_file(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    read_token, control_file_token = "fmro_" + "a" * 43, "fmc_" + "b" * 43
    token_file = tmp_path / "ops.token"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, (control_file_token + "\n").encode())
    os.close(fd)
    app = make_app(
        VECTORS_OFF
        + "[server]\ntokens = [\n"
        + f'  {{ tier = "read", sha256 = "{token_hash(read_token)}", name = "dashboard" }},\n'
        + f'  {{ tier = "control", file = "{token_file}" }},\n'
        + "]\n"
    )
    client = TestClient(create_app(app))
    assert client.get("/api/v1/status", headers=bearer(read_token)).status_code == 200
    assert (
        client.post("/api/v1/facts", json={"body": "x"}, headers=bearer(read_token)).status_code
        == 403
    )
    r = client.post("/api/v1/facts", json={"body": "From ops."}, headers=bearer(control_file_token))
    assert r.status_code == 201
    assert ApiTokens(app.home, app.config).has_configured()
    token_file.chmod(0o644)
    with pytest.raises(ConfigError) as caught:
        ApiTokens(app.home, app.config)
    assert "server.tokens[1]" in str(caught.value) and "0644" in str(caught.value)


def test_a_config_reload_changes_the_accepted_tokens(make_app: Callable[..., App]) -> None:
    first, second = "fmro_" + "f" * 43, "fmro_" + "g" * 43

    def config(token: str) -> str:
        item = f'{{ tier = "read", sha256 = "{token_hash(token)}" }}'
        return f"{VECTORS_OFF}[server]\ntokens = [{item}]\n"

    app = make_app(config(first))
    client = TestClient(create_app(app))
    assert client.get("/api/v1/status", headers=bearer(first)).status_code == 200
    (app.home / "fleetmem.toml").write_text(config(second))
    assert app.config.reload() is None  # what SIGHUP does in the daemon
    assert client.get("/api/v1/status", headers=bearer(first)).status_code == 401
    assert client.get("/api/v1/status", headers=bearer(second)).status_code == 200


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ('{ tier = "admin", sha256 = "' + "0" * 64 + '" }', "tier must be read or control"),
        ('{ tier = "read" }', "exactly one of sha256 or file"),
        ('{ tier = "read", sha256 = "' + "0" * 64 + '", file = "x" }', "exactly one of"),
        ('{ tier = "read", sha256 = "abc" }', "64 lower-case hex"),
        ('{ tier = "read", token = "fmro_x" }', "give sha256 of the token"),
        ('"fmro_x"', "item 0: a table"),
    ],
)
def test_bad_server_tokens_name_the_key(home: Path, item: str, reason: str) -> None:
    (home / "fleetmem.toml").write_text(f"[server]\ntokens = [{item}]\n")
    with pytest.raises(ConfigError) as caught:
        load_global(home)
    assert "server.tokens" in str(caught.value) and reason in str(caught.value)


# --------------------------------------------------------------------------- binding


def test_check_bind_needs_a_configured_token_beyond_loopback() -> None:
    for host in ("127.0.0.1", "::1", "localhost"):
        check_bind(host, has_configured_token=False)
    with pytest.raises(InvalidInput) as caught:
        check_bind("0.0.0.0", has_configured_token=False)
    assert caught.value.field == "host" and "[server] tokens" in str(caught.value)
    check_bind("0.0.0.0", has_configured_token=True)
    with pytest.raises(InvalidInput, match="host"):
        check_bind("not-an-address", has_configured_token=True)


def test_serve_beyond_loopback_with_a_configured_token(home: Path) -> None:
    read_token = "fmro_" + "c" * 43
    (home / "fleetmem.toml").write_text(
        VECTORS_OFF
        + f'[server]\ntokens = [{{ tier = "read", sha256 = "{token_hash(read_token)}" }}]\n'
    )
    port = free_port()
    proc = subprocess.Popen(
        [FLEETMEM, "serve", "--host", "0.0.0.0", "--port", str(port)],
        env=env_for(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            deadline = time.monotonic() + 30
            while True:
                assert proc.poll() is None, proc.communicate()[1]
                assert time.monotonic() < deadline, "daemon did not become healthy"
                try:
                    if client.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            assert stat.S_IMODE((home / CONTROL_TOKEN_FILE).stat().st_mode) == 0o600
            assert client.get("/api/v1/status").status_code == 401
            assert client.get("/api/v1/status", headers=bearer(read_token)).status_code == 200
            denied = client.post("/api/v1/facts", json={"body": "x"}, headers=bearer(read_token))
            assert denied.status_code == 403
            control = bearer(control_token(home))
            assert (
                client.post("/api/v1/facts", json={"body": "Remote."}, headers=control).status_code
                == 201
            )
            assert (
                client.get("/api/v1/facts/counts", headers=bearer(read_token)).json()["live"] == 1
            )
    finally:
        proc.terminate()
        proc.communicate(timeout=15)
