"""What ContextFileService returns: frozen views of files, meters, agent-tool results."""

from __future__ import annotations

from dataclasses import dataclass

from fleetmem.core import labels
from fleetmem.core.budget import LoadReport
from fleetmem.core.contextfiles import ActorKind, FileRef, Mode


@dataclass(frozen=True, slots=True)
class Actor:
    """Who writes: a user, an agent (optionally within a run) or the system."""

    kind: ActorKind
    name: str
    run_id: str | None = None

    def __post_init__(self) -> None:
        # The ingress boundary for attribution: a user name is stored with every revision and
        # activity row, logged, and shown to agents, so it is a label (docs/run-record.md).
        # (Agent names are checked where a run attributes them: validate_agent_name.)
        if self.kind == "user":
            labels.check("user", self.name, "user")

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True, slots=True)
class Meter:
    """The load meter of one file (FR-40 to FR-45); ``budget`` is None for on-demand files."""

    tokens: int
    budget: int | None
    report: LoadReport | None
    shared_with: tuple[str, ...] = ()

    @property
    def state(self) -> str:
        return "on_demand" if self.report is None else self.report.state

    @property
    def used(self) -> int:
        return self.tokens if self.report is None else self.report.used

    @property
    def percent(self) -> float | None:
        return None if self.report is None else self.report.percent


@dataclass(frozen=True, slots=True)
class FileView:
    ref: FileRef
    body: str
    revision: int
    mode: Mode | None
    updated_at: float
    updated_by: str  # "user:marina", "agent:research", "system:fleetmem"
    meter: Meter
    in_flight: int


@dataclass(frozen=True, slots=True)
class Listing:
    workspace: tuple[FileView, ...]
    agents: tuple[str, ...]
    notebooks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ContextFileRead:
    """What ``read_context_file`` returns to an agent."""

    name: str
    title: str
    mode: Mode
    revision: int
    text: str
    tokens: int


@dataclass(frozen=True, slots=True)
class NotesUpdate:
    """What ``update_notes`` returns: written, or a proposal for a human to apply (S17)."""

    written: bool
    revision: int  # the new revision when written, else the one the proposal is based on
    diff: str
    proposed_text: str
    reason: str | None = None
    message: str | None = None
    proposal_id: int | None = None  # the stored proposal a person can apply (S17)


@dataclass(frozen=True, slots=True)
class AskPayload:
    """ "Ask an agent to update this" (FR-51 to FR-56): exactly what chat would send."""

    ref: FileRef
    addressed_agent: str | None
    message: str
    attachment_title: str
    attachment_intro: str
    attachment: str
    revision: int
    meter: Meter
