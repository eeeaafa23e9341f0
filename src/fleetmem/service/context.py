"""The context a run receives, and the whole-agent report (FR-46 to FR-50).

:meth:`ContextMixin.assemble` gathers the project notebook, the every-run workspace files, the
agent's files and the provided segments (the facts block, scope, recent activity and recent
runs come from other services as :data:`SegmentProvider` callables), and fits them in the fixed
order and budgets of :mod:`fleetmem.core.context`. With a ``run_id`` it is a real run: the
revision of every file it loaded is recorded (so a run in flight keeps the text it started with
and its receipt can say which revision it used), and each truncation is logged with segment,
budget, original and truncated size (FR-49). Without one it is a preview: ``fleetmem context``
and the whole-agent report, computed the same way, so they agree with a run to the token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from fleetmem import metrics
from fleetmem.core.budget import FEED_MARKER, TokenCodec
from fleetmem.core.context import (
    PROVIDED,
    Assembly,
    PartInput,
    SegmentInput,
    SegmentResult,
    assemble,
    fit_for_host,
)
from fleetmem.core.contextfiles import AGENT_FILES, NOTEBOOK, SCOPE_PROMPT, FileRef, resolve
from fleetmem.core.hosts import (
    LINUX_ARGUMENT_BYTES,
    PROFILES,
    HostFit,
    HostProfile,
    argument_bytes,
    argument_host,
    within,
)
from fleetmem.core.labels import check_run_id
from fleetmem.core.redact import strip_invisible
from fleetmem.core.scope import validate_agent_name, validate_repo_key
from fleetmem.errors import InvalidInput
from fleetmem.service.records.files import ContextLoad, context_load_of
from fleetmem.store.files import FileRow, FileStore, LoadRow

log = logging.getLogger("fleetmem.context")


EMPTY_AGENT = "Nothing written yet — this agent runs on defaults."


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """What a segment provider is asked for."""

    workspace: str
    agent: str
    repo: str | None
    run_id: str | None
    now: float
    #: What the run is about (a one-shot's prompt), for picking its facts by relevance;
    #: ``""``: a run whose prompts are not known yet (an interactive session's start);
    #: ``None``: a preview that names no run purpose.
    about: str | None = None


@dataclass(frozen=True, slots=True)
class Provided:
    """A provider's entries, with what must happen before a real run is shown any of them.

    ``before_shown`` is called only in a real run, with the entries the assembly kept (a
    prefix of ``entries``), before the context is returned; it answers the entries that may
    be shown (e.g. the facts whose exposure rows were written). A different answer makes the
    context be assembled again with only those entries, so nothing unrecorded is delivered.
    """

    entries: tuple[str, ...]
    before_shown: Callable[[tuple[str, ...]], Sequence[str]] | None = None


#: Returns the segment's entries (one per line, best or newest first), or None when the
#: segment is switched off for this agent (e.g. memory recall off: no facts block at all).
SegmentProvider = Callable[[ContextRequest], Sequence[str] | Provided | None]


@dataclass(frozen=True, slots=True)
class Truncation:
    """One segment (or file) that did not fit: what a run's log records (FR-49)."""

    segment: str
    ref: str | None
    budget: int
    original: int
    truncated: int


@dataclass(frozen=True, slots=True)
class RunContext:
    agent: str
    repo: str | None
    run_id: str | None
    assembly: Assembly
    truncations: tuple[Truncation, ...]

    @property
    def text(self) -> str:
        return self.assembly.text


@dataclass(frozen=True, slots=True)
class AgentReport:
    """The whole-agent context report (FR-46): every segment, computed without a run."""

    context: RunContext
    empty: bool
    message: str | None
    last_run_id: str | None
    last_run_agreed: bool | None
    #: What each host is given of it at the start, and what it must pull (FR-50 per host).
    hosts: tuple[HostReach, ...] = ()


@dataclass(frozen=True, slots=True)
class HostReach:
    """One host's share of the context: its limit, the size it is given, what is withheld."""

    profile: HostProfile
    assembly: Assembly  # the context as that host is given it

    @property
    def withheld(self) -> tuple[SegmentResult, ...]:
        return self.assembly.pulled

    @property
    def withheld_tokens(self) -> int:
        return sum(s.withheld_tokens for s in self.withheld)

    @property
    def delivered_tokens(self) -> int:
        """Tokens the host is given at the start (the closing note included)."""
        return self.assembly.total

    @property
    def size(self) -> int | None:
        """What the host's limit counts of it (UTF-16 units, or the argument's bytes)."""
        profile = self.profile
        if profile.limit is None:
            return None
        if profile.argument:
            return argument_bytes(profile, self.assembly.text)
        return profile.size(self.assembly.text)


