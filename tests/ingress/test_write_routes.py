"""Every write route passes the ingress boundary: HTTP, CLI, MCP tools that write, hooks.

Each route is driven for real (a ``fleetmem serve`` on 127.0.0.1, ``fleetmem`` subprocesses,
the official MCP SDK client, ``fleetmem hook claude-code`` fed payloads on stdin) with fresh
random secrets in every field it stores; afterwards every byte under the home (database, WAL,
SHM, logs, state files) and everything the processes printed is searched for the secrets.
"""

from __future__ import annotations

import json
import random
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fleetmem.service.bootstrap import App
from fleetmem.surfaces.mcp.server import build_server, fixed_token
from tests.conftest import write_config
from tests.ingress.corpus import Sample, samples
from tests.ingress.home_scan import files_scanned, leaks
from tests.ingress.schema_walk import base_record
from tests.integrations.conftest import World
from tests.integrations.conftest import world as world  # a fixture
from tests.integrations.test_claude_hooks import _wait_for_detached
from tests.mcp.conftest import call_tools
from tests.surfaces.cli_helpers import FLEETMEM, env_for, run_cli
from tests.surfaces.test_http import VECTORS_OFF, Daemon

API = "github.com/acme/api"


def _record(run_id: str, sample: Sample) -> dict[str, Any]:
    """A valid record carrying ``sample`` in every text field (labels stay clean)."""
    record = base_record(run_id)
    record["prompt"] = f"Deploy with {sample.text} please."
    record["result_text"] = f"Used {sample.text} to reach the database."
    record["pull_request"] = f"https://github.com/acme/api/pull/7?via={sample.text}"
    s1 = record["sessions"][0]
    s1["cwd"] = f"/home/dev/src/api/{sample.text}"
    s1["events"][0]["path"] = f"deploy/{sample.text}"
    s1["events"][2]["args"] = {"cmd": f"psql {sample.text}"}
    return record


