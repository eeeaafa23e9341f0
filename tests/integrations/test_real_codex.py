"""The real ``codex`` CLI (the version the Makefile installs) against a stand-in for the
Responses API on 127.0.0.1: an interactive Codex session as fleetmem sees it (issue 18 part 4).

``codex exec`` runs one turn of a session exactly as the TUI does (its hooks, its MCP servers,
its rollout), so it stands for the person's session here. The hooks are run with
``--dangerously-bypass-hook-trust``: Codex runs new hooks only once a person has trusted them
in ``/hooks``, which a test cannot do. Two things are proved on the request bodies the CLI
sends, which are what the model reads: the limit in :data:`fleetmem.core.hosts.CODEX_SESSION`
is the one this Codex applies to a hook's ``additionalContext``; and with ``fleetmem install
codex`` a session is given its fitted context and briefing, its "remember that …" is stored,
its MCP calls are attributed to its run, and it is recorded as that run when it ends.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fleetmem.core.hosts import CODEX_SESSION, CONTEXT_URI
from fleetmem.service.bootstrap import build
from fleetmem.service.files import Actor
from tests.integrations.conftest import REPO_KEY, World
from tests.integrations.conftest import world as world  # the fixture: home and a repository
from tests.integrations.fixtures.openai_standin import StandIn, serving
from tests.integrations.test_claude_hooks import _wait_for_detached
from tests.integrations.test_real_claude import lines
from tests.surfaces.cli_helpers import FLEETMEM, env_for

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / ".venv" / "node" / "node_modules" / ".bin" / "codex"
MARINA = Actor("user", "marina")
TRUNCATED = "tokens truncated"


@pytest.fixture(autouse=True)
def _codex_installed() -> None:
    assert CODEX.exists(), f"{CODEX} is missing: `make test` installs it with npm"


def codex(world: World, base_url: str, prompt: str, *config: str) -> list[dict[str, Any]]:
    """Run one ``codex exec`` turn in the world's repository; its JSON events."""
    codex_home = world.tmp / "codex"
    codex_home.mkdir(exist_ok=True)
    provider = (f'model_providers.standin={{name="standin", base_url="{base_url}", '
                'wire_api="responses", env_key="STANDIN_KEY"}')  # fmt: skip
    env = env_for(
        world.home,
        HOME=str(world.tmp),
        CODEX_HOME=str(codex_home),
        STANDIN_KEY="sk-standin-" + os.urandom(8).hex(),
    )
    proc = subprocess.run(
        [str(CODEX), "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
         "-c", "model_provider=standin", "-c", provider, "-c", "model=gpt-5",
         *[arg for item in config for arg in ("-c", item)], prompt],
        cwd=world.repo, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=180, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def developer_texts(request: dict[str, Any]) -> list[str]:
    """The developer messages of a request: where Codex puts what hooks add."""
    return [
        part.get("text", "")
        for item in request.get("input") or []
        if isinstance(item, dict) and item.get("role") == "developer"
        for part in item.get("content") or []
        if isinstance(part, dict)
    ]


@pytest.mark.parametrize("char", ["x", "é"], ids=["ascii", "two-byte"])
def test_the_hook_limit_is_the_one_this_codex_applies(world: World, char: str) -> None:
    """``additionalContext`` of exactly the profile's limit in UTF-8 bytes arrives whole; one
    character more arrives cut in the middle (which is why fleetmem fits the context first)."""
    limit = CODEX_SESSION.limit
    assert limit is not None
    tag = os.urandom(4).hex()
    hook = world.tmp / "sized_hook.py"
    hook.write_text(
        "import json, os, sys\n"
        "sys.stdin.read()\n"
        "n = int(os.environ['SIZED_BYTES']); ch = os.environ['SIZED_CHAR']\n"
        f"head, tail = 'FIRST-{tag}\\n', '\\nLAST-{tag}'\n"
        "rest = n - len(head) - len(tail)\n"
        "width = len(ch.encode())\n"
        "body = ch * (rest // width) + 'y' * (rest % width)\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'SessionStart',"
        " 'additionalContext': head + body + tail}}))\n",
        encoding="utf-8",
    )
    codex_home = world.tmp / "codex"
    codex_home.mkdir()
    groups = [{"hooks": [{"type": "command", "command": f"{sys.executable} {hook}"}]}]
    (codex_home / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": groups}}))
    seen = {}
    for size in (limit, limit + len(char.encode())):
        os.environ["SIZED_BYTES"], os.environ["SIZED_CHAR"] = str(size), char
        try:
            with serving(["ok"]) as (standin, url):
                codex(world, url, "hello")
        finally:
            del os.environ["SIZED_BYTES"], os.environ["SIZED_CHAR"]
        [given] = [t for t in developer_texts(standin.requests[0]) if f"FIRST-{tag}" in t]
        seen[size] = (given.endswith(f"LAST-{tag}") and len(given.encode()) == size,
                      TRUNCATED in given or "Full hook output" in given)  # fmt: skip
    assert seen == {limit: (True, False), limit + len(char.encode()): (False, True)}


def _tool_output(standin: StandIn, call_id: str) -> str:
    for request in standin.requests:
        for item in request.get("input") or []:
            if item.get("type") == "function_call_output" and item.get("call_id") == call_id:
                output = item.get("output")
                if isinstance(output, str):
                    return output
                return "\n".join(p.get("text", "") for p in output or [] if isinstance(p, dict))
    raise AssertionError(f"no output for {call_id}")


def test_an_installed_codex_session_is_briefed_attributed_and_recorded(world: World) -> None:
    rng = random.Random()
    tag = os.urandom(4).hex()
    world.config("[agent.codex]\nmemory_briefing = true\n")
    notes = lines(rng, 6, f"NOTES-FIRST-{tag}", f"NOTES-LAST-{tag}")
    notebook = lines(rng, 200, f"NB-FIRST-{tag}", f"NB-LAST-{tag}")
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        app.facts.add(f"Ledger fixtures {tag} freeze the clock at midnight UTC.")
        app.files.save(app.files.ref("notes", agent="codex"), notes, base_revision=0,
                       actor=MARINA)  # fmt: skip
        app.files.save(app.files.ref("notebook", repo=REPO_KEY), notebook, base_revision=0,
                       actor=MARINA)  # fmt: skip
        whole = app.files.assemble("codex", repo=REPO_KEY).assembly.text
    finally:
        app.close()
    assert len(whole.encode("utf-8")) > CODEX_SESSION.limit  # type: ignore[operator]
    subprocess.run(
        [FLEETMEM, "install", "codex"],
        env=env_for(world.home, HOME=str(world.tmp), CODEX_HOME=str(world.tmp / "codex")),
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    script = [
        {"tool": "exec_command", "arguments": {"cmd": f"{sys.executable} -m pytest -q"}},
        {"tool": "briefing", "namespace": "mcp__fleetmem", "arguments": {}},
        {"tool": "read_mcp_resource", "arguments": {"server": "fleetmem", "uri": CONTEXT_URI}},
        "The ledger test fails: VALUE is 1, the test wants 2.",
    ]
    prompt = f"remember that {tag} deploys wait for the change board. Look at the ledger tests."
    with serving(script) as (standin, url):
        # `codex exec` sends its first request at once; the grace lets fleetmem's MCP server
        # (about 1.3 s to start) be listed in it, as it is by the time a person types.
        events = codex(world, url, prompt, "mcp_optional_startup_grace_ms=20000")
    [thread] = [e["thread_id"] for e in events if e.get("type") == "thread.started"]
    run_id = f"codex-{thread}"
    first = standin.requests[0]
    given = "\n".join(t for t in developer_texts(first) if f"NOTES-FIRST-{tag}" in t)
    # The context fitted to Codex's limit with the briefing beside it: nothing cut unseen.
    assert given and TRUNCATED not in given
    assert len(given.encode("utf-8")) <= CODEX_SESSION.limit  # type: ignore[operator]
    assert f"NOTES-LAST-{tag}" in given and f"NB-LAST-{tag}" not in given
    assert "Not included above" in given and CONTEXT_URI in given
    assert '<fleetmem-memory kind="briefing"' in given and tag in given  # the fact's briefing
    # The request to remember was stored and confirmed to the model with its wording.
    assert any("fleetmem remembered" in t and tag in t for t in developer_texts(first))
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        [fact] = [f for f in app.facts.list().items if f"{tag} deploys" in f.body]
        assert fact.status == "active"
    finally:
        app.close()
    # The session's MCP calls were its run's: the briefing names the repository (a call
    # with no run is refused), and the resource gives what the start left out.
    briefing = _tool_output(standin, "call_0002")
    assert '<fleetmem-memory kind="briefing"' in briefing and REPO_KEY in briefing
    pulled = _tool_output(standin, "call_0003")
    assert f"NB-FIRST-{tag}" in pulled and f"NB-LAST-{tag}" in pulled
    # The session ended: it is recorded as its run, from its rollout.
    record = world.wait_for_record(run_id)
    assert record["adapter"] == "codex" and record["agent"] == "codex"
    assert record["model"]["served"] == "gpt-5"
    assert (record["outcome"], record["reason"]) == ("failed", "verify_failed")
    [session] = record["sessions"]
    assert session["cwd"] == str(world.repo)
    # The failed pytest run, read from the rollout with its exit code, as a failed check.
    assert {"type": "verify", "passed": False, "error_class": "test_failure"} in session["events"]
    _wait_for_detached(world.home)
