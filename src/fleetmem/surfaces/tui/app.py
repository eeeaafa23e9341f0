"""The Textual application behind ``fleetmem tui``.

Four tabs: agents (last and live runs, collisions; B opens the briefing overlay), episodes
(Enter shows exactly what left the daemon), the facts review queue (one key per review
action) and status. Every read goes through a :class:`~fleetmem.surfaces.tui.source.TuiSource`,
so the same screens serve the local store and a daemon. ``g`` reloads the tab in view.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from fleetmem.errors import FleetmemError
from fleetmem.surfaces.tui.model import (
    REVIEW_KEYS,
    agent_rows,
    overlay_lines,
    section_rows,
    status_lines,
)
from fleetmem.surfaces.tui.source import TuiSource


def _plain(text: str) -> Text:
    # Stored text is shown as text: never parsed as Rich markup, whatever brackets it holds.
    return Text(text)


class BriefingOverlay(ModalScreen[None]):
    """Read-only: exactly the briefing the agent would get now, and what went into it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "close"),
        Binding("r", "recompute", "recompute"),
    ]
    DEFAULT_CSS = """
    BriefingOverlay { align: center middle; }
    #overlay { width: 90%; height: 90%; border: round $accent; background: $surface; }
    """

    def __init__(self, source: TuiSource, agent: str) -> None:
        super().__init__()
        self.source, self.agent = source, agent
        self.computed = 0

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="overlay"):
            yield Static(id="summary")
            yield DataTable(id="sections", cursor_type="none")
            yield Static(id="document")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#sections", DataTable)
        table.add_columns("section", "items", "characters / share", "dropped")
        self.action_recompute()

    def action_recompute(self) -> None:
        """Ask for the briefing again (a preview: nothing is recorded or counted)."""
        summary = self.query_one("#summary", Static)
        table = self.query_one("#sections", DataTable)
        try:
            b = self.source.briefing(self.agent)
        except FleetmemError as exc:
            summary.update(_plain(f"cannot compute the briefing: {exc}"))
            return
        self.computed += 1
        lines = overlay_lines(b)
        lines.append(f"computed {self.computed}x; press r to recompute, esc to close")
        summary.update(_plain("\n".join(lines)))
        table.clear()
        for row in section_rows(b):
            table.add_row(*row)
        self.query_one("#document", Static).update(_plain(b["text"] or "(empty)"))


class DetailScreen(ModalScreen[None]):
    """One document shown whole (an episode as it left the daemon)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "close")]
    DEFAULT_CSS = """
    DetailScreen { align: center middle; }
    #detail { width: 90%; height: 90%; border: round $accent; background: $surface; }
    """

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.heading, self.body = title, body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail"):
            yield Static(_plain(self.heading), id="detail-title")
            yield Static(_plain(self.body), id="detail-body")
        yield Footer()


class FleetmemTui(App[None]):
    """The operator's terminal."""

    TITLE = "fleetmem"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit"),
        Binding("g", "reload", "reload"),
        Binding("b,B", "briefing", "briefing", key_display="B"),
        *(Binding(key, f"review('{action}')", action) for key, action in REVIEW_KEYS.items()),
    ]

    def __init__(self, source: TuiSource) -> None:
        super().__init__()
        self.source = source
        self.sub_title = source.where

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="agents"):
            with TabPane("Agents", id="agents"):
                yield DataTable(id="agent-table", cursor_type="row")
            with TabPane("Episodes", id="episodes"):
                yield DataTable(id="episode-table", cursor_type="row")
            with TabPane("Review", id="review"):
                yield DataTable(id="review-table", cursor_type="row")
                yield Static(id="review-note")
            with TabPane("Status", id="status"):
                yield VerticalScroll(Static(id="status-text"))
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#agent-table", DataTable).add_columns(
            "agent", "last run", "outcome", "live", "collisions"
        )
        self.query_one("#episode-table", DataTable).add_columns(
            "episode", "agent", "repo", "outcome", "started"
        )
        self.query_one("#review-table", DataTable).add_columns("fact", "body", "scope", "by")
        self.query_one("#review-note", Static).update(
            _plain(
                "keys: "
                + "  ".join(f"{k} {a}" for k, a in REVIEW_KEYS.items())
                + "   (the selected proposal)"
            )
        )
        self.action_reload()

    # ---- loading ------------------------------------------------------------------------
    def action_reload(self) -> None:
        """Read every tab again from the source."""
        try:
            self._load()
        except FleetmemError as exc:
            self.notify(f"cannot read {self.source.where}: {exc}", severity="error")

    def _load(self) -> None:
        agents = self.query_one("#agent-table", DataTable)
        agents.clear()
        for row in agent_rows(self.source.runs(), self.source.presence()):
            agents.add_row(
                row.agent,
                row.last_run,
                row.last_outcome,
                str(row.live),
                row.collisions,
                key=row.agent,
            )
        episodes = self.query_one("#episode-table", DataTable)
        episodes.clear()
        for e in self.source.episodes():
            episodes.add_row(
                e["episode_id"],
                e["agent"],
                e["repo"],
                e["outcome"],
                e["started_at"],
                key=e["episode_id"],
            )
        self._load_review()
        status = self.source.status()
        self.query_one("#status-text", Static).update(_plain("\n".join(status_lines(status))))

    def _load_review(self) -> None:
        table = self.query_one("#review-table", DataTable)
        table.clear()
        for f in self.source.proposals():
            table.add_row(f["id"], f["body"], f["scope"], f["author"], key=f["id"])

    # ---- actions --------------------------------------------------------------------------
    def _selected(self, table_id: str) -> str | None:
        table = self.query_one(table_id, DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return None if key.value is None else str(key.value)

    def action_briefing(self) -> None:
        """B on an agent: the overlay of the briefing it would get now."""
        if self.query_one(TabbedContent).active != "agents":
            return
        agent = self._selected("#agent-table")
        if agent is None:
            self.notify("no agent selected")
            return
        self.push_screen(BriefingOverlay(self.source, agent))

    def action_review(self, action: str) -> None:
        """One key per review action, applied to the selected proposal."""
        if self.query_one(TabbedContent).active != "review":
            return
        fact_id = self._selected("#review-table")
        if fact_id is None:
            self.notify("no proposal to review")
            return
        try:
            fact = self.source.review(fact_id, action)
        except FleetmemError as exc:
            self.notify(f"{action} failed: {exc}", severity="error")
            return
        self.notify(f"{action}: {fact['id']} is now {fact['status']}")
        self._load_review()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id != "episode-table" or event.row_key.value is None:
            return
        episode_id = str(event.row_key.value)
        try:
            detail: Any = self.source.episode(episode_id)
        except FleetmemError as exc:
            self.notify(f"cannot show {episode_id}: {exc}", severity="error")
            return
        body = json.dumps(detail, indent=2, ensure_ascii=False)
        self.push_screen(DetailScreen(f"{episode_id}: exactly what left the daemon", body))
