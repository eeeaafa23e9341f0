"""The provided segments of a run's context: facts, scope, recent activity and recent runs.

- **facts**: the run's facts block (below);
- **scope**: the other runs live on the run's repository now (who else works here);
- **recent activity**: changes to the files the agent receives, newest first;
- **recent runs**: the last stored runs on the repository, newest first.

With ``memory_briefing`` on, the briefing of the agents issue carries the facts, the live
runs and the recent runs in the prompt; those three segments are then off in the context (no
text twice).

Each is a :data:`fleetmem.service.context.SegmentProvider` over another service, wired in the
composition root. They return entries best or newest first and leave the cutting to the
assembly, so the whole-agent report, ``fleetmem context`` and a real run share one selection
and one token count.

The facts block of a run is :mod:`fleetmem.service.context_facts`: pinned active facts of the
run's scopes, then those relevant to what it is about (its prompt) at or above a calibrated
floor, or the line "No remembered fact matched this run." A preview that names no purpose
shows the facts service's selection (pinned, then the best by confidence). In a real run
the facts the assembly kept are recorded as exposures *before* the context is returned; a
fact whose exposure cannot be written is not shown. A preview (no run id) writes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from fleetmem.config import Settings
from fleetmem.core.briefing import iso
from fleetmem.core.contextfiles import NOTEBOOK, SCOPE_PROMPT, FileRef
from fleetmem.core.durations import format_duration
from fleetmem.core.facts import BlockItem
from fleetmem.service.context import ContextRequest, Provided, SegmentProvider
from fleetmem.service.context_facts import NO_MATCH, NO_OTHER_MATCH, run_facts
from fleetmem.service.facts import FactService
from fleetmem.service.files import ContextFileService
from fleetmem.service.records.runs import LiveRunInfo
from fleetmem.service.runs import RunsService
from fleetmem.store.base import RunRow

log = logging.getLogger("fleetmem.context")

#: Stored runs offered to the recent-runs feed; its 800-token budget keeps the newest that fit.
RECENT_RUNS_OFFERED = 20
#: Live runs offered to the scope segment.
LIVE_RUNS_OFFERED = 20
#: Context-file activity rows read, and offered, for the recent-activity feed.
ACTIVITY_SCANNED = 200
ACTIVITY_OFFERED = 30
#: Activity worth telling an agent about (reads are not), in the feed's words.
ACTIVITY_SHOWN = {
    "save": "saved",
    "restore": "restored",
    "append": "appended to",
    "mode": "changed the load mode of",
    "proposed": "proposed a change to",
}
#: The exposure surface of facts delivered in a run's context (its prompt).
CONTEXT_SURFACE = "prompt"


def facts_provider(facts: FactService, settings: Callable[[], Settings]) -> SegmentProvider:
    """The facts block: ``None`` (no segment at all) when the agent's memory recall is off,
    or when its briefing carries its facts."""

    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fleetmem-context-facts")

    def provide(request: ContextRequest) -> Provided | None:
        agent = settings().agent(request.agent)
        if not agent.memory_recall or agent.memory_briefing:
            return None
        service: FactService = (
            facts if request.workspace == facts.workspace else facts.in_workspace(request.workspace)
        )
        timeout = settings().memory.facts.recall_timeout_s
        future = pool.submit(_for_about, service, request)
        try:
            items, note = future.result(timeout=timeout)
        except FutureTimeout:
            # NFR-2: recall never holds a run up past its timeout; the run goes without facts.
            future.cancel()
            log.warning(
                "context.facts_timeout run=%s agent=%s after=%gs",
                request.run_id or "-",
                request.agent,
                timeout,
            )
            raise
        by_line = {item.line(): item.fact_id for item in items}
        entries = (*by_line, *([note] if note else []))
        if request.run_id is None:
            return Provided(entries)
        run_id = request.run_id

        def before_shown(shown: tuple[str, ...]) -> Sequence[str]:
            ids = [by_line[line] for line in shown if line in by_line]
            # A fact this run was already shown (e.g. in its briefing) has its record.
            known = {row.fact_id for row in service.offered_to_run(run_id)}
            served = known.intersection(ids)
            served.update(
                service.serve_to_run(
                    [i for i in ids if i not in known],
                    run_id=run_id,
                    agent=request.agent,
                    repo=request.repo,
                    surface=CONTEXT_SURFACE,
                )
            )
            return [line for line in shown if line not in by_line or by_line[line] in served]

        return Provided(entries, before_shown)

    return provide


def _for_about(service: FactService, request: ContextRequest) -> tuple[tuple[BlockItem, ...], str]:
    """Pinned facts, then those relevant to what the run is about; the "no fact matched"
    line when a prompt matched none. A preview naming no purpose (``about`` None) gets the
    facts service's selection: pinned, then the best by confidence."""
    if request.about is None:
        return service.select_for_run(agent=request.agent, repo=request.repo), ""
    found = run_facts(service, request.about, agent=request.agent, repo=request.repo)
    if found.matched:
        return found.pinned + found.relevant, ""
    return found.pinned, NO_OTHER_MATCH if found.pinned else NO_MATCH