def host_reaches(assembly: Assembly, codec: TokenCodec) -> tuple[HostReach, ...]:
    """``assembly`` fitted to every delivery profile (:data:`fleetmem.core.hosts.PROFILES`).
    A hooked session's figure is the context alone; with ``memory_briefing`` on, the
    briefing shares the same answer."""
    reaches = []
    for profile in PROFILES:
        if profile.argument:
            fit = argument_host(profile, LINUX_ARGUMENT_BYTES)
        elif profile.limit is not None:
            fit = within(profile)
        else:
            reaches.append(HostReach(profile, assembly))
            continue
        assembled = fit_for_host(assembly, codec, fit.fits, fit.note)
        reaches.append(HostReach(fit.profile, assembled))
    return tuple(reaches)


class ContextHost(Protocol):
    """What context assembly needs from the service that hosts it (``ContextFileService``).

    The mixin's methods take ``self`` as this protocol, so mypy checks at every call that the
    host really has these members, with these types.
    """

    store: FileStore
    workspace: str
    providers: dict[str, SegmentProvider]
    _clock: Callable[[], float]
    _nonce: Callable[[], str]

    @property
    def codec(self) -> TokenCodec:
        """The tokenizer that counts against every budget."""
        ...

    def _row(self, ref: FileRef) -> FileRow:
        """The stored row of ``ref``, or an empty revision 0 for a file never written."""
        ...

    def every_run_rows(self) -> list[FileRow]:
        """The workspace files whose mode puts them in every run, in catalog order."""
        ...

    def budget_of(self, ref: FileRef) -> int:
        """An agent or project file's budget (the agent's ``skills_budget`` for Skills)."""
        ...


class ContextMixin:
    """Context assembly for :class:`fleetmem.service.files.ContextFileService`."""

    def assemble(
        self: ContextHost,
        agent: str,
        *,
        repo: str | None = None,
        run_id: str | None = None,
        providers: Mapping[str, SegmentProvider | None] | None = None,
        about: str | None = None,
        host: HostFit | None = None,
    ) -> RunContext:
        """The exact context a run of ``agent`` in ``repo`` receives now.

        ``about`` is what the run is about (its prompt): its facts are then the pinned ones
        and those relevant to it (:mod:`fleetmem.service.context_providers`).

        ``providers`` override the service's own for this call (None switches one off). With
        ``run_id`` the loads are recorded once per run (the first assembly wins) and
        truncations are logged; without it nothing is written.

        ``host`` fits the text to what that host takes at the start: parts that do not fit
        are left out whole for the agent to pull (:mod:`fleetmem.core.hosts`); their loads are
        recorded as for the rest (the run has them, one read away).
        """
        return _assemble(self, agent, repo, run_id, providers, about, host)

    def report(
        self: ContextHost,
        agent: str,
        *,
        repo: str | None = None,
        providers: Mapping[str, SegmentProvider | None] | None = None,
    ) -> AgentReport:
        """Budget, usage and state of every segment the agent receives now (FR-46)."""
        context = _assemble(self, agent, repo, None, providers)
        empty = all(context.assembly.segment(spec.slug).tokens == 0 for spec in AGENT_FILES)
        last = self.store.last_loads(self.workspace, context.agent)
        return AgentReport(
            context=context,
            empty=empty,
            message=EMPTY_AGENT if empty else None,
            last_run_id=last[0].run_id if last else None,
            last_run_agreed=_agreement(context.assembly, last),
            hosts=host_reaches(context.assembly, self.codec),
        )

    def run_loads(self: ContextHost, run_id: str) -> list[ContextLoad]:
        """Which revision of each file a run loaded, with budgets and sizes (its receipt)."""
        return [context_load_of(row) for row in self.store.loads_for_run(self.workspace, run_id)]

    def _record_read(
        self: ContextHost, run_id: str, agent: str, ref: FileRef, revision: int, tokens: int
    ) -> None:
        self.store.record_loads(
            [
                LoadRow(
                    self.workspace,
                    run_id,
                    agent,
                    None,
                    "on_demand",
                    str(ref),
                    revision,
                    0,
                    tokens,
                    tokens,
                    self._clock(),
                )
            ]
        )


