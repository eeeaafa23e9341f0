"""Real runs receive their assembled context (issue 7, gap "nothing reaches agents").

``fleetmem run`` is a real subprocess over a real repository and store; the agents are the
fixture executables of tests/integrations (they log the argv and environment they got) or a
small script for the ``command`` adapter. The Claude Code hook runs as Claude Code runs it.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import tomllib
import uuid
from pathlib import Path
from typing import Any

from fleetmem import metrics
from fleetmem.integrations.context_delivery import (
    CONTEXT_FILE_ENV,
    deliver,
    for_session,
    toml_string,
    with_options,
)
from fleetmem.service.bootstrap import build
from fleetmem.service.files import Actor
from tests.integrations.conftest import FIXTURES, REPO_KEY, World, make_repo, toml_str
from tests.integrations.conftest import world as world  # the fixture: home, repo, fake agents
from tests.surfaces.cli_helpers import FLEETMEM, env_for, run_cli

AGENT = "nightly-triage"
NOTES = "Always run the ledger tests twice: the first run warms the fixture cache.\n"
NEWER = "Notes written while the run was in flight.\n"
NONCE = re.compile(r'id="\d{39}"')
MARINA = Actor("user", "marina")
NOTHING_ELSE_MATCHED = "No other remembered fact matched this run."


def write_notes(world: World, text: str = NOTES, base: int = 0) -> None:
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        app.files.save(app.files.ref("notes", agent=AGENT), text, base_revision=base, actor=MARINA)
        # Pinned: a run is given it whatever its prompt (issue 18: other facts by relevance).
        app.facts.add("The settlement fixture writes rows in local time.", pin=True)
    finally:
        app.close()


def run(world: World, *args: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    proc = run_cli(world.home, "-v", "run", AGENT, "--workdir", str(world.repo), *args, check=False)
    found = re.search(r"run (run-[0-9a-f]{16}) of", proc.stderr)
    assert found, proc.stderr
    return found.group(1), proc


def preview(world: World) -> str:
    return run_cli(world.home, "context", AGENT, "--repo", REPO_KEY).stdout


def same_text(a: str, b: str) -> bool:
    """Equal but for the fence nonce, which is fresh for every assembly, and the line a run
    whose prompt matched no fact carries (a preview names no prompt)."""

    def plain(text: str) -> str:
        return NONCE.sub('id="N"', text).replace(NOTHING_ELSE_MATCHED + "\n", "")

    return plain(a) == plain(b)


def loads(world: World, run_id: str) -> dict[str, dict[str, Any]]:
    rows = json.loads(run_cli(world.home, "files", "loads", run_id, "--json").stdout)
    return {row["ref"]: row for row in rows}


def test_claude_code_gets_the_context_by_append_system_prompt_and_the_run_records_it(
    world: World,
) -> None:
    world.config(world.agent(AGENT, briefing=False))
    write_notes(world)
    expected = preview(world)
    run_id, proc = run(world, "--prompt", "Triage.")
    [start] = world.starts()
    argv = start["argv"]
    assert argv[-2:] == ["--", "Triage."]  # the prompt is untouched and still last
    given = argv[argv.index("--append-system-prompt") + 1]
    assert NOTES in given and "local time" in given
    assert same_text(given, expected)  # exactly what `fleetmem context` showed
    loaded = loads(world, run_id)
    assert loaded[f"agent/{AGENT}/notes"]["revision"] == 1
    assert loaded[f"agent/{AGENT}/notes"]["used"] == loaded[f"agent/{AGENT}/notes"]["tokens"]
    app = world.app()
    try:
        assert [e.surface for e in app.facts.offered_to_run(run_id)] == ["prompt"]
    finally:
        app.close()
    # The composed context goes to the child only: not to fleetmem's log, not to the record.
    assert "ledger tests twice" not in proc.stderr + proc.stdout
    assert "context.given" in proc.stderr and f"run={run_id}" in proc.stderr
    assert "ledger tests twice" not in json.dumps(world.record(run_id))


def test_codex_gets_the_context_as_developer_instructions_and_cuts_are_logged(
    world: World,
) -> None:
    world.config(world.agent(AGENT, adapter="codex", briefing=False) + 'model = "gpt-5-codex"\n')
    # Notes far over their 1,500-token budget: the head survives, and the cut is logged.
    filler = "".join(
        f"Observation {i}: the ledger import took {i % 7} minutes.\n" for i in range(400)
    )
    write_notes(world, NOTES + filler)
    expected = preview(world)
    run_id, proc = run(world, "--prompt", "Triage.")
    assert (
        f"context.truncated run={run_id} agent={AGENT} segment=notes"
        f" file=agent/{AGENT}/notes budget=1500" in proc.stderr
    )
    assert "Observation 200" not in proc.stderr  # the log names sizes, never the text
    [start] = world.starts()
    argv = start["argv"]
    assert argv[1:3] == ["exec", "--json"] and argv[-2:] == ["--", "Triage."]
    option = argv[argv.index("-c") + 1]
    key, _, value = option.partition("=")
    assert key == "developer_instructions"
    given = tomllib.loads(f"v = {value}")["v"]  # -c takes a TOML value
    assert NOTES in given and same_text(given, expected)


HARNESS = """\
import json, os, signal, subprocess, sys
path = os.environ.get("FLEETMEM_CONTEXT_FILE")
entry = {"path": path, "argv": sys.argv[1:]}
if path:
    entry["mode"] = oct(os.stat(path).st_mode & 0o777)
    entry["text"] = open(path, encoding="utf-8").read()
