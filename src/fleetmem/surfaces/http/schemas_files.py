"""OpenAPI models of context files, load meters and contexts, mirroring
:mod:`fleetmem.surfaces.files_views`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fleetmem.core.labels import RULES
from fleetmem.core.strictjson import INT_MAX
from fleetmem.surfaces.http.schemas import ErrorDetail, Strict


class SkippedRegion(Strict):
    char_start: int
    char_end: int
    chars: int
    line_start: int
    line_end: int


class LoadMeter(Strict):
    tokens: int
    budget: int | None = Field(description="null for a file read on demand")
    used: int
    percent: float | None
    state: str = Field(description="under, near or over")
    skipped_tokens: int
    skipped: SkippedRegion | None
    shared_with: list[str]
    text: str = Field(description="the meter as one sentence, for assistive technology")


class FileSummary(Strict):
    ref: str
    kind: str
    name: str
    title: str
    caption: str
    owner: str | None
    revision: int
    mode: str | None = Field(description="every_run or on_demand")
    updated_at: str | None
    updated_by: str
    in_flight: int
    meter: LoadMeter
    authoring_rule: str


class FileOut(FileSummary):
    body: str
    preview: str | None = Field(None, description="with ?preview=true: skipped text marked")


class FileList(Strict):
    files: list[FileSummary]


class FileListing(Strict):
    workspace: list[FileSummary]
    agents: list[str]
    notebooks: list[str]


#: With ?agent= or ?repo=: that owner's files; without: the whole listing.
FilesOut = FileList | FileListing


class Revision(Strict):
    revision: int
    created_at: str
    author: str
    author_kind: str
    run_id: str | None
    action: str
    restored_from: int | None
    bytes: int
    body: str | None = None


class RevisionList(Strict):
    revisions: list[Revision]


class Activity(Strict):
    at: str
    actor: str
    actor_kind: str
    run_id: str | None
    action: str
    ref: str
    revision: int | None
    detail: str | None


class ActivityList(Strict):
    activity: list[Activity]


class ContextLoad(Strict):
    run_id: str
    agent: str
    repo: str | None
    segment: str
    ref: str | None
    revision: int | None
    budget: int
    tokens: int
    used: int
    loaded_at: str


class ContextLoads(Strict):
    loads: list[ContextLoad]


class SegmentPart(Strict):
    label: str | None
    ref: str | None
    revision: int | None
    budget: int
    tokens: int
    used: int
    percent: float
    state: str
    skipped_tokens: int
    skipped: SkippedRegion | None
    skipped_caption: str | None


class Segment(Strict):
    key: str
    title: str
    budget: int
    tokens: int
    used: int
    percent: float
    state: str
    status: str
    skipped_tokens: int
    dropped_by_backstop: bool
    parts: list[SegmentPart]


class Truncation(Strict):
    segment: str
    ref: str | None
    budget: int
    original: int
    truncated: int


class RunContextOut(Strict):
    agent: str
    repo: str | None
    run_id: str | None
    total: int
    backstop: int
    overhead: int
    segments: list[Segment]
    truncations: list[Truncation]
    text: str


class LastRun(Strict):
    run_id: str | None
    agreed: bool | None


class WithheldPart(Strict):
    key: str
    title: str
    tokens: int
    whole: bool


class HostReach(Strict):
    host: str
    title: str
    mechanism: str
    limit: int | None
    unit: str | None
    limit_text: str
    size: int | None
    shares_with_briefing: bool
    whole: bool
    fits: bool
    delivered_tokens: int
    withheld_tokens: int
    withheld: list[WithheldPart]


class ContextReport(Strict):
    agent: str
    repo: str | None
    total: int
    backstop: int
    overhead: int
    empty: bool
    message: str | None
    last_run: LastRun
    segments: list[Segment]
    hosts: list[HostReach]


class Attachment(Strict):
    title: str
    intro: str
    text: str
    revision: int
    meter: LoadMeter


class AskOut(Strict):
    ref: str
    addressed_agent: str | None
    message: str
    attachment: Attachment


class StaleDetail(ErrorDetail):
    current_revision: int
    base_revision: int
    changed_by: str | None


class StaleSave(Strict):
    """409 on a stale save: nothing typed is lost."""

    error: StaleDetail
    current: FileOut
    yours: str
    diff: str


# ---- request bodies ------------------------------------------------------------------------
#: Who a context-file write is attributed to: the label rule the service checks.
USER_PATTERN = RULES["user"].pattern


class SaveIn(Strict):
    text: str
    base_revision: int = Field(ge=0, le=INT_MAX, description="the revision your text is based on")
    user: str | None = Field(None, pattern=USER_PATTERN)


class ModeIn(Strict):
    mode: Literal["every_run", "on_demand"] = Field(description="every_run or on_demand")
    user: str | None = Field(None, pattern=USER_PATTERN)


class UserIn(Strict):
    user: str | None = Field(None, pattern=USER_PATTERN)