def _labelled(run_id: str, sample: Sample) -> dict[str, Any]:
    record = base_record(run_id)
    record["adapter"] = f"claude-{sample.text}"
    return record


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_http_write_routes(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    daemon = Daemon(home)
    planted = samples(random.Random())
    try:
        c = daemon.client
        for n, sample in enumerate(planted):
            bad = c.post("/api/v1/runs/open", json={"agent": "coder", "repo": API,
                                                    "adapter": f"x-{sample.text}"})  # fmt: skip
            assert bad.status_code == 400 and bad.json()["error"]["field"] == "adapter", bad.text
            bad = c.post("/api/v1/runs/open", json={"agent": "coder", "repo": API,
                                                    "branch": f"fix/{sample.text}"})  # fmt: skip
            assert bad.status_code == 400 and bad.json()["error"]["field"] == "branch", bad.text
            opened = c.post("/api/v1/runs/open", json={"agent": "coder", "repo": API})
            assert opened.status_code == 201, opened.text
            auth = {"Authorization": f"Bearer {opened.json()['token']}"}
            beat = c.post(
                "/api/v1/runs/heartbeat", json={"files": [f"deploy/{sample.text}"]}, headers=auth
            )
            assert beat.status_code == 200, beat.text
            stored = c.post("/api/v1/runs", json=_record(f"http-{n}", sample))
            assert stored.status_code == 201, stored.text
            refused = c.post("/api/v1/runs", json=_labelled(f"http-label-{n}", sample))
            assert refused.status_code == 400 and refused.json()["error"]["field"] == "adapter"
            user = c.put("/api/v1/files/glossary", json={"text": "Terms.", "base_revision": 0,
                                                         "user": f"ops-{sample.text}"})  # fmt: skip
            assert user.status_code == 400 and user.json()["error"]["field"] == "user", user.text
            fact = c.post("/api/v1/facts", json={"body": f"The deploy key is {sample.text}."})
            assert fact.status_code in (201, 400), fact.text
            answers = [bad.text, refused.text, user.text, fact.text]
            answers.append(c.get("/api/v1/runs", params={"limit": 1000}).text)
            answers.append(c.get(f"/api/v1/runs/http-{n}").text)
            assert leaks(home, [sample], [a.encode() for a in answers]) == []
    finally:
        err = daemon.stop()
    assert leaks(home, planted, [err.encode()]) == []
    assert any(n.endswith("-wal") for n in files_scanned(home))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_cli_write_routes(home: Path, tmp_path: Path) -> None:
    write_config(home, VECTORS_OFF)
    planted = samples(random.Random())
    printed: list[bytes] = []
    for n, sample in enumerate(planted):
        path = tmp_path / f"record-{n}.json"
        path.write_text(json.dumps(_record(f"cli-{n}", sample)), encoding="utf-8")
        printed.append(run_cli(home, "runs", "ingest", str(path)).stdout.encode())
        path.write_text(json.dumps(_labelled(f"cli-label-{n}", sample)), encoding="utf-8")
        refused = run_cli(home, "runs", "ingest", str(path), check=False)
        assert refused.returncode != 0 and "adapter" in refused.stderr
        # Each process costs seconds on a shared machine: the label routes take turns.
        if n % 2 == 0:
            other = run_cli(home, "runs", "open", "coder", "--repo", API, "--adapter",
                            f"x-{sample.text}", check=False)  # fmt: skip
            assert other.returncode == 2 and "adapter" in other.stderr
        else:
            other = run_cli(home, "files", "edit", "glossary", "--base", "0", "--user",
                            f"ops-{sample.text}", stdin=b"Terms.", check=False)  # fmt: skip
            assert other.returncode == 2 and "user" in other.stderr
        for proc in (refused, other):
            printed += [proc.stdout.encode(), proc.stderr.encode()]
        assert leaks(home, [sample], printed) == []
    printed.append(run_cli(home, "runs", "list", "--json").stdout.encode())
    assert leaks(home, planted, printed) == []


def test_mcp_write_tools(make_app: Callable[..., App]) -> None:
    app = make_app()
    planted = samples(random.Random())
    opened = app.runs.open_run("api-fixer", repo=API, run_id="mcp-run")
    server = build_server(app, fixed_token(opened.token))
    fact = app.facts.add("Deploys freeze on Fridays.").fact

    calls = [
        call
        for sample in planted
        for call in (
            ("remember", {"text": f"The staging key is {sample.text}."}),
            ("note_project", {"text": f"Reach the db with {sample.text}."}),
            ("update_notes", {"text": f"My key: {sample.text}"}),
            ("vote_fact", {"fact_id": fact.id, "stance": "up",
                           "reason": f"worked with {sample.text}"}),
        )
    ]  # fmt: skip
    try:
        said = call_tools(server, calls)
    finally:
        server.close()
    assert leaks(app.home, planted, [s.encode() for s in said]) == []


def _hook(w: World, event: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [FLEETMEM, "hook", "claude-code", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env_for(w.home),
        cwd=w.repo,
        timeout=60,
        check=False,
    )


def _transcript(path: Path, sid: str, cwd: Path, sample: Sample) -> None:
    lines = [
        {"type": "user", "sessionId": sid, "cwd": str(cwd), "uuid": "u1",
         "message": {"role": "user", "content": f"Use {sample.text}"},
         "timestamp": "2026-11-28T09:14:03.000Z"},
        {"type": "assistant", "sessionId": sid, "cwd": str(cwd), "uuid": "a1",
         "message": {"role": "assistant", "model": f"claude-{sample.text}",
                     "content": [{"type": "tool_use", "id": "t1", "name": "Edit",
                                  "input": {"file_path": f"{cwd}/deploy/{sample.text}"}},
                                 {"type": "text", "text": f"Connected with {sample.text}."}]},
         "timestamp": "2026-11-28T09:14:09.000Z"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_hook_entry(world: World) -> None:
    world.config("[agent.claude-code]\n")
    planted = samples(random.Random())
    printed: list[bytes] = []
    for sample in planted:
        sid = str(uuid.uuid4())
        transcript = world.tmp / f"{sid}.jsonl"
        _transcript(transcript, sid, world.repo, sample)
        base = {"session_id": sid, "cwd": str(world.repo), "transcript_path": str(transcript),
                "permission_mode": f"mode-{sample.text}"}  # fmt: skip
        calls = [
            ("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
            ("UserPromptSubmit", {**base, "prompt": f"remember: the deploy key is {sample.text}"}),
            ("PostToolUse", {**base, "tool_name": "Edit",
                             "tool_input": {"file_path": f"{world.repo}/deploy/{sample.text}"}}),
            ("PostToolUse", {**base, "tool_name": "Bash",
                             "tool_input": {"command": f"PGPASSWORD={sample.text} pytest -q"}}),
            ("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "exit"}),
        ]  # fmt: skip
        for event, payload in calls:
            proc = _hook(world, event, payload)
            assert proc.returncode == 0
            printed += [proc.stdout, proc.stderr]
        transcript.unlink()  # the transcript is the agent's file, not fleetmem's
    _wait_for_detached(world.home)
    assert (world.home / "logs" / "hooks.log").exists()
    assert leaks(world.home, planted, printed) == []
    with world.db() as conn:
        runs = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert runs == len(planted)  # every session recorded: the secrets cost nothing but text
