"""Runs: live runs with tokens and heartbeats, presence, collisions, recent runs, attribution.

A run is opened (by ``fleetmem run``, a hook or the API) and gets an opaque token; fleetmem
keeps only the token's SHA-256. The run heartbeats (optionally reporting its branch and the
files it edited) and is closed by its run record, or expires after ``[runs] expire_after``
of silence; a heartbeat after an expiry makes it live again. Live runs give presence (who is
working where) and collisions (another live run on the same repository, stronger on the same
branch, strongest on overlapping files). Stored runs give "recent runs" and "runs that edited
these paths". A token resolves to a :class:`Caller` whose scopes decide what it may see.
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from fleetmem import metrics
from fleetmem.config import Settings
from fleetmem.core import labels
from fleetmem.core.episode import SessionRepo
from fleetmem.core.ingress import clean_text
from fleetmem.core.redact import find_secrets
from fleetmem.core.scope import (
    WORKSPACE,
    agent_scope,
    project_scope,
    relativize,
    validate_agent_name,
    validate_repo_key,
)
from fleetmem.errors import Conflict, InvalidInput, NotAttributed, NotFound
from fleetmem.service.gitrepo import Repository, RepositoryResolver, relative_to_repository
from fleetmem.service.memory import RunStored
from fleetmem.service.records.runs import (
    LiveRunInfo,
    RunEvent,
    RunSession,
    StoredRun,
    event_of,
    live_run_of,
    session_of,
    stored_run_of,
)
from fleetmem.store.base import RunRow
from fleetmem.store.runs import LiveRunRow, LiveRunStore

log = logging.getLogger("fleetmem.runs")

TOKEN_PREFIX = "fmr_"
SOURCES = ("supervisor", "hook", "api", "cli")
MAX_FILES_PER_RUN = 500
MAX_FILES_PER_HEARTBEAT = 100
MAX_PATHS_STORED_PER_RUN = 1000
MAX_PATH_CHARS = 1024
RECENT_RUNS_LIMIT = 5
# Expired runs are written down at most this often; reads filter by last_seen anyway.
_SWEEP_EVERY_S = 5.0

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

RunState = Literal["live", "expired", "closed"]
Strength = Literal["files", "branch", "repository"]
_STRENGTH_RANK: dict[str, int] = {"files": 0, "branch": 1, "repository": 2}


def hash_token(token: str) -> str:
    """The stored form of a run token: its SHA-256 in hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def _new_run_id() -> str:
    return "run-" + secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class OpenedRun:
    """A newly opened run and its token (shown once: fleetmem keeps only its hash)."""

    run_id: str
    token: str
    agent: str
    repo: str | None
    branch: str | None
    workdir: str | None
    opened_at: float
    expire_after_s: float


@dataclass(frozen=True, slots=True)
class LiveRun:
    """A live run with its state as of now."""

    info: LiveRunInfo
    state: RunState


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling, taken from its run: what it may see follows from here."""

    run_id: str
    agent: str
    repo: str | None
    branch: str | None
    scopes: tuple[str, ...]
    state: RunState
    files: tuple[str, ...] = ()

    @property
    def episode_scopes(self) -> tuple[str, ...]:
        """Episodes live in ``project:<repo>`` only; a caller outside a repository sees none."""
        return tuple(s for s in self.scopes if s.startswith("project:"))


@dataclass(frozen=True, slots=True)
class Collision:
    """Another live run on the same repository; ``overlap`` are files both have edited."""

    run: LiveRunInfo
    strength: Strength
    overlap: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One line of ``runs list``: a stored run, or a live one without its record yet."""

    run_id: str
    agent: str
    adapter: str | None
    repo: str | None
    branch: str | None
    state: str  # live, expired, recorded
    started_at: float
    ended_at: float | None
    outcome: str | None
    reason: str | None
    duration_ms: int | None
    pull_request: str | None
    files: int


