"""A hung episode provider costs a run at most ``provider_timeout``, at spawn and at close.

``fleetmem run`` is a real subprocess; the provider is a real upstream stdio process that
starts and never answers. Durations are never asserted (bench/bench_hooks.py measures them):
the log says which deadline was applied, and the run's outcome and record are unaffected.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Callable

import pytest

from fleetmem.core.fence import parse_block
from fleetmem.core.wrapper import parse
from fleetmem.integrations.claude_hooks import ClaudeHooks
from fleetmem.service.bootstrap import App
from tests.integrations.conftest import World, toml_str
from tests.surfaces.cli_helpers import run_cli

HUNG = (
    f"[mcp.hung]\ncommand = {toml_str(sys.executable)}\n"
    'args = ["-c", "import time; time.sleep(60)"]\n'
    '[memory]\nprovider = "hung"\n[memory.episodes]\nprovider_timeout = "1s"\n'
)


def test_a_hung_provider_is_given_up_on_at_provider_timeout_when_the_run_closes(
    world: World,
) -> None:
    world.config(
        '[agent.quick]\nadapter = "command"\ncommand = "/bin/echo"\nprompt = "hello"\n'
        "memory_briefing = true\n" + HUNG
    )
    proc = run_cli(world.home, "-v", "run", "quick", "--workdir", str(world.repo), check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    # Before the spawn: the briefing went without episodes after provider_timeout.
    assert "briefing.provider_slow agent=quick after=1s" in proc.stderr
    # At the close: the episode stays queued after provider_timeout, not the built-in's 10 s.
    [pending] = [line for line in proc.stderr.splitlines() if "episode.record_pending" in line]
    assert pending.endswith("after=1s")
    found = re.search(r"fleetmem: run (\S+) of quick: (\S+) \((\S+)\); episode (\S+)", proc.stderr)
    assert found, proc.stderr
    run_id, outcome, reason, episode_id = found.groups()
    assert (outcome, reason) == ("succeeded", "completed")
    record = world.record(run_id)
    assert record["outcome"] == "succeeded"
    with world.db() as conn:
        [job] = conn.execute(
            "SELECT kind, provider FROM jobs WHERE episode_id = ?",
            (episode_id,),
        ).fetchall()
    assert tuple(job) == ("record", "hung")  # left for the daemon's retries, not lost


def test_a_session_start_past_its_answer_deadline_briefs_at_once_without_episodes(
    world: World, open_app: Callable[[], App], caplog: pytest.LogCaptureFixture
) -> None:
    # A healthy built-in provider, but the hook has no time left (a loaded machine): the
    # briefing goes out without waiting on the provider at all, marked so, facts intact.
    world.config("[agent.claude-code]\nmemory_briefing = true\n")
    app = open_app()
    app.facts.add("Run the tests with -p no:cacheprovider.")
    hooks = ClaudeHooks(
        app, agent="claude-code", environ={}, owner=lambda: None, answer_by=time.monotonic() - 1
    )
    payload = {"session_id": "s-late", "cwd": str(world.repo), "source": "startup"}
    with caplog.at_level(logging.INFO, logger="fleetmem"):
        answer = json.loads(hooks.handle("SessionStart", payload))
    block, _ = parse_block(answer["hookSpecificOutput"]["additionalContext"])
    document, _ = parse(block.body)
    facts, episodes = document.section("facts"), document.section("episodes")
    assert facts is not None and "no:cacheprovider" in facts.items[0].text
    assert episodes is not None and ("degraded", "provider_unavailable") in episodes.attrs
    assert "briefing.provider_slow agent=claude-code after=0s" in caplog.messages
    # With time to spare, the same healthy provider answers in full.
    on_time = ClaudeHooks(
        app, agent="claude-code", environ={}, owner=lambda: None,
        answer_by=time.monotonic() + 60,
    )  # fmt: skip
    again = json.loads(on_time.handle("SessionStart", {**payload, "session_id": "s-on-time"}))
    block, _ = parse_block(again["hookSpecificOutput"]["additionalContext"])
    episodes = parse(block.body)[0].section("episodes")
    assert episodes is not None and ("degraded", "provider_unavailable") not in episodes.attrs