# ---- internals --------------------------------------------------------------------------
def _assemble(
    host: ContextHost,
    agent: str,
    repo: str | None,
    run_id: str | None,
    providers: Mapping[str, SegmentProvider | None] | None,
    about: str | None = None,
    host_fit: HostFit | None = None,
) -> RunContext:
    agent = validate_agent_name(agent)
    repo = None if repo is None else validate_repo_key(repo)
    if run_id is not None:
        run_id = check_run_id(run_id, "run_id")
    if about is not None and not isinstance(about, str):
        raise InvalidInput("about", about, "must be a string")
    request = ContextRequest(host.workspace, agent, repo, run_id, host._clock(), about)
    hooks: dict[str, Provided] = {}
    segments = _inputs(host, request, {**host.providers, **(providers or {})}, hooks)

    def fit(inputs: Sequence[SegmentInput]) -> Assembly:
        if host_fit is None:
            return assemble(inputs, host.codec, host._nonce)
        return assemble(
            inputs, host.codec, host._nonce, fits=host_fit.fits, pull_note=host_fit.note
        )

    assembly = fit(segments)
    if run_id is not None and hooks:
        assembly = _settle(request, segments, assembly, hooks, fit)
    truncations = tuple(_truncations(assembly))
    context = RunContext(agent, repo, run_id, assembly, truncations)
    if run_id is not None:
        _record_run(host, request, context)
    return context


def _settle(
    request: ContextRequest,
    segments: list[SegmentInput],
    assembly: Assembly,
    hooks: Mapping[str, Provided],
    fit: Callable[[Sequence[SegmentInput]], Assembly],
) -> Assembly:
    """Tell each provider what a real run is about to be shown; re-assemble without the
    entries it withdraws (their records could not be written)."""
    changed = False
    for key, provided in hooks.items():
        assert provided.before_shown is not None
        shown = kept_entries(assembly.segment(key), provided.entries)
        try:
            allowed = tuple(provided.before_shown(shown)) if shown else ()
        except Exception as exc:  # a provider failure degrades the context, never the run
            metrics.PROVIDER_FAILURES.labels(segment=key).inc()
            log.warning(
                "context.provider_failed segment=%s agent=%s run=%s error=%s",
                key,
                request.agent,
                request.run_id,
                type(exc).__name__,
            )
            allowed = ()
        if allowed == shown:
            continue
        changed = True
        index = next(i for i, s in enumerate(segments) if s.key == key)
        segments[index] = SegmentInput(key, (PartInput(entries=allowed),))
    return fit(segments) if changed else assembly


def _inputs(
    host: ContextHost,
    request: ContextRequest,
    providers: Mapping[str, SegmentProvider | None],
    hooks: dict[str, Provided],
) -> list[SegmentInput]:
    inputs: list[SegmentInput] = []
    if request.repo is not None:
        ref = FileRef(NOTEBOOK, request.repo)
        row = host._row(ref)
        part = PartInput(text=row.body, ref=str(ref), revision=row.revision)
        inputs.append(SegmentInput("notebook", (part,), title=ref.display))
    parts = []
    for row in host.every_run_rows():
        spec = resolve("workspace", row.key.name)
        ref = FileRef(spec)
        parts.append(
            PartInput(text=row.body, label=spec.title, ref=str(ref), revision=row.revision)
        )
    inputs.append(SegmentInput("workspace_context", tuple(parts)))
    for spec in AGENT_FILES:
        ref = FileRef(spec, request.agent)
        row = host._row(ref)
        part = PartInput(text=row.body, ref=str(ref), revision=row.revision)
        budget = host.budget_of(ref) if spec.slug == "skills" else None
        inputs.append(SegmentInput(spec.slug, (part,), budget=budget))
    if request.repo is not None:
        ref = FileRef(SCOPE_PROMPT, request.repo)
        row = host._row(ref)
        part = PartInput(text=row.body, ref=str(ref), revision=row.revision)
        inputs.append(SegmentInput("scope_prompts", (part,)))
    else:
        # No repository, no scope prompt: the report still shows the row, empty.
        inputs.append(SegmentInput("scope_prompts"))
    for key in PROVIDED:
        inputs.append(_provided(key, providers.get(key), request, hooks))
    return inputs