@dataclass(frozen=True, slots=True)
class RunDetail:
    """Everything known about one run: its live row and/or its stored record."""

    run_id: str
    live: LiveRun | None
    stored: StoredRun | None
    sessions: tuple[RunSession, ...]
    events: tuple[RunEvent, ...]


class RunsService:
    """Live runs, presence, collisions, recent runs and caller attribution."""

    def __init__(
        self,
        *,
        store: LiveRunStore,
        settings: Callable[[], Settings],
        resolver: RepositoryResolver | None = None,
        clock: Callable[[], float] = time.time,
        new_token: Callable[[], str] = _new_token,
        new_run_id: Callable[[], str] = _new_run_id,
    ) -> None:
        self.store = store
        self._settings = settings
        self._resolver = resolver or RepositoryResolver(ttl_seconds=60.0)
        self._clock = clock
        self._new_token = new_token
        self._new_run_id = new_run_id
        self._sweep_lock = threading.Lock()
        self._last_sweep: float | None = None

    @property
    def expire_after_s(self) -> float:
        return self._settings().runs.expire_after_s

    def now(self) -> float:
        return self._clock()

    # ---- opening, heartbeats, closing -------------------------------------------------
    def open_run(
        self,
        agent: str,
        *,
        repo: str | None = None,
        workdir: str | None = None,
        branch: str | None = None,
        adapter: str | None = None,
        run_id: str | None = None,
        source: str = "api",
    ) -> OpenedRun:
        """Open a run of ``agent`` in ``repo`` (a repository key) or ``workdir`` (a directory).

        With ``workdir`` the repository, its root and branch come from git; a directory
        outside any repository opens a run with no repository (it sees no episodes).
        Raises InvalidInput naming the field for a bad value or a run id already in use.
        """
        # The ingress boundary for a run opened by a caller: labels checked (a bad or secret
        # one refused, the value never echoed), text redacted before it is used.
        agent = labels.check("agent", agent, "agent")
        if source not in SOURCES:
            raise InvalidInput("source", source, "must be one of " + ", ".join(SOURCES))
        if repo is None and workdir is None:
            raise InvalidInput("repo", None, "give a repository key or a working directory")
        if run_id is not None:
            run_id = labels.check("ident", run_id, "run_id")
        if adapter is not None:
            adapter = labels.check("adapter", adapter, "adapter")
        if branch is not None:
            branch = labels.check("branch", branch, "branch")
        if repo is not None and isinstance(repo, str) and find_secrets(repo):
            raise InvalidInput("repo", labels.describe(repo), "holds a secret; it is refused")
        found: Repository | None = None
        if workdir is not None:
            if not isinstance(workdir, str) or not workdir.startswith("/") or "\x00" in workdir:
                raise InvalidInput("workdir", workdir, "must be an absolute path")
            workdir = clean_text(workdir)
            found = self._resolver.resolve(workdir)
        key = validate_repo_key(repo) if repo is not None else (found.key if found else None)
        root = found.root if found is not None and found.key == key else None
        if branch is None and root is not None and found is not None:
            branch = labels.coerce("branch", found.branch)
        now = self._clock()
        self.sweep()
        run_id = run_id or self._new_run_id()
        if self.store.get_run(run_id) is not None:
            raise Conflict(f"run_id {run_id!r} already has a run record", existing=run_id)
        token = self._new_token()
        row = LiveRunRow(
            run_id=run_id,
            agent=agent,
            adapter=adapter,
            repo=key,
            branch=branch,
            root=root,
            workdir=workdir,
            source=source,
            opened_at=now,
            last_seen_at=now,
            closed_at=None,
            close_reason=None,
        )
        if not self.store.open_live_run(row, hash_token(token)):
            raise InvalidInput("run_id", run_id, "is already open")
        metrics.RUNS_OPENED.labels(source=source).inc()
        log.info("run.opened run=%s agent=%s source=%s repo=%s", run_id, agent, source, bool(key))
        self._update_gauge()
        return OpenedRun(
            run_id=run_id,
            token=token,
            agent=agent,
            repo=key,
            branch=row.branch,
            workdir=row.workdir,
            opened_at=now,
            expire_after_s=self.expire_after_s,
        )

    def heartbeat(
        self, token: str | None, *, files: Sequence[str] = (), branch: str | None = None
    ) -> LiveRun:
        """Mark the token's run as seen now; record its branch and the files it edited.

        Paths are repository-relative, or absolute under the run's checkout (a run opened
        with a working directory). A run closed by its record is refused (not_attributed).
        """
        row = self._row_for(token)
        if row.close_reason == "record":
            raise NotAttributed("the run is closed: its run record was ingested", run=row.run_id)
        if branch is not None:
            branch = labels.check("branch", branch, "branch")
        items = list(files)
        if len(items) > MAX_FILES_PER_HEARTBEAT:
            raise InvalidInput("files", f"{len(items)} paths", "at most 100 paths per heartbeat")
        # Redacted before normalised: normpath folds the '//' of a URL a URL rule needs.
        paths = [_repo_path(p, row.root, clean=True) for p in items]
        now = self._clock()
        self.store.heartbeat_live_run(
            row.run_id, now, branch=branch, files=paths, max_files=MAX_FILES_PER_RUN
        )
        fresh = self.store.get_live_run(row.run_id)
        assert fresh is not None
        return LiveRun(live_run_of(fresh), self._state(fresh, now))

    def touch(self, token: str | None, paths: Sequence[str]) -> LiveRun:
        """Record that the token's run edited ``paths`` (a heartbeat that carries files)."""
        if not paths:
            raise InvalidInput("paths", [], "name at least one path")
        return self.heartbeat(token, files=paths)

    def on_run_stored(self, event: RunStored) -> None:
        """Listener for :meth:`MemoryService.ingest_run`: close the live run, index its paths."""
        run = event.run
        edits = _edited_paths(event)
        with self.store.transaction():
            closed = self.store.close_live_run(run.run_id, run.agent, self._clock(), "record")
            self.store.record_run_paths(run.run_id, edits, run.ended_at)
        if closed:
            metrics.RUNS_CLOSED.labels(how="record").inc()
            log.info("run.closed run=%s agent=%s how=record", run.run_id, run.agent)
            self._update_gauge()

    def sweep(self, *, force: bool = False) -> int:
        """Write down runs silent for longer than ``expire_after``; returns how many."""
        now = self._clock()
        with self._sweep_lock:
            if (
                not force
                and self._last_sweep is not None
                and 0 <= now - self._last_sweep < _SWEEP_EVERY_S
            ):
                return 0
            self._last_sweep = now
        expired = self.store.expire_live_runs(now - self.expire_after_s, now)
        if expired:
            metrics.RUNS_CLOSED.labels(how="expired").inc(expired)
            log.info("run.expired count=%d", expired)
        self._update_gauge()
        return expired

    # ---- attribution ------------------------------------------------------------------
    def resolve_caller(self, token: str | None) -> Caller:
        """The caller a run token stands for; NotAttributed without a known token.

        Its scopes: ``workspace``, ``project:<repo>`` of its run's repository (taken from
        its working directory when it was opened with one) and ``agent:<name>``.
        """
        return self._caller(self._row_for(token))

    def newest_live_caller(self, agent: str) -> Caller | None:
        """The caller of ``agent``'s most recently opened run that is still live (operator
        previews use it); None when it has none."""
        now = self._clock()
        for row in self.store.list_live_runs(
            repo=None, agent=agent, include_closed=False, limit=20
        ):
            if self._state(row, now) == "live":
                return self._caller(row)
        return None

    def _caller(self, row: LiveRunRow) -> Caller:
        scopes = [WORKSPACE]
        if row.repo is not None:
            scopes.append(project_scope(row.repo))
        scopes.append(agent_scope(row.agent))
        return Caller(
            run_id=row.run_id,
            agent=row.agent,
            repo=row.repo,
            branch=row.branch,
            scopes=tuple(scopes),
            state=self._state(row, self._clock()),
            files=row.files,
        )

    def _row_for(self, token: str | None) -> LiveRunRow:
        if not token:
            raise NotAttributed("no run token: the caller is not attributed to a run")
        if not isinstance(token, str) or len(token) > 512:
            raise NotAttributed("not a run token")
        row = self.store.live_run_by_token(hash_token(token))
        if row is None:
            raise NotAttributed("unknown run token")
        return row

    # ---- presence and collisions ------------------------------------------------------
    def live_runs(self, repo: str | None = None) -> list[LiveRunInfo]:
        """Runs open and heard from within ``expire_after``, by repository, branch, start."""
        if repo is not None:
            repo = validate_repo_key(repo)
        self.sweep()
        rows = self.store.open_live_runs(repo, self._clock() - self.expire_after_s)
        return [live_run_of(row) for row in rows]

    def collisions(
        self,
        repo: str,
        *,
        branch: str | None = None,
        files: Sequence[str] = (),
        exclude_run_id: str | None = None,
    ) -> list[Collision]:
        """Other live runs on ``repo``: overlapping files first, then same branch, then the rest;
        within a strength, most recently seen first."""
        mine = set(files)
        found: list[Collision] = []
        for row in self.live_runs(repo):
            if row.run_id == exclude_run_id:
                continue
            overlap = tuple(sorted(mine & set(row.files)))
            strength: Strength = (
                "files"
                if overlap
                else "branch"
                if branch is not None and row.branch == branch
                else "repository"
            )
            found.append(Collision(run=row, strength=strength, overlap=overlap))
        found.sort(key=lambda c: (_STRENGTH_RANK[c.strength], -c.run.last_seen_at, c.run.run_id))
        return found

    def collisions_for(self, caller: Caller) -> list[Collision]:
        """Collisions of a caller's run; none outside a repository."""
        if caller.repo is None:
            return []
        return self.collisions(
            caller.repo, branch=caller.branch, files=caller.files, exclude_run_id=caller.run_id
        )

    # ---- stored runs ------------------------------------------------------------------
    def recent_runs(
        self, repo: str, branch: str | None = None, limit: int = RECENT_RUNS_LIMIT
    ) -> list[RunRow]:
        """The last runs on ``repo`` (and ``branch`` when given), newest end first."""
        _check_limit(limit)
        return self.store.recent_runs(validate_repo_key(repo), branch, limit)

    def runs_editing(
        self, repo: str, paths: Sequence[str], limit: int = RECENT_RUNS_LIMIT
    ) -> list[RunRow]:
        """Stored runs that edited any of ``paths`` in ``repo``, newest end first.

        Paths are repository-relative; one ending in ``/`` matches everything under it.
        """
        _check_limit(limit)
        wanted = [_repo_path(p, None, keep_slash=True) for p in paths]
        if not wanted:
            return []
        return self.store.runs_editing(validate_repo_key(repo), wanted, limit)

    def list_runs(
        self, *, repo: str | None = None, agent: str | None = None, limit: int = 20
    ) -> list[RunSummary]:
        """Live runs without a record yet and stored runs, newest start first."""
        if not 1 <= limit <= 1000:
            raise InvalidInput("limit", limit, "must be between 1 and 1000")
        if repo is not None:
            repo = validate_repo_key(repo)
        if agent is not None:
            agent = validate_agent_name(agent)
        self.sweep()
        now = self._clock()
        stored = self.store.list_runs(repo=repo, agent=agent, limit=limit)
        live = self.store.list_live_runs(repo=repo, agent=agent, include_closed=False, limit=limit)
        known = {r.run_id for r in stored}
        out = [_stored_summary(r) for r in stored]
        out += [_live_summary(r, self._state(r, now)) for r in live if r.run_id not in known]
        out.sort(key=lambda s: (-s.started_at, s.run_id))
        return out[:limit]

    def show_run(self, run_id: str) -> RunDetail:
        """One run, live and/or stored; NotFound when fleetmem knows neither."""
        live_row = self.store.get_live_run(run_id)
        stored = self.store.get_run(run_id)
        if live_row is None and stored is None:
            raise NotFound("unknown run", run=run_id)
        live = None
        if live_row is not None:
            live = LiveRun(live_run_of(live_row), self._state(live_row, self.now()))
        if stored is None:
            return RunDetail(run_id, live, None, (), ())
        sessions = tuple(session_of(s) for s in self.store.run_sessions(run_id))
        events = tuple(event_of(e) for e in self.store.run_events(run_id))
        return RunDetail(run_id, live, stored_run_of(stored), sessions, events)

    # ---- helpers ----------------------------------------------------------------------
    def _state(self, row: LiveRunRow, now: float) -> RunState:
        if row.close_reason == "record":
            return "closed"
        if row.closed_at is not None or now - row.last_seen_at > self.expire_after_s:
            return "expired"
        return "live"

    def _update_gauge(self) -> None:
        metrics.LIVE_RUNS.set(self.store.count_open_live_runs())


