"""The real ``claude`` CLI (the version the Makefile installs) against a stand-in model API on
127.0.0.1: what a Claude Code session's model is actually given (issue 18 part 2).

Two things are proved on the request bodies the CLI sends, which are what the model reads:
the limit in :data:`fleetmem.core.hosts.CLAUDE_CODE_SESSION` is the one this Claude Code
applies to a hook's ``additionalContext`` (at the limit the text arrives whole, one unit past
it only a preview does); and with ``fleetmem install claude-code``, a context longer than that
reaches the model as fleetmem fitted it, a context file's first and last lines included,
with the parts left out read back through the MCP resource the closing note names.
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

from fleetmem.core.hosts import CLAUDE_CODE_SESSION, CONTEXT_URI, utf16_units
from fleetmem.service.bootstrap import build
from fleetmem.service.files import Actor
from tests.integrations.conftest import REPO_KEY, World
from tests.integrations.conftest import world as world  # the fixture: home and a repository
from tests.integrations.fixtures.anthropic_standin import serving, texts
from tests.surfaces.cli_helpers import FLEETMEM, env_for

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / ".venv" / "node" / "node_modules" / ".bin" / "claude"
OVERSIZED = "Output too large"
SESSION_LEAD = "SessionStart hook additional context: "
MARINA = Actor("user", "marina")
NOTE_END = "when you need it."  # the last words of the closing note (core.hosts.pull_note)


@pytest.fixture(autouse=True)
def _claude_installed() -> None:
    assert CLAUDE.exists(), f"{CLAUDE} is missing: `make test` installs it with npm"


def claude(world: World, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = env_for(
        world.home,
        HOME=str(world.tmp),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="sk-ant-standin-" + os.urandom(8).hex(),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    env.pop("CLAUDE_ENV_FILE", None)
    proc = subprocess.run(
        [str(CLAUDE), "-p", "Look at the ledger tests.", "--output-format", "json", *args],
        cwd=world.repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


def session_context(request: dict[str, Any]) -> str | None:
    """The SessionStart hook's context as the model was given it."""
    for text in texts(request):
        at = text.find(SESSION_LEAD)
        if at >= 0:
            return text[at + len(SESSION_LEAD) :]
    return None


VOCABULARY = [
    "ledger",
    "fixture",
    "deploy",
    "billing",
    "cache",
    "queue",
    "retry",
    "schema",
    "token",
    "shard",
    "replica",
    "migration",
    "settlement",
    "invoice",
    "rollback",
    "timeout",
    "worker",
    "cron",
    "backlog",
    "checksum",
    "partition",
    "snapshot",
]


def lines(rng: random.Random, count: int, first: str, last: str) -> str:
    body = [" ".join(rng.choice(VOCABULARY) for _ in range(9)) for _ in range(count)]
    return "\n".join([first, *body, last]) + "\n"


def write_settings(world: World, hook: Path) -> None:
    settings = world.tmp / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    command = f"{sys.executable} {hook}"
    groups = [{"hooks": [{"type": "command", "command": command}]}]
    settings.write_text(json.dumps({"hooks": {"SessionStart": groups}}), encoding="utf-8")


@pytest.mark.parametrize("char", ["x", "😀"], ids=["ascii", "astral"])
def test_the_hook_limit_is_the_one_this_claude_code_applies(world: World, char: str) -> None:
    """``additionalContext`` of exactly the profile's limit arrives whole; one unit more
    arrives as a preview and a path (which is why fleetmem fits the context first)."""
    limit = CLAUDE_CODE_SESSION.limit
    assert limit is not None
    hook = world.tmp / "sized_hook.py"
    hook.write_text(
        "import json, os\n"
        "n = int(os.environ['SIZED_UNITS']); ch = os.environ['SIZED_CHAR']\n"
        "head, tail = 'FIRST-LINE\\n', '\\nLAST-LINE'\n"
        "unit = 2 if ord(ch) > 0xFFFF else 1\n"
        "rest = n - len(head) - len(tail)\n"
        "body = ch * (rest // unit) + 'y' * (rest % unit)\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'SessionStart',"
        " 'additionalContext': head + body + tail}}))\n",
        encoding="utf-8",
    )
    write_settings(world, hook)
    seen = {}
    for units in (limit, limit + 1):
        os.environ["SIZED_UNITS"], os.environ["SIZED_CHAR"] = str(units), char
        try:
            with serving() as (standin, url):
                claude(world, url)
        finally:
            del os.environ["SIZED_UNITS"], os.environ["SIZED_CHAR"]
        given = session_context(standin.model_requests[0]) or ""
        seen[units] = ("LAST-LINE" in given, OVERSIZED in given)
    assert seen == {limit: (True, False), limit + 1: (False, True)}


