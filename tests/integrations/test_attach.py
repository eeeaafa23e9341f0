"""The ``fleetmem mcp`` Claude Code starts from its settings is attributed to its session's run.

Each session is a real parent process (``fixtures/claude_session.py``) standing in for Claude
Code: it runs the real hooks through ``/bin/sh -c`` and talks to a real ``fleetmem mcp
--attach claude-code`` child with the official MCP SDK client, with no run token anywhere in
the server's environment. Two sessions run at once over the same repository and store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fleetmem.core.fence import parse_block
from fleetmem.integrations.attach import Attachment, Owners, ProcessId
from fleetmem.service.bootstrap import App
from tests.integrations.conftest import FIXTURES, World
from tests.surfaces.cli_helpers import FLEETMEM, env_for

WAIT_S = 120.0


def _start(
    world: World, directory: Path, name: str, *flags: str
) -> tuple[str, subprocess.Popen[bytes]]:
    session_id = str(uuid.uuid4())
    proc = subprocess.Popen(
        [sys.executable, str(FIXTURES / "claude_session.py"), FLEETMEM, str(world.repo),
         session_id, str(directory), name, *flags],
        env=env_for(world.home, HOME=str(world.tmp)), cwd=world.repo,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    return session_id, proc


def _await_marker(path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        for proc in procs:
            if proc.poll() is not None:
                _, err = proc.communicate()
                raise AssertionError(f"a session ended early: {err.decode()[-3000:]}")
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _briefing_of(context: str) -> str:
    answer = json.loads(context)
    block, rest = parse_block(answer["hookSpecificOutput"]["additionalContext"])
    assert rest == ""
    return block.body


def test_two_concurrent_sessions_each_get_their_own_run(
    world: World, open_app: Callable[[], App], tmp_path: Path
) -> None:
    world.config("[agent.claude-code]\nmemory_briefing = true\n")
    app = open_app()
    app.facts.add("Run the tests with -p no:cacheprovider.")
    app.close()
    directory = tmp_path / "sessions"
    directory.mkdir()
    # One server starts before its session's SessionStart hook (Claude Code starts both at
    # once), the other after it.
    # The second starts once the first is in its session (two sessions starting at the same
    # instant on two shared cores would only measure the machine), and both are then live.
    first_id, first = _start(world, directory, "first")
    _await_marker(directory / "first.started", [first])
    second_id, second = _start(world, directory, "second", "--server-after-hook")
    procs = [first, second]
    _await_marker(directory / "second.started", procs)
    (directory / "release").write_text("")
    for proc in procs:
        _, err = proc.communicate(timeout=WAIT_S)
        assert proc.returncode == 0, err.decode()[-3000:]
    seen: dict[str, dict[str, Any]] = {
        name: json.loads((directory / f"{name}.json").read_text()) for name in ("first", "second")
    }

    # Before its hook ran, the server had no run to serve.
    failed, message = seen["first"]["before"]
    assert failed and message.startswith("not_attributed: ")
    bodies = {}
    app = open_app()
    for name, session_id in (("first", first_id), ("second", second_id)):
        out = seen[name]
        run_id = "claude-" + session_id
        stored = app.agent_memory.stored_briefing(run_id)
        assert stored is not None and stored.text, name
        body = stored.text
        bodies[name] = body
        # The hook gave this session its run's briefing; the tool and the resource serve the
        # same bytes: that run's, not the other session's.
        assert _briefing_of(out["context"]) == body
        assert out["briefing"] == [False, body]
        assert out["resource"] == body
        assert out["recall"][0] is False and "no:cacheprovider" in out["recall"][1]
        # Once the session ended, its entry is gone: nothing is attributed to a closed run.
        failed, message = out["ended"]
        assert failed and message.startswith("not_attributed: ")
        surfaces = sorted(e.surface for e in app.facts.offered_to_run(run_id))
        assert surfaces == ["briefing", "prompt", "recall", "resource"], (name, surfaces)
    # Each run's document is its own (its own nonce): no session was served the other's.
    assert bodies["first"] != bodies["second"]
    assert list((world.home / "hooks" / "claude-code" / "owners").glob("*.json")) == []
    mcp_err = (directory / "first.mcp.err").read_text()
    assert "no:cacheprovider" not in mcp_err


def test_the_owner_is_the_parent_looking_through_a_shell_wrapper(tmp_path: Path) -> None:
    probe = (
        "import json, os; from fleetmem.integrations.attach import session_owner; "
        "o = session_owner(); print(json.dumps([os.getpid(), o.pid, o.started]))"
    )
    # `; true` keeps the shell alive as a wrapper between us and the probe.
    for argv in (
        [sys.executable, "-c", probe],
        ["/bin/sh", "-c", f"{sys.executable} -c '{probe}'; true"],
    ):
        out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
        _probe_pid, owner_pid, started = json.loads(out.stdout)
        assert owner_pid == os.getpid(), argv
        assert started == session_owner_of(os.getpid()).started


def test_an_entry_belongs_to_one_process_lifetime(tmp_path: Path) -> None:
    owners = Owners(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        owner = session_owner_of(child.pid)
        entry = Attachment(session_id="s1", run_id="claude-s1", token="t", agent="a", at=1.0)
        owners.record(owner, entry)
        assert owners.find(owner) == entry
        path = next(owners.directory.glob("*.json"))
        assert path.stat().st_mode & 0o777 == 0o600
        # The same pid with another start time is another process (a recycled pid).
        assert owners.find(ProcessId(owner.pid, owner.started + "0")) is None
    finally:
        child.communicate(b"")
    # Once the process is gone, the next record prunes its entry.
    live = session_owner_of(os.getpid())
    owners.record(live, Attachment("s2", "claude-s2", "t2", "a", 2.0))
    assert owners.find(owner) is None and owners.find(live) is not None
    assert owners.forget_session("s2") == 1 and owners.find(live) is None


def session_owner_of(pid: int) -> ProcessId:
    """The identity of ``pid`` itself (not of its parent)."""
    from fleetmem.integrations.attach import process_info

    info = process_info(pid)
    assert info is not None
    return ProcessId(pid, info.started)


def test_a_run_token_in_the_environment_wins_over_attaching(
    world: World, open_app: Callable[[], App], tmp_path: Path
) -> None:
    # Claude Code started by `fleetmem run` passes the run's token on to the servers it starts.
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from tests.mcp.conftest import client_for, ok_text, run_async

    world.config("")
    app = open_app()
    app.facts.add("Run the tests with -p no:cacheprovider.")
    opened = app.runs.open_run("nightly-triage", workdir=str(world.repo), run_id="run-supervised")
    params = StdioServerParameters(
        command=FLEETMEM,
        args=["mcp", "--attach", "claude-code"],
        env=env_for(world.home, FLEETMEM_RUN_TOKEN=opened.token),
    )

    async def ask() -> str:
        with (tmp_path / "mcp.err").open("a") as err:
            async with client_for(stdio_client(params, errlog=err)) as client:
                return str(ok_text(await client.call_tool("briefing", {})))

    text = run_async(ask)
    stored = open_app().agent_memory.stored_briefing("run-supervised")
    assert stored is not None and stored.text == text and "no:cacheprovider" in text
