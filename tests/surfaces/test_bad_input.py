"""Bad input on every surface: a clear error naming the field, never a crash, nothing stored.

HTTP goes to a real ``fleetmem serve`` on 127.0.0.1, the CLI and the Claude Code hook run as
real subprocesses, MCP goes through the official SDK client. Each refusal is checked three
ways: the status (400 / exit 2 / a tool error), a message naming the field, and the store
hashed before and after (every row of every table) unchanged. No answer may be a 5xx and no
stderr may hold a traceback.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleetmem.service.runrecords import MAX_RECORD_BYTES
from fleetmem.store.sqlite.packed import unpack
from tests.conftest import EXAMPLE, make_record, write_config
from tests.surfaces.bad_inputs import RNG, Case, body_cases, record_cases, store_digest
from tests.surfaces.cli_helpers import FLEETMEM, env_for, run_cli
from tests.surfaces.test_http import SLOW_START_S, VECTORS_OFF, Daemon

RECORDS = record_cases(MAX_RECORD_BYTES)
BODIES = body_cases()


def _field_of(response: httpx.Response) -> str:
    assert response.status_code == 400, (response.status_code, response.text[:300])
    error = response.json()["error"]
    assert error["code"] in ("invalid_input", "invalid_run_record"), error
    assert error["message"] and error.get("field"), error
    return str(error["field"])


def _names(case: Case, field: str) -> None:
    assert field.startswith(case.fields), (case.name, field, case.fields)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home = tmp_path_factory.mktemp("bad-input") / "home"
    home.mkdir()
    write_config(home, VECTORS_OFF)
    d = Daemon(home, patience=SLOW_START_S)
    assert d.client.post("/api/v1/runs", content=EXAMPLE.read_bytes()).status_code == 201
    yield d
    err = d.stop()
    assert "Traceback" not in err, err[-2000:]


@pytest.mark.parametrize("case", RECORDS, ids=[c.name for c in RECORDS])
def test_http_refuses_bad_run_records(daemon: Daemon, case: Case) -> None:
    before = store_digest(daemon.home)
    response = daemon.client.post(
        "/api/v1/runs", content=case.raw, headers={"Content-Type": "application/json"}
    )
    _names(case, _field_of(response))
    assert store_digest(daemon.home) == before


@pytest.mark.parametrize("case", BODIES, ids=[c.name for c in BODIES])
def test_http_refuses_bad_bodies(daemon: Daemon, case: Case) -> None:
    before = store_digest(daemon.home)
    response = daemon.client.post(
        "/api/v1/facts", content=case.raw, headers={"Content-Type": "application/json"}
    )
    _names(case, _field_of(response))
    assert store_digest(daemon.home) == before


def test_http_refuses_bad_scopes_and_agents_in_parameters(daemon: Daemon) -> None:
    c = daemon.client
    before = store_digest(daemon.home)
    name = "".join(RNG.choice("ABCDEFGHIJ") for _ in range(6))
    for path, params, field in [
        ("/api/v1/facts", {"scope": f"agent:{name}"}, "scope"),
        ("/api/v1/episodes", {"agent": name}, "agent"),
        ("/api/v1/runs", {"agent": name.lower() + "\u202e"}, "agent"),
        ("/api/v1/episodes", {"repo": "github.com/acme/caf\u00e9"}, "repo"),
        ("/api/v1/episodes", {"limit": str(10**30)}, "limit"),
    ]:
        response = c.get(path, params=params)
        assert response.status_code in (400, 422), (path, params, response.text)
        assert response.json()["error"]["field"] == field, response.text
    assert store_digest(daemon.home) == before


def test_the_api_answers_405_with_every_method_of_the_path(daemon: Daemon) -> None:
    response = daemon.client.request("OPTIONS", "/api/v1/facts/f_0000000000000000")
    assert response.status_code == 405
    assert set(response.headers["allow"].split(", ")) == {"GET", "PATCH", "DELETE"}
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_concurrent_writers_keep_good_writes_and_refuse_bad_ones(daemon: Daemon) -> None:
    """Eight threads interleave valid facts with hostile bodies: every valid one is stored
    once, every bad one refused with 400, none answers 5xx."""
    good_bodies = [f"Concurrent fact {RNG.getrandbits(64):x} number {i}." for i in range(24)]
    bad_bodies = [c.raw for c in BODIES if c.name != "huge"] * 2
    results: list[tuple[str, int]] = []
    lock = threading.Lock()

    def worker(items: list[tuple[str, bytes]]) -> None:
        with httpx.Client(base_url=daemon.url, auth=daemon.client.auth, timeout=120) as c:
            for kind, raw in items:
                r = c.post(
                    "/api/v1/facts", content=raw, headers={"Content-Type": "application/json"}
                )
                with lock:
                    results.append((kind, r.status_code))

    jobs = [("good", json.dumps({"body": b}).encode()) for b in good_bodies]
    jobs += [("bad", raw) for raw in bad_bodies]
    RNG.shuffle(jobs)
    threads = [threading.Thread(target=worker, args=(jobs[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(results) == len(jobs)
    assert all(status == 201 for kind, status in results if kind == "good"), results
    assert all(status == 400 for kind, status in results if kind == "bad"), results
    listed = daemon.client.get("/api/v1/facts", params={"limit": 500}).json()["facts"]
    bodies = [f["body"] for f in listed]
    assert all(bodies.count(b) == 1 for b in good_bodies), bodies


# ---- the CLI ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("bad-input-cli") / "home"
    home.mkdir()
    write_config(home, VECTORS_OFF)
    run_cli(home, "runs", "ingest", str(EXAMPLE))
    return home


@pytest.mark.parametrize(
    "case",
    [c for c in RECORDS if c.name != "huge"],
    ids=[c.name for c in RECORDS if c.name != "huge"],
)
def test_cli_refuses_bad_run_record_files(cli_home: Path, tmp_path: Path, case: Case) -> None:
    path = tmp_path / "record.json"
    path.write_bytes(case.raw)
    before = store_digest(cli_home)
    proc = run_cli(cli_home, "runs", "ingest", str(path), check=False)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-1000:])
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("fleetmem: error: "), proc.stderr
    assert any(f in proc.stderr for f in case.fields), (case.fields, proc.stderr)
    assert store_digest(cli_home) == before


def test_cli_refuses_a_huge_record_naming_the_limit(cli_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # sparse-free but quick: one big string field
        handle.write(b'{"prompt": "')
        handle.write(b"z" * (MAX_RECORD_BYTES + RNG.randint(1, 10_000)))
        handle.write(b'"}')
    before = store_digest(cli_home)
    proc = run_cli(cli_home, "runs", "ingest", str(path), check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert f"{MAX_RECORD_BYTES:,} bytes" in proc.stderr, proc.stderr
    assert store_digest(cli_home) == before


def test_cli_drops_one_leading_bom_from_a_file(cli_home: Path, tmp_path: Path) -> None:
    """The documented file policy: a BOM a Windows editor wrote is not an error."""
    record = make_record(run_id=f"bom-{RNG.getrandbits(32):x}")
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(record).encode())
    proc = run_cli(cli_home, "runs", "ingest", str(path), check=False)
    assert proc.returncode == 0, proc.stderr


def test_a_file_past_the_bound_is_refused_for_its_size_bom_or_not(
    cli_home: Path, tmp_path: Path
) -> None:
    before = store_digest(cli_home)
    body = json.dumps(make_record(run_id=f"big-{RNG.getrandbits(32):x}")).encode()
    over = MAX_RECORD_BYTES + 1 - len(body) + RNG.randint(0, 64)
    for bom in (b"", b"\xef\xbb\xbf"):
        path = tmp_path / "big.json"
        path.write_bytes(bom + body[:-1] + b" " * over + b"}")
        proc = run_cli(cli_home, "runs", "ingest", str(path), check=False)
        assert proc.returncode == 2 and "larger than the limit" in proc.stderr, proc.stderr[-300:]
    assert store_digest(cli_home) == before


def test_cli_refuses_bad_scopes_and_agents(cli_home: Path) -> None:
    before = store_digest(cli_home)
    upper = "".join(RNG.choice("KLMNOPQ") for _ in range(5))
    for args, field in [
        (("facts", "add", "A fact about nothing.", "--scope", f"agent:{upper}"), "scope"),
        (("episodes", "--agent", upper), "agent"),
    ]:
        proc = run_cli(cli_home, *args, check=False)
        assert proc.returncode == 2, (args, proc.returncode, proc.stderr)
        assert "Traceback" not in proc.stderr and f"{field} = " in proc.stderr, proc.stderr
    assert store_digest(cli_home) == before


def test_episodes_show_json_is_always_valid_json(tmp_path: Path) -> None:
    """A row stored before strict parsing may hold a NaN; --json still prints valid JSON."""
    import sqlite3

    home = tmp_path / "home"
    home.mkdir()
    write_config(home, VECTORS_OFF)
    first = json.loads(run_cli(home, "runs", "ingest", str(EXAMPLE), "--json").stdout)["episode_id"]
    db = sqlite3.connect(home / "fleetmem.db")
    try:
        stored, text = db.execute(
            "SELECT episode_json, text FROM episodes WHERE id = ?", (first,)
        ).fetchone()
        old = json.loads(unpack(stored) or "{}")  # written as TEXT below: an older row
        old["cost_usd"] = math.nan  # json.dumps writes the bare NaN an older parser let in
        with db:
            db.execute(
                "UPDATE episodes SET episode_json = ?, text = ? WHERE id = ?",
                (json.dumps(old), unpack(text, unpack(stored)), first),
            )
    finally:
        db.close()
    shown = run_cli(home, "episodes", "show", first, "--json").stdout
    parsed = json.loads(shown, parse_constant=lambda name: pytest.fail(f"{name} in --json output"))
    assert parsed["episode"]["cost_usd"] is None
    # And over HTTP: the same row answers 200 with null, not 500.
    from fastapi.testclient import TestClient

    from fleetmem.service.bootstrap import build
    from fleetmem.surfaces.http.app import create_app
    from tests.surfaces.api_contract import auth_headers

    app = build(home, {"HOME": str(home.parent)})
    try:
        with TestClient(create_app(app)) as client:
            response = client.get(f"/api/v1/episodes/{first}", headers=auth_headers(home))
    finally:
        app.close()
    assert response.status_code == 200, response.text[:300]
    answer = json.loads(response.text, parse_constant=lambda name: pytest.fail(f"{name} sent"))
    assert answer["episode"]["cost_usd"] is None


def test_the_hook_fails_open_on_a_bad_payload_and_stores_nothing(cli_home: Path) -> None:
    import subprocess

    before = store_digest(cli_home)
    payloads = [c.raw for c in BODIES if c.name != "huge"] + [b"\xef\xbb\xbf{}"]
    for raw in payloads:
        proc = subprocess.run(
            [FLEETMEM, "hook", "claude-code", "SessionStart"],
            input=raw,
            capture_output=True,
            env=env_for(cli_home),
            timeout=60,
        )
        assert proc.returncode == 0 and proc.stdout == b"", proc.stdout[:300]
        assert b"Traceback" not in proc.stderr, proc.stderr[-1000:]
    assert store_digest(cli_home) == before


# ---- MCP -------------------------------------------------------------------------------------


def _mcp_error(world: Any, name: str, arguments: dict[str, Any]) -> str:
    from fleetmem.surfaces.mcp.server import build_server, fixed_token
    from tests.mcp.conftest import client_for, error_text, run_async

    server = build_server(world.app, fixed_token(world.me.token))

    async def call() -> str:
        async with client_for(server) as client:
            return str(error_text(await client.call_tool(name, arguments)))

    try:
        return run_async(call)
    finally:
        server.close()


@pytest.fixture
def world(make_app: Any) -> Any:
    from tests.mcp.conftest import CONFIG, World

    return World(make_app(CONFIG))


@pytest.mark.parametrize(
    ("name", "arguments", "argument"),
    [
        ("recall", {"query": "ledger", "limit": "5"}, "limit"),
        ("recall", {"query": "ledger", "limit": 5.0}, "limit"),
        ("recall", {"query": "ledger", "limit": True}, "limit"),
        ("recall", {"query": 7}, "query"),
        ("recall", {"query": "ledger", "paths": "billing/ledger.py"}, "paths"),
        ("recall", {"query": "ledger\ud800"}, "query = 'U+D800'"),
        ("recall", {"query": "ledger", "paths": [[[[["x"]]]]] * 1 + [["y"]]}, "paths"),
        ("recall", {"query": "ledger", "colour": "red"}, "'colour'"),
        ("briefing", {"refresh": "true"}, "refresh"),
        ("vote_fact", {"fact_id": 12, "stance": "support"}, "fact_id"),
        ("update_notes", {"text": "x", "base_revision": "3", "mode": "replace"}, "base_revision"),
    ],
)
def test_mcp_refuses_wrong_types_naming_the_argument(
    world: Any, name: str, arguments: dict[str, Any], argument: str
) -> None:
    before = store_digest(world.home)
    message = _mcp_error(world, name, arguments)
    assert message.startswith("invalid_input: "), message
    assert argument in message, message
    assert store_digest(world.home) == before


@pytest.mark.parametrize("spelling", ["NaN", "Infinity", "-Infinity"])
def test_mcp_refuses_non_finite_numbers_sent_on_the_wire(
    world: Any, tmp_path: Path, spelling: str
) -> None:
    """The SDK client turns NaN into null before sending (pydantic's JSON mode), so a client
    that sends the literal is spoken for with raw JSON-RPC lines to a real ``fleetmem mcp``."""
    import subprocess

    before = store_digest(world.home)
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    call = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": "ledger", "limit": "LIMIT"}},
        }
    )
    wire = "\n".join([*(json.dumps(line) for line in lines), call.replace('"LIMIT"', spelling)])
    with subprocess.Popen(
        [FLEETMEM, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_for(world.home, FLEETMEM_RUN_TOKEN=world.me.token),
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(wire + "\n")
        proc.stdin.flush()
        answers: dict[int, Any] = {}
        while 2 not in answers:
            line = proc.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if "id" in message:
                answers[message["id"]] = message
        _, stderr = proc.communicate(timeout=30)
    assert 2 in answers, stderr[-2000:]
    result = answers[2].get("result") or {}
    assert result.get("isError"), answers[2]
    message = result["content"][0]["text"]
    assert message.startswith("invalid_input: ") and "limit = " in message, message
    assert "Traceback" not in stderr, stderr[-2000:]
    assert store_digest(world.home) == before


def test_mcp_nesting_is_bounded(world: Any) -> None:
    deep: Any = "x"
    for _ in range(RNG.randint(40, 200)):
        deep = [deep]
    message = _mcp_error(world, "recall", {"query": "ledger", "paths": deep})
    assert message.startswith("invalid_input: ") and "nested deeper" in message, message