# (Claude Code 2.1.197 waits about 6 s for an alwaysLoad server: measured, a 5 s late start
# still read the resource and a 7 s one did not; 4 s plus the server's own start on a loaded
# CI machine failed once, so the late start here leaves room for the machine.)
@pytest.mark.parametrize("slow_start_s", [0, 2])
def test_a_long_context_reaches_the_model_fitted_and_the_rest_by_the_resource(
    world: World, slow_start_s: int
) -> None:
    """With ``slow_start_s``, the MCP server starts that much later (a loaded machine): the
    installed entry's ``alwaysLoad`` has Claude Code wait for it before the first turn, which
    reads its resource (without it, this CLI ran the turn first and refused the tool)."""
    rng = random.Random()
    tag = os.urandom(4).hex()
    notes = lines(rng, 6, f"NOTES-FIRST-{tag}", f"NOTES-LAST-{tag}")
    notebook = lines(rng, 200, f"NB-FIRST-{tag}", f"NB-LAST-{tag}")
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        app.files.save(
            app.files.ref("notes", agent="claude-code"), notes, base_revision=0, actor=MARINA
        )
        app.files.save(
            app.files.ref("notebook", repo=REPO_KEY), notebook, base_revision=0, actor=MARINA
        )
        whole = app.files.assemble("claude-code", repo=REPO_KEY).assembly.text
    finally:
        app.close()
    assert utf16_units(whole) > CLAUDE_CODE_SESSION.limit  # type: ignore[operator]
    installed = subprocess.run(
        [FLEETMEM, "install", "claude-code"],
        env=env_for(world.home, HOME=str(world.tmp)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "settings.json" in installed.stdout
    if slow_start_s:
        _start_later(world.tmp / ".claude.json", world.tmp / "slow-fleetmem", slow_start_s)
    read = {"tool": "ReadMcpResourceTool", "input": {"server": "fleetmem", "uri": CONTEXT_URI}}
    with serving([read, "done."]) as (standin, url):
        claude(world, url, "--allowedTools", "ReadMcpResourceTool")
    first, *later = standin.model_requests
    given = session_context(first)
    assert given is not None and OVERSIZED not in given
    # The Notes file reaches the model from its first line to its last; the notebook, left
    # out whole or cut to its head, is named in the closing note with the resource.
    assert f"NOTES-FIRST-{tag}" in given and f"NOTES-LAST-{tag}" in given
    assert f"NB-LAST-{tag}" not in given
    assert "Not included above" in given and CONTEXT_URI in given
    ours = given[: given.index(NOTE_END) + len(NOTE_END)]
    assert utf16_units(ours) <= CLAUDE_CODE_SESSION.limit  # type: ignore[operator]
    # The model read the resource: the whole context, the notebook's last line included.
    assert later, "the CLI never sent the tool result back"
    pulled = "\n".join(texts(later[0]))
    assert f"NB-FIRST-{tag}" in pulled and f"NB-LAST-{tag}" in pulled
    # The session ended: nothing of its context is kept any more.
    kept = world.home / "run" / "context"
    assert not kept.exists() or list(kept.iterdir()) == []


def _start_later(config: Path, wrapper: Path, seconds: int) -> None:
    """Have the installed MCP server entry start ``seconds`` late, through ``wrapper``."""
    state = json.loads(config.read_text())
    server = state["mcpServers"]["fleetmem"]
    assert server["alwaysLoad"] is True
    wrapper.write_text(f'#!/bin/sh\nsleep {seconds}\nexec "{server["command"]}" "$@"\n')
    wrapper.chmod(0o755)
    server["command"] = str(wrapper)
    config.write_text(json.dumps(state))