with open(os.environ["LOG"], "a", encoding="utf-8") as fh:
    fh.write(json.dumps(entry) + "\\n")
marker = os.environ["LOG"] + ".started"
if os.environ.get("CRASH_ONCE") and not os.path.exists(marker):
    open(marker, "w").close()
    # The owner saves Notes while this run is in flight, then the process dies.
    subprocess.run([os.environ["FLEETMEM"], "files", "edit", "notes", "--agent", "harness",
                    "--base", "1", "--from", os.environ["NEWER"]], check=True)
    os.kill(os.getpid(), signal.SIGKILL)
print(json.dumps({"fleetmem": "result", "text": "done"}))
"""


def harness(world: World, *, crash_once: bool = False, recall: bool = True) -> Path:
    script = world.tmp / "harness.py"
    script.write_text(HARNESS, encoding="utf-8")
    newer = world.tmp / "newer.md"
    newer.write_text(NEWER, encoding="utf-8")
    log = world.tmp / "harness.jsonl"
    env = {
        "LOG": str(log),
        "FLEETMEM": FLEETMEM,
        "NEWER": str(newer),
        "CRASH_ONCE": "1" if crash_once else "",
    }
    env_toml = ", ".join(f"{k} = {toml_str(v)}" for k, v in env.items())
    world.config(
        f'[agent.harness]\nadapter = "command"\ncommand = {toml_str(sys.executable)}\n'
        f"args = [{toml_str(script)}]\nrespawns = 1\nenv = {{ {env_toml} }}\n"
        + ("" if recall else "memory_recall = false\n")
    )
    return log


def entries(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_a_command_gets_a_private_context_file_removed_after_the_run(world: World) -> None:
    # Recall off: the preview names no prompt, a run's facts are those matching its prompt.
    log = harness(world, recall=False)
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        ref = app.files.ref("notes", agent="harness")
        app.files.save(ref, NOTES, base_revision=0, actor=MARINA)
    finally:
        app.close()
    expected = run_cli(world.home, "context", "harness", "--repo", REPO_KEY).stdout
    proc = run_cli(world.home, "run", "harness", "--workdir", str(world.repo), "--prompt", "go")
    assert proc.returncode == 0, proc.stderr
    [entry] = entries(log)
    assert entry["argv"] == ["go"]  # the prompt alone: the context is in the file
    assert entry["mode"] == "0o600" and os.path.basename(entry["path"]) == "fleetmem-context.md"
    assert NOTES in entry["text"]
    assert not os.path.exists(entry["path"])
    assert not os.path.exists(os.path.dirname(entry["path"]))
    assert same_text(entry["text"], expected)


def test_a_respawned_run_keeps_the_text_it_started_with_and_the_next_run_gets_the_new(
    world: World,
) -> None:
    log = harness(world, crash_once=True)
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        ref = app.files.ref("notes", agent="harness")
        app.files.save(ref, NOTES, base_revision=0, actor=MARINA)
    finally:
        app.close()
    first_run = run_cli(world.home, "run", "harness", "--workdir", str(world.repo), check=False)
    crashed, again = entries(log)
    assert NOTES in crashed["text"] and crashed["text"] == again["text"]  # S20: same text
    assert NEWER not in again["text"]
    found = re.search(r"run (run-[0-9a-f]{16})", first_run.stderr + first_run.stdout)
    runs = json.loads(run_cli(world.home, "runs", "list", "--json").stdout)
    run_id = found.group(1) if found else runs[0]["run_id"]
    assert loads(world, run_id)["agent/harness/notes"]["revision"] == 1  # recorded once
    run_cli(world.home, "run", "harness", "--workdir", str(world.repo), check=False)
    newest = entries(log)[-1]
    assert NEWER in newest["text"] and NOTES not in newest["text"]


def test_an_empty_context_adds_nothing(world: World) -> None:
    # Recall off: with it on, a run whose prompt matched no fact is told so (issue 18).
    world.config(world.agent(AGENT, briefing=False, extra="memory_recall = false\n"))
    run(world, "--prompt", "Triage.")
    [start] = world.starts()
    assert "--append-system-prompt" not in start["argv"]
    # The command adapter, in another repository (so the run above is no recent run of it).
    log = harness(world, recall=False)
    other = make_repo(world.tmp / "src" / "other", "git@github.com:acme/other.git")
    run_cli(world.home, "run", "harness", "--workdir", str(other), "--prompt", "go")
    [entry] = entries(log)
    assert entry["path"] is None and CONTEXT_FILE_ENV == "FLEETMEM_CONTEXT_FILE"


class Session:
    """One Claude Code session's hook calls, as Claude Code makes them."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.id = str(uuid.uuid4())

    def hook(self, event: str) -> subprocess.CompletedProcess[bytes]:
        name = {"SessionStart": "session_start", "SessionEnd": "session_end"}[event]
        raw = (FIXTURES / "hooks" / f"{name}.json").read_text(encoding="utf-8")
        transcript = self.world.tmp / "transcript.jsonl"
        if not transcript.exists():
            transcript.write_text("", encoding="utf-8")
        payload = (
            raw.replace("@SESSION@", self.id)
            .replace("@CWD@", str(self.world.repo))
            .replace("@TRANSCRIPT@", str(transcript))
        )
        return subprocess.run(
            [FLEETMEM, "hook", "claude-code", event],
            input=payload.encode(),
            capture_output=True,
            env=env_for(self.world.home),
            cwd=self.world.repo,
            timeout=60,
            check=False,
        )