def _check_limit(limit: object) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
        raise InvalidInput("limit", limit, "must be an integer between 1 and 50")


def _repo_path(
    path: object, root: str | None, *, keep_slash: bool = False, clean: bool = False
) -> str:
    """A repository-relative path from what a run reported; InvalidInput when it is not one.

    With ``clean`` (a path that will be stored) it is redacted before it is normalised.
    """
    if not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS:
        raise InvalidInput("paths", path, "must be a path of 1 to 1024 characters")
    if _CONTROL.search(path):
        raise InvalidInput("paths", path, "must not contain control characters")
    if clean:
        path = clean_text(path)
    folder = keep_slash and path.endswith("/")
    if path.startswith("/"):
        if root is None:
            raise InvalidInput(
                "paths", path, "must be repository-relative (the run has no known checkout)"
            )
        repo = Repository(root=root, key="", branch=None)
        rel = relative_to_repository(repo, path)
        if rel is None:
            raise InvalidInput("paths", path, "is outside the run's repository")
        return rel
    normal = posixpath.normpath(path)
    if normal == "." or normal.startswith("../") or normal == "..":
        raise InvalidInput("paths", path, "must stay inside the repository")
    return normal + "/" if folder else normal


def _edited_paths(event: RunStored) -> list[tuple[str, str]]:
    """(repo, repository-relative path) for every edit of the run, in a known repository."""
    found: dict[tuple[str, str], None] = {}
    for session in event.record.sessions:
        where = event.repos.get(session.id)
        if where is None:
            continue
        for edit in session.edits:
            rel = _relative(edit.path, where, session.cwd)
            if rel is not None:
                found.setdefault((where.key, rel), None)  # redacted at the boundary
            if len(found) >= MAX_PATHS_STORED_PER_RUN:
                return list(found)
    return list(found)


def _relative(path: str, where: SessionRepo, cwd: str) -> str | None:
    # The same rule as episode assembly: without a checkout root only relative paths count.
    if where.root is None:
        return relativize(path, "/", "/")
    return relativize(path, where.root, where.real_cwd or cwd)


def _stored_summary(row: RunRow) -> RunSummary:
    return RunSummary(
        run_id=row.run_id,
        agent=row.agent,
        adapter=row.adapter,
        repo=row.repo,
        branch=row.branch,
        state="recorded",
        started_at=row.started_at,
        ended_at=row.ended_at,
        outcome=row.outcome,
        reason=row.reason,
        duration_ms=round((row.ended_at - row.started_at) * 1000),
        pull_request=row.pull_request,
        files=0,
    )


def _live_summary(row: LiveRunRow, state: RunState) -> RunSummary:
    return RunSummary(
        run_id=row.run_id,
        agent=row.agent,
        adapter=row.adapter,
        repo=row.repo,
        branch=row.branch,
        state=state,
        started_at=row.opened_at,
        ended_at=None,
        outcome=None,
        reason=None,
        duration_ms=None,
        pull_request=None,
        files=len(row.files),
    )
