"""``fleetmem run`` with a fake ``claude`` (stream-json) over a real repository (REQ-16, REQ-20).

The agent process, the git repository and the store are real; only the agent CLI is a
fixture executable that emits the documented stream format.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from fleetmem.core.fence import parse_block
from fleetmem.core.redact import redact
from fleetmem.core.wrapper import parse
from fleetmem.service.bootstrap import App
from tests.integrations.conftest import REPO_KEY, World
from tests.surfaces.cli_helpers import run_cli

PROMPT = b"Triage the failing tests.\r\nKeep \xe2\x80\x9cquotes\xe2\x80\x9d and\ttabs.\n\n"
BLOCK_NONCE = re.compile(
    r'<untrusted-data source="fleetmem-memory" field="briefing" nonce="([0-9a-f]{32})">'
)


def _setup(world: World, open_app: Callable[[], App], **agent: object) -> Path:
    prompt = world.tmp / "prompts" / "triage.md"
    prompt.parent.mkdir()
    prompt.write_bytes(PROMPT)
    world.config(world.agent(prompt_file=prompt, **agent))  # type: ignore[arg-type]
    app = open_app()
    app.facts.add("The settlement fixture writes rows in local time.")
    app.close()
    return prompt


def _run(world: World, *args: str, check: bool = True) -> tuple[int, str, str]:
    proc = run_cli(world.home, "-v", "run", "nightly-triage", "--workdir", str(world.repo), *args,
                   check=check)  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr


def _run_id(stderr: str) -> str:
    found = re.search(r"run (run-[0-9a-f]{16}) of", stderr)
    assert found, stderr
    return found.group(1)


def test_the_last_argument_is_the_fenced_briefing_a_blank_line_and_the_prompt_file(
    world: World, open_app: Callable[[], App]
) -> None:
    _setup(world, open_app)
    code, _stdout, stderr = _run(world)
    assert code == 0
    [start] = world.starts()
    last = start["argv"][-1]
    assert start["argv"][-2] == "--"
    block, rest = parse_block(last)
    # A blank line, then the prompt file's bytes unchanged (CRLF, tab and quotes kept).
    assert rest.encode("utf-8") == b"\n\n" + PROMPT
    assert block.source == "fleetmem-memory" and block.field == "briefing"
    assert block.nonce not in block.body
    document, inner_nonce = parse(block.body)
    assert inner_nonce != block.nonce
    facts = document.section("facts")
    assert facts is not None and len(facts.items) == 1
    assert "local time" in facts.items[0].text
    # The child is attributed: its token resolves to this run.
    run_id = _run_id(stderr)
    assert start["run_id"] == run_id
    app = open_app()
    assert app.runs.resolve_caller(start["token"]).run_id == run_id


def test_the_run_record_episode_and_exposure_come_from_the_stream(
    world: World, open_app: Callable[[], App]
) -> None:
    _setup(world, open_app)
    _code, stdout, stderr = _run(world)
    run_id = _run_id(stderr)
    assert "still fails" in stdout
    record = world.record(run_id)
    # Stored as the operator wrote it (through the redactor every stored string passes,
    # which drops the carriage return), with no briefing text.
    assert record["prompt"] == redact(PROMPT.decode("utf-8"))
    assert "fleetmem-memory" not in record["prompt"]
    assert (record["outcome"], record["reason"]) == ("failed", "verify_failed")
    assert record["adapter"] == "claude-code" and record["spawned"] is True
    assert record["model"]["served"] == "claude-sonnet-4-5-20250929"
    assert record["cost"] == {"usd": 0.0421, "source": "reported"}
    [session] = record["sessions"]
    assert session["cwd"] == str(world.repo)
    kinds = [(e["type"], e.get("path"), e.get("error_class")) for e in session["events"]]
    assert ("edit", str(world.repo / "app.py"), None) in kinds
    assert ("verify", None, "test_failure") in kinds
    app = open_app()
    [episode] = app.memory.list_episodes(repo=REPO_KEY)
    assert episode.run_id == run_id
    assert episode.episode["files_touched"] == ["app.py"]
    assert episode.episode["verify_failures"] == [{"error_class": "test_failure", "count": 1}]
    assert "Triage" not in episode.text  # the prompt never reaches an episode
    exposures = app.facts.offered_to_run(run_id)
    assert [(e.surface, e.call_id) for e in exposures] == [("prompt", None)]
    # The run is closed by its record; the stored briefing is the one the tools will serve.
    detail = app.runs.show_run(run_id)
    assert detail.live is not None and detail.live.state == "closed"
    stored = app.agent_memory.stored_briefing(run_id)
    assert stored is not None and stored.origin == "spawn"


def test_nothing_of_the_composed_prompt_is_stored_or_logged(
    world: World, open_app: Callable[[], App]
) -> None:
    _setup(world, open_app)
    _code, _stdout, stderr = _run(world)
    last = world.starts()[0]["argv"][-1]
    nonce = BLOCK_NONCE.match(last)
    assert nonce is not None
    assert nonce.group(1) not in stderr and "untrusted-data" not in stderr
    assert "briefing.prepended agent=nightly-triage run=" in stderr  # the one INFO line
    for path in world.home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert nonce.group(1).encode() not in data, path
            assert b"<untrusted-data" not in data, path


def test_an_empty_briefing_prepends_nothing(world: World, open_app: Callable[[], App]) -> None:
    prompt = world.tmp / "p.md"
    prompt.write_bytes(PROMPT)
    world.config(world.agent(prompt_file=prompt))
    _code, _stdout, _stderr = _run(world)
    assert world.starts()[0]["argv"][-1].encode("utf-8") == PROMPT


def test_without_memory_briefing_the_prompt_goes_alone_and_nothing_is_exposed(
    world: World, open_app: Callable[[], App]
) -> None:
    _setup(world, open_app, briefing=False)
    app = open_app()
    pinned = app.facts.add("Always rerun a failing test once before triaging it.", pin=True).fact
    app.close()
    _code, _stdout, stderr = _run(world)
    argv = world.starts()[0]["argv"]
    assert argv[-1].encode("utf-8") == PROMPT
    app = open_app()
    # No briefing; the pinned fact reaches the run only in its context files' facts block
    # (issue 7: `--append-system-prompt`), recorded once as shown in the prompt. The other
    # fact has nothing to do with the prompt (issue 18: facts by relevance), and the block
    # says no other fact matched.
    [exposure] = app.facts.offered_to_run(_run_id(stderr))
    assert exposure.surface == "prompt" and exposure.fact_id == pinned.id
    context = argv[argv.index("--append-system-prompt") + 1]
    assert f"fact {pinned.id}" in context and "settlement fixture" not in context
    assert "No other remembered fact matched this run." in context


def test_a_prompt_flag_overrides_the_file_and_is_stored_verbatim(
    world: World, open_app: Callable[[], App]
) -> None:
    _setup(world, open_app, briefing=False)
    _code, _stdout, stderr = _run(world, "--prompt", "-starts with a dash")
    assert world.starts()[0]["argv"][-2:] == ["--", "-starts with a dash"]
    assert world.record(_run_id(stderr))["prompt"] == "-starts with a dash"


def test_interrupting_fleetmem_run_stops_the_agent_and_records_a_cancelled_run(
    world: World, open_app: Callable[[], App]
) -> None:
    import signal
    import subprocess
    import time

    from tests.surfaces.cli_helpers import FLEETMEM, env_for

    world.config(world.agent(scenario="hang", briefing=False, extra='kill_grace = "500ms"\n'))
    proc = subprocess.Popen(
        [FLEETMEM, "run", "nightly-triage", "--workdir", str(world.repo), "--prompt", "wait"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_for(world.home), text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not world.starts() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "cancelled (operator_cancelled)" in stderr
    record = world.record(_run_id(stderr))
    assert (record["outcome"], record["reason"]) == ("cancelled", "operator_cancelled")


def test_an_unknown_agent_is_refused_naming_it(world: World) -> None:
    world.config("")
    code, _stdout, stderr = _run(world, check=False)
    assert code == 2 and "nightly-triage" in stderr and "not declared" in stderr
