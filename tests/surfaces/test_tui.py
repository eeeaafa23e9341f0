"""``fleetmem tui``: driven with Textual's pilot on a real home, through a real daemon, and once
in a real terminal under tmux."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static, TabbedContent

from fleetmem.service.bootstrap import App, build
from fleetmem.surfaces.cli.remote import RemoteClient
from fleetmem.surfaces.tui.app import BriefingOverlay, DetailScreen, FleetmemTui
from fleetmem.surfaces.tui.model import agent_rows
from fleetmem.surfaces.tui.source import LocalSource, RemoteSource, TuiSource
from tests.conftest import make_record, session, write_config
from tests.surfaces.cli_helpers import FLEETMEM, env_for
from tests.surfaces.test_http import Daemon

API = "github.com/acme/api"
NONCE = re.compile(r"[0-9a-f]{32}")
CONFIG = '[model_api]\nembedding_model = ""\n[agent.api-fixer]\n[agent.docs-bot]\n'


def _fill(app: App) -> None:
    for n, agent in enumerate(("api-fixer", "docs-bot")):
        app.memory.ingest_run(
            make_record(
                run_id=f"run-{agent}",
                agent=agent,
                result_text=f"{agent} fixed the flaky ledger test",
                started_at=f"2026-11-0{n + 1}T10:00:00Z",
                ended_at=f"2026-11-0{n + 1}T10:05:00Z",
                sessions=[session(repo=API, branch="main")],
            )
        )
    mine = app.runs.open_run("api-fixer", repo=API, branch="main", adapter="claude-code")
    theirs = app.runs.open_run("docs-bot", repo=API, branch="main", adapter="codex")
    app.runs.heartbeat(mine.token, files=["billing/ledger.py"])
    app.runs.heartbeat(theirs.token, files=["billing/ledger.py"])
    app.facts.propose("Prefer pytest -x for quick loops.", agent="api-fixer", run_id="run-p1")
    app.facts.propose("The ledger is settled nightly.", agent="docs-bot", run_id="run-p2")


@pytest.fixture
def filled(home: Path) -> Iterator[App]:
    write_config(home, CONFIG)
    app = build(home, {"HOME": str(home.parent)})
    _fill(app)
    yield app
    app.close()


def _calm(text: str) -> str:
    # Each computation draws a fresh fence nonce; the rest must be the same byte for byte.
    return NONCE.sub("<nonce>", text).strip()


def _cells(table: DataTable[Any]) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _drive(source: TuiSource, script: Callable[[FleetmemTui, Any], Any]) -> None:
    async def go() -> None:
        tui = FleetmemTui(source)
        async with tui.run_test(size=(140, 45)) as pilot:
            await pilot.pause()
            await script(tui, pilot)

    asyncio.run(go())


def test_agents_show_last_and_live_runs_and_collisions(filled: App) -> None:
    async def script(tui: FleetmemTui, pilot: Any) -> None:
        rows = _cells(tui.query_one("#agent-table", DataTable))
        assert [r[0] for r in rows] == ["api-fixer", "docs-bot"]
        fixer = rows[0]
        last = next(r for r in LocalSource(filled).runs() if r["run_id"] == "run-api-fixer")
        assert fixer[1] == "run-api-fixer"
        assert fixer[2].startswith(f"{last['outcome']} ({last['reason']})")
        assert fixer[3] == "1" and fixer[4] == "1 (files)"

    _drive(LocalSource(filled), script)


def test_b_opens_the_briefing_overlay_r_recomputes_and_esc_closes(filled: App) -> None:
    expected = LocalSource(filled).briefing("api-fixer")

    async def script(tui: FleetmemTui, pilot: Any) -> None:
        await pilot.press("B")
        await pilot.pause()
        overlay = tui.screen
        assert isinstance(overlay, BriefingOverlay) and overlay.agent == "api-fixer"
        summary = str(overlay.query_one("#summary", Static).render())
        assert "memory_briefing: off" in summary and "briefing_max_chars" in summary
        assert f"{expected['chars']:,} / {expected['max_chars']:,}" in summary
        sections = _cells(overlay.query_one("#sections", DataTable))
        assert [s[0] for s in sections] == [s["name"] for s in expected["sections"]]
        assert [s[3] for s in sections] == [str(s["omitted"]) for s in expected["sections"]]
        document = str(overlay.query_one("#document", Static).render())
        assert _calm(document) == _calm(expected["text"])
        await pilot.press("r")
        await pilot.pause()
        assert overlay.computed == 2
        assert "computed 2x" in str(overlay.query_one("#summary", Static).render())
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(tui.screen, BriefingOverlay)

    _drive(LocalSource(filled), script)


def test_the_overlay_says_when_memory_briefing_is_set(home: Path) -> None:
    write_config(
        home, CONFIG.replace("[agent.api-fixer]\n", "[agent.api-fixer]\nmemory_briefing = true\n")
    )
    app = build(home, {"HOME": str(home.parent)})
    try:
        _fill(app)

        async def script(tui: FleetmemTui, pilot: Any) -> None:
            await pilot.press("b")
            await pilot.pause()
            summary = str(tui.screen.query_one("#summary", Static).render())
            assert "memory_briefing: on" in summary

        _drive(LocalSource(app), script)
    finally:
        app.close()


def test_enter_on_an_episode_shows_what_left_the_daemon(filled: App) -> None:
    first = filled.memory.list_episodes(limit=5)[0]

    async def script(tui: FleetmemTui, pilot: Any) -> None:
        tui.query_one(TabbedContent).active = "episodes"
        await pilot.pause()
        table = tui.query_one("#episode-table", DataTable)
        table.focus()
        assert _cells(table)[0][0] == first.id
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(tui.screen, DetailScreen)
        body = str(tui.screen.query_one("#detail-body", Static).render())
        assert first.id in body and "fixed the flaky ledger test" in body
        await pilot.press("escape")

    _drive(LocalSource(filled), script)


def test_one_key_per_review_action_on_the_selected_proposal(filled: App) -> None:
    async def script(tui: FleetmemTui, pilot: Any) -> None:
        tui.query_one(TabbedContent).active = "review"
        await pilot.pause()
        table = tui.query_one("#review-table", DataTable)
        table.focus()
        before = _cells(table)
        assert len(before) == 2
        await pilot.press("c")
        await pilot.pause()
        confirmed = before[0][0]
        assert filled.facts.get(confirmed).fact.status == "active"
        assert [r[0] for r in _cells(table)] == [before[1][0]]
        await pilot.press("d")
        await pilot.pause()
        assert filled.facts.get(before[1][0]).fact.status == "rejected"
        assert table.row_count == 0
        await pilot.press("c")  # nothing left: a note, not an error
        await pilot.pause()

    _drive(LocalSource(filled), script)


def test_review_keys_do_nothing_outside_the_review_tab(filled: App) -> None:
    async def script(tui: FleetmemTui, pilot: Any) -> None:
        await pilot.press("c", "d", "x")
        await pilot.pause()
        assert len(filled.facts.list(status="proposed").items) == 2

    _drive(LocalSource(filled), script)


def test_status_tab_names_the_provider(filled: App) -> None:
    async def script(tui: FleetmemTui, pilot: Any) -> None:
        tui.query_one(TabbedContent).active = "status"
        await pilot.pause()
        text = str(tui.query_one("#status-text", Static).render())
        assert "provider" in text and "builtin" in text

    _drive(LocalSource(filled), script)


def test_through_a_daemon_the_screens_read_the_same(filled: App) -> None:
    local = LocalSource(filled)
    daemon = Daemon(filled.home)
    try:
        token = (filled.home / "control.token").read_text().strip()
        client = RemoteClient(daemon.url, token, "control.token", home=filled.home)
        remote = RemoteSource(client)
        assert agent_rows(remote.runs(), remote.presence()) == agent_rows(
            local.runs(), local.presence()
        )
        assert [e["episode_id"] for e in remote.episodes()] == [
            e["episode_id"] for e in local.episodes()
        ]
        b_remote, b_local = remote.briefing("api-fixer"), local.briefing("api-fixer")
        assert b_remote["sections"] == b_local["sections"]

        async def script(tui: FleetmemTui, pilot: Any) -> None:
            assert [r[0] for r in _cells(tui.query_one("#agent-table", DataTable))] == [
                "api-fixer",
                "docs-bot",
            ]
            tui.query_one(TabbedContent).active = "review"
            await pilot.pause()
            tui.query_one("#review-table", DataTable).focus()
            await pilot.press("c")
            await pilot.pause()

        _drive(remote, script)
        client.close()
        assert len(filled.facts.list(status="proposed").items) == 1
    finally:
        daemon.stop()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_in_a_real_terminal_under_tmux(filled: App) -> None:
    name = f"fleetmem-tui-{os.getpid()}"
    env = env_for(filled.home, TERM="xterm-256color")
    command = f"{FLEETMEM} tui"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "140", "-y", "40", command],
        check=True,
        env=env,
    )

    def screen() -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True
        ).stdout

    def wait_for(text: str) -> str:
        deadline = time.monotonic() + 60
        shown = ""
        while time.monotonic() < deadline:
            shown = screen()
            if text in shown:
                return shown
            time.sleep(0.3)
        raise AssertionError(f"{text!r} never appeared:\n{shown}")

    try:
        wait_for("docs-bot")
        subprocess.run(["tmux", "send-keys", "-t", name, "B"], check=True)
        shown = wait_for("memory_briefing")
        assert "briefing for api-fixer" in shown
        subprocess.run(["tmux", "send-keys", "-t", name, "Escape"], check=True)
        time.sleep(1.0)
        subprocess.run(["tmux", "send-keys", "-t", name, "q"], check=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            alive = subprocess.run(["tmux", "has-session", "-t", name], capture_output=True)
            if alive.returncode != 0:
                break
            time.sleep(0.3)
        else:
            raise AssertionError("fleetmem tui did not quit on q:\n" + screen())
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