def _briefed(settings: Callable[[], Settings], agent: str) -> bool:
    """With ``memory_briefing`` on, the run's briefing (agents issue) already carries its
    facts, the other live runs and the recent runs: the context does not repeat them."""
    return settings().agent(agent).memory_briefing


def scope_provider(runs: RunsService, settings: Callable[[], Settings]) -> SegmentProvider:
    """Who else works in the run's scope now: the other runs live on its repository, newest
    start first (the run itself left out). Empty when it works alone or outside a repo."""

    def provide(request: ContextRequest) -> list[str] | None:
        if _briefed(settings, request.agent):
            return None
        if request.repo is None:
            return []
        live = [r for r in runs.live_runs(request.repo) if r.run_id != request.run_id]
        live.sort(key=lambda r: (-r.opened_at, r.run_id))
        return [live_run_line(row) for row in live[:LIVE_RUNS_OFFERED]]

    return provide


def live_run_line(row: LiveRunInfo) -> str:
    branch = f" on branch {row.branch}" if row.branch else ""
    files = f", editing {', '.join(row.files[:5])}" if row.files else ""
    more = f" and {len(row.files) - 5} more" if len(row.files) > 5 else ""
    return f"- {row.agent} live since {iso(row.opened_at)}{branch}{files}{more} (run {row.run_id})"


def recent_activity_provider(files: ContextFileService) -> SegmentProvider:
    """Changes to the files this agent receives (workspace files, its own files, the
    repository's notebook and scope prompt), newest first: who saved, restored, appended or
    proposed what."""

    def provide(request: ContextRequest) -> list[str]:
        project = (
            {str(FileRef(spec, request.repo)) for spec in (NOTEBOOK, SCOPE_PROMPT)}
            if request.repo
            else set()
        )
        own = f"agent/{request.agent}/"
        lines = []
        for row in files.activity(limit=ACTIVITY_SCANNED):
            if row.action not in ACTIVITY_SHOWN:
                continue
            if not (row.ref.startswith(("workspace/", own)) or row.ref in project):
                continue
            who = row.actor if row.actor_kind == "user" else f"{row.actor_kind}:{row.actor}"
            revision = f" (revision {row.revision})" if row.revision is not None else ""
            lines.append(f"- {iso(row.at)} {who} {ACTIVITY_SHOWN[row.action]} {row.ref}{revision}")
            if len(lines) == ACTIVITY_OFFERED:
                break
        return lines

    return provide


def recent_runs_provider(runs: RunsService, settings: Callable[[], Settings]) -> SegmentProvider:
    """The last runs on the repository, newest end first, one line each."""

    def provide(request: ContextRequest) -> list[str] | None:
        if _briefed(settings, request.agent):
            return None
        if request.repo is None:
            return []
        rows = runs.recent_runs(request.repo, None, RECENT_RUNS_OFFERED)
        return [recent_run_line(row) for row in rows if row.run_id != request.run_id]

    return provide


def recent_run_line(row: RunRow) -> str:
    """One stored run: when it ended, who ran it, how it ended, where, and its pull request."""
    outcome = row.outcome if row.reason in ("", row.outcome) else f"{row.outcome} ({row.reason})"
    duration = format_duration(max(0.0, row.ended_at - row.started_at))
    branch = f" on branch {row.branch}" if row.branch else ""
    pull = f", pull request {row.pull_request}" if row.pull_request else ""
    return (
        f"- {iso(row.ended_at)} {row.agent} ({row.adapter}){branch}: {outcome} after"
        f" {duration}{pull} (run {row.run_id})"
    )


def default_providers(
    files: ContextFileService,
    facts: FactService,
    runs: RunsService,
    settings: Callable[[], Settings],
) -> dict[str, SegmentProvider]:
    """Every provided segment, wired to the real services (the composition root's call)."""
    return {
        "facts": facts_provider(facts, settings),
        "scope": scope_provider(runs, settings),
        "recent_activity": recent_activity_provider(files),
        "recent_runs": recent_runs_provider(runs, settings),
    }