def additional_context(proc: subprocess.CompletedProcess[bytes]) -> str:
    answer = json.loads(proc.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text: str = answer["hookSpecificOutput"]["additionalContext"]
    return text


def test_session_start_gives_the_context_and_a_resumed_session_the_same_text(
    world: World,
) -> None:
    world.config("[agent.claude-code]\n")
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        ref = app.files.ref("notes", agent="claude-code")
        app.files.save(ref, NOTES, base_revision=0, actor=MARINA)
    finally:
        app.close()
    expected = run_cli(world.home, "context", "claude-code", "--repo", REPO_KEY).stdout
    session = Session(world)
    first = session.hook("SessionStart")
    assert first.returncode == 0, first.stderr
    given = additional_context(first)
    assert NOTES in given and same_text(given, expected.rstrip("\n"))
    run_id = "claude-" + session.id
    assert loads(world, run_id)["agent/claude-code/notes"]["revision"] == 1
    # The owner edits Notes; the session (resumed or compacted) keeps the text it was given.
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        app.files.save(ref, NEWER, base_revision=1, actor=MARINA)
    finally:
        app.close()
    assert additional_context(session.hook("SessionStart")) == given
    end = session.hook("SessionEnd")
    assert end.returncode == 0, end.stderr
    kept = list((world.home / "hooks" / "claude-code").glob("*.context.md"))
    assert kept == []
    # A new session gets the new text.
    fresh = additional_context(Session(world).hook("SessionStart"))
    assert NEWER in fresh and NOTES not in fresh


def test_toml_strings_and_option_placement() -> None:
    tricky = 'a "quote" \\ back\nline\ttab \x7f del \x01 ctl ✓'
    assert tomllib.loads(f"v = {toml_string(tricky)}")["v"] == tricky
    assert with_options(["c", "-x", "--", "p"], ["-o", "v"], has_prompt=True) == [
        "c", "-x", "-o", "v", "--", "p",
    ]  # fmt: skip
    assert with_options(["c", "-x"], ["-o", "v"], has_prompt=False) == ["c", "-x", "-o", "v"]


def test_a_session_context_not_ready_by_the_deadline_is_left_out_and_not_kept(
    world: World,
) -> None:
    world.config("[agent.claude-code]\n")
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        ref = app.files.ref("notes", agent="claude-code")
        app.files.save(ref, NOTES, base_revision=0, actor=MARINA)
        opened = app.runs.open_run("claude-code", workdir=str(world.repo), run_id="claude-late")
        release = threading.Event()

        def slow(request: object) -> list[str]:
            release.wait(30)  # the assembly is still busy when the answer is due
            return []

        app.files.providers["scope"] = slow
        past = time.monotonic() - 5.0  # the hook's answer deadline has passed
        try:
            given = for_session(
                app, agent="claude-code", token=opened.token, run_id="claude-late", answer_by=past
            )
        finally:
            release.set()
        assert given == ""
        # Nothing was kept for a resumed session: it assembles afresh and gets the context.
        app.files.providers.pop("scope")
        again = for_session(app, agent="claude-code", token=opened.token, run_id="claude-late")
        assert NOTES in again
    finally:
        app.close()


def test_deliver_counts_each_outcome_and_close_removes_the_private_directory() -> None:
    def count(how: str, outcome: str) -> float:
        return metrics.sample("fleetmem_context_deliveries_total", {"how": how, "outcome": outcome})

    before = (count("file", "ok"), count("argv", "ok"), count("none", "empty"))
    given = deliver("command", ["h"], {}, "ctx", has_prompt=False, agent="a", run_id="r")
    path = given.env[CONTEXT_FILE_ENV]
    assert given.argv == ["h"] and oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert oct(os.stat(os.path.dirname(path)).st_mode & 0o777) == "0o700"
    given.close()
    given.close()  # twice is harmless
    assert not os.path.exists(os.path.dirname(path))
    claude = deliver(
        "claude-code", ["c", "--", "p"], {}, "ctx", has_prompt=True, agent="a", run_id="r"
    )
    assert claude.argv == ["c", "--append-system-prompt", "ctx", "--", "p"] and claude.via == "argv"
    empty = deliver("codex", ["x", "--", "p"], {}, "", has_prompt=True, agent="a", run_id="r")
    assert empty.argv == ["x", "--", "p"] and empty.via is None
    after = (count("file", "ok"), count("argv", "ok"), count("none", "empty"))
    assert [b - a for a, b in zip(before, after, strict=True)] == [1.0, 1.0, 1.0]


def test_a_session_answer_keeps_context_and_briefing_within_claude_codes_limit(
    world: World,
) -> None:
    """Issue 18 part 2: the SessionStart answer, context and fenced briefing together, is
    one Claude Code takes whole; what is left out is named with the resource to read."""
    from fleetmem.core.hosts import CLAUDE_CODE_SESSION, CONTEXT_URI, utf16_units

    world.config("[agent.claude-code]\nmemory_briefing = true\n")
    words = ["ledger", "fixture", "deploy", "billing", "cache", "queue", "retry", "shard"]
    rng = random.Random()
    notebook = "\n".join(" ".join(rng.choice(words) for _ in range(10)) for _ in range(260))
    app = build(world.home, {"HOME": str(world.tmp)})
    try:
        app.files.save(app.files.ref("notebook", repo=REPO_KEY), notebook + "\nNB-END\n",
                       base_revision=0, actor=MARINA)  # fmt: skip
        for n in range(6):
            app.facts.add(f"Settlement rule {n}: {' '.join(rng.choices(words, k=30))}.", pin=True)
    finally:
        app.close()
    session = Session(world)
    given = additional_context(session.hook("SessionStart"))
    assert utf16_units(given) <= CLAUDE_CODE_SESSION.limit  # type: ignore[operator]
    assert 'field="briefing"' in given and "Settlement rule" in given
    assert "Not included above" in given and CONTEXT_URI in given and "NB-END" not in given
    kept = list((world.home / "run" / "context").iterdir())
    assert len(kept) == 1 and "NB-END" in kept[0].read_text(encoding="utf-8")
    again = additional_context(session.hook("SessionStart"))  # resumed: the same, fresh fences
    nonces = re.compile(r'nonce="[0-9a-f]{32}"')
    assert nonces.sub("N", again) == nonces.sub("N", given)
    session.hook("SessionEnd")
    assert list((world.home / "run" / "context").iterdir()) == []


def test_a_briefing_too_large_to_share_the_answer_becomes_a_pointer() -> None:
    from fleetmem.integrations.context_delivery import (
        BRIEFING_POINTER,
        SESSION_CONTEXT_ROOM,
        session_room,
    )

    assert session_room("") == (10_000, "")
    room, block = session_room("b" * 3_000)
    assert (room, block) == (10_000 - 3_002, "b" * 3_000)
    room, block = session_room("😀" * (10_000 - SESSION_CONTEXT_ROOM))
    assert block == BRIEFING_POINTER and room == 10_000 - len(BRIEFING_POINTER) - 2