def _record_run(host: ContextHost, request: ContextRequest, context: RunContext) -> None:
    assert request.run_id is not None
    rows: list[LoadRow] = []
    for segment in context.assembly.segments:
        if segment.status != "ok":
            continue
        for part in segment.parts:
            report = part.report
            rows.append(
                LoadRow(
                    host.workspace,
                    request.run_id,
                    request.agent,
                    request.repo,
                    segment.key,
                    part.ref or "",
                    part.revision,
                    report.budget,
                    report.tokens,
                    # A part left for the host to pull is still this run's, at this size.
                    0 if segment.dropped_by_backstop else report.used,
                    request.now,
                )
            )
    host.store.record_loads(rows)
    for cut in context.truncations:
        metrics.CONTEXT_TRUNCATIONS.labels(segment=cut.segment).inc()
        log.info(
            "context.truncated run=%s agent=%s segment=%s file=%s budget=%d original=%d"
            " truncated=%d",
            request.run_id,
            request.agent,
            cut.segment,
            cut.ref or "-",
            cut.budget,
            cut.original,
            cut.truncated,
        )
    log.info(
        "context.assembled run=%s agent=%s repo=%s tokens=%d truncations=%d",
        request.run_id,
        request.agent,
        request.repo or "-",
        context.assembly.total,
        len(context.truncations),
    )


def _provided(
    key: str,
    provider: SegmentProvider | None,
    request: ContextRequest,
    hooks: dict[str, Provided],
) -> SegmentInput:
    if provider is None:
        return SegmentInput(key, status="off")
    try:
        entries = provider(request)
    except Exception as exc:  # a provider failure degrades the context, never fails a run
        metrics.PROVIDER_FAILURES.labels(segment=key).inc()
        log.warning(
            "context.provider_failed segment=%s agent=%s error=%s",
            key,
            request.agent,
            type(exc).__name__,
        )
        return SegmentInput(key, status="error")
    if entries is None:
        return SegmentInput(key, status="off")
    before_shown: Callable[[tuple[str, ...]], Sequence[str]] | None = None
    if isinstance(entries, Provided):
        before_shown = entries.before_shown
        entries = entries.entries
    # Provided text did not come from this module: drop controls and invisible characters.
    cleaned = tuple(strip_invisible(str(entry)) for entry in entries)
    if before_shown is not None:
        originals = dict(zip(cleaned, entries, strict=True))
        hook = before_shown

        def on_shown(shown: tuple[str, ...]) -> tuple[str, ...]:
            # The provider is answered in its own words and answers in them.
            allowed = {strip_invisible(str(e)) for e in hook(tuple(originals[s] for s in shown))}
            return tuple(s for s in shown if s in allowed)

        hooks[key] = Provided(cleaned, on_shown)
    return SegmentInput(key, (PartInput(entries=cleaned),))


def kept_entries(segment: SegmentResult, entries: Sequence[str]) -> tuple[str, ...]:
    """The entries of a feed segment that reach the agent: the longest prefix delivered."""
    if segment.dropped_by_backstop or not segment.parts:
        return ()
    delivered = segment.parts[0].report.delivered
    for count in range(len(entries), 0, -1):
        head = "\n".join(entries[:count])
        if delivered in (head, f"{head}\n{FEED_MARKER}"):
            return tuple(entries[:count])
    return ()


def _truncations(assembly: Assembly) -> list[Truncation]:
    found: list[Truncation] = []
    for segment in assembly.segments:
        if segment.dropped_by_backstop:
            found.append(Truncation(segment.key, None, segment.budget, segment.tokens, 0))
            continue
        for part in segment.parts:
            report = part.report
            if report.truncated:
                found.append(
                    Truncation(
                        segment.key, part.ref, report.budget, report.tokens, report.delivered_tokens
                    )
                )
    return found


def _agreement(assembly: Assembly, loads: Sequence[LoadRow]) -> bool | None:
    """Whether the last run loaded what the meter shows now for the same revisions (FR-50)."""
    current = {
        part.ref: (part.revision, part.report.budget, part.report.used)
        for segment in assembly.segments
        if not segment.dropped_by_backstop
        for part in segment.parts
        if part.ref
    }
    compared = [
        (load.used, current[load.ref][2])
        for load in loads
        if load.ref in current
        and load.segment != "on_demand"
        and current[load.ref][:2] == (load.revision, load.budget)
    ]
    if not compared:
        return None
    return all(then == now for then, now in compared)
