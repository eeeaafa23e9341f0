"""MemoryService: the one place episodic-memory behaviour lives.

Every surface (CLI, HTTP API, and later MCP and the web UI) calls these methods; none has a
private path to the store. Expected outcomes (a skipped run, a degraded recall, a dropped
item) are return values with reasons and are counted; only caller mistakes raise.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from fleetmem import metrics
from fleetmem.config import Settings, apply_project
from fleetmem.core import labels
from fleetmem.core.episode import (
    Episode,
    SessionRepo,
    assemble,
    content_hash,
    primary_session,
    render_text,
    skip_reason,
)
from fleetmem.core.labels import check_run_id
from fleetmem.core.runrecord import RunRecord
from fleetmem.core.scope import project_scope, validate_agent_name, validate_repo_key
from fleetmem.embed.health import describe_embedder
from fleetmem.errors import (
    Conflict,
    InvalidInput,
    InvalidRunRecord,
    NotAttributed,
    NotFound,
    StoreError,
    UnknownEpisode,
)
from fleetmem.providers.base import (
    EpisodeProvider,
)
from fleetmem.providers.builtin import BUILTIN
from fleetmem.service.episode_recall import (
    DEFAULT_RECALL_LIMIT,
    RECALL_WORKERS,
    EpisodeRecallMixin,
)
from fleetmem.service.episode_results import (
    EpisodeHit,
    ForgetResult,
    IngestResult,
    RecallResult,
    RunForgotten,
    RunStored,
)
from fleetmem.service.gitrepo import RepositoryResolver
from fleetmem.service.memory_inputs import (
    episode_row,
    session_rows,
    short_error,
    valid_record_ids,
)
from fleetmem.service.records.episodes import (
    EpisodeIndexEntry,
    StoredEpisode,
    episode_of,
    index_entry_of,
)
from fleetmem.service.reembed import vector_progress
from fleetmem.service.runrecords import parse_run_record
from fleetmem.service.summaries import Summarizer
from fleetmem.store.base import Compaction, EpisodeFilter, EpisodeRow, Job, RunRow, Store
from fleetmem.store.sqlite.fts_upkeep import PASS_BUDGET_S, outside_share
from fleetmem.telemetry import span, traced

#: The result types live in episode_results and the recall half in episode_recall; callers
#: keep importing them from here.
__all__ = [
    "DEFAULT_RECALL_LIMIT",
    "EpisodeHit",
    "ForgetResult",
    "IngestResult",
    "MemoryService",
    "RecallResult",
    "RunStored",
    "backoff",
]

log = logging.getLogger("fleetmem.memory")

#: Branches whose runs never inherit a pull request from earlier runs (see
#: ``_linked_pull_request``): the usual names of a repository's default branch.
DEFAULT_BRANCHES = frozenset({"main", "master", "trunk", "develop", "default"})

#: Failed records and forgets are retried for this long, then marked failed.
RETRY_WINDOW_S = 24 * 3600.0
#: How long status waits for a provider session that has not been checked yet in this process.
PROVIDER_PROBE_S = 5.0
#: Provider states that count as unreachable for the recorded outage (``incompatible`` is
#: reachable but wrong: the doctor fails it at once, with no clock).
DOWN_STATES = frozenset({"unavailable", "breaker_open"})


def backoff(attempts: int) -> float:
    """Seconds before retry number ``attempts + 1``: 30 s doubling, capped at one hour."""
    return float(min(3600, 30 * 2 ** min(attempts, 7)))


class MemoryService(EpisodeRecallMixin):
    """Episodes: ingest run records, record to the provider, recall, forget, retain."""

    def __init__(
        self,
        *,
        store: Store,
        settings: Callable[[], Settings],
        provider: EpisodeProvider,
        summarizer: Summarizer | None = None,
        resolver: RepositoryResolver | None = None,
        clock: Callable[[], float] = time.time,
        provider_for: Callable[[str], EpisodeProvider | None] | None = None,
    ) -> None:
        self.store = store
        self._settings = settings
        self.provider = provider
        self._summarizer = summarizer
        self._resolver = resolver or RepositoryResolver(ttl_seconds=60.0)
        self._clock = clock
        # Forget jobs of a provider that is no longer the configured one still reach it.
        self._provider_for = provider_for
        # Provider calls run here so a hung provider cannot hold a caller past its timeout.
        self._calls = ThreadPoolExecutor(max_workers=4, thread_name_prefix="fleetmem-provider")
        # Episode recalls that overlap the caller's own work (the facts of a recall answer).
        self._recalls = ThreadPoolExecutor(
            max_workers=RECALL_WORKERS, thread_name_prefix="fleetmem-recall"
        )
        self._closed = False
        #: False runs ``recall_alongside``'s two halves one after the other (comparisons).
        self.overlap_recalls = True
        self._run_listeners: list[Callable[[RunStored], None]] = []

    def add_run_listener(self, listener: Callable[[RunStored], None]) -> None:
        """Call ``listener`` after each new run record is stored (the runs service closes the
        live run this way). A failing listener is logged and never fails the ingest."""
        self._run_listeners.append(listener)

    def _notify_run_stored(self, event: RunStored) -> None:
        for listener in self._run_listeners:
            try:
                listener(event)
            except Exception as exc:
                log.warning(
                    "run.listener_failed run=%s error=%s", event.run.run_id, short_error(exc)
                )

    def close(self) -> None:
        self._closed = True
        self._calls.shutdown(wait=False, cancel_futures=True)
        self._recalls.shutdown(wait=False, cancel_futures=True)

    @property
    def settings(self) -> Settings:
        return self._settings()

    def schema_version(self) -> int:
        """The store's schema version (``/healthz`` shows it)."""
        return self.store.schema_version()

    def answered_by(self, provider: EpisodeProvider) -> MemoryService:
        """This service's store, settings, resolver and clock with episodes answered by
        ``provider`` instead, and no summarizer (nothing slow): a briefing computed while
        the configured provider is out of time uses a stand-in that answers as an outage
        does. Close it after use."""
        return MemoryService(
            store=self.store,
            settings=self._settings,
            provider=provider,
            resolver=self._resolver,
            clock=self._clock,
        )

    def now(self) -> float:
        """The service's clock (UNIX seconds); surfaces use it to resolve relative times."""
        return self._clock()

    # ---- ingest -----------------------------------------------------------------------
    @traced(
        "fleetmem.ingest_run",
        lambda r: {"run_id": r.run_id, "episode_id": r.episode_id, "outcome": r.status},
    )
    def ingest_run(
        self, raw: bytes | str | Mapping[str, Any], *, process_now: bool = True
    ) -> IngestResult:
        """Validate, store and close a run; assemble and record its episode if eligible.

        A bad record raises InvalidRunRecord naming the field and stores nothing.
        """
        # ``data`` has passed the ingress boundary: its text is redacted, its labels checked.
        record, data = parse_run_record(raw)
        record_json = json.dumps(data, sort_keys=True, ensure_ascii=False)
        record_hash = hashlib.sha256(record_json.encode("utf-8")).hexdigest()
        previous = self.store.run_hash(record.run_id)
        if previous is not None:
            if previous != record_hash:
                raise Conflict(
                    f"run_id {record.run_id!r} was already ingested with different content",
                    existing=record.run_id,
                )
            run = self.store.get_run(record.run_id)
            status = run.episode_status if run else "duplicate"
            known = status if status.startswith("ep_") else None
            return IngestResult(record.run_id, known, "duplicate")

        repos = self._resolve_sessions(record)
        settings = self.settings
        primary = primary_session(record)
        home = repos.get(primary.id) if primary else None
        if home is not None and home.root is not None:
            # The repository's own .fleetmem.toml may narrow (never widen) the agent's keys.
            settings = apply_project(settings, Path(home.root))
        agent = settings.agent(record.agent)
        skip = skip_reason(
            record, repos, memory_record=agent.memory_record, record_trace=agent.record_trace
        )
        now = self._clock()
        episode: Episode | None = None
        if skip is None:
            episode = assemble(
                record,
                repos,
                excerpt_chars=settings.memory.episodes.excerpt_chars,
                untrusted_inline=agent.untrusted_inline,
                linked_pull_request=self._linked_pull_request(record, home),
            )
        run_row = RunRow(
            run_id=record.run_id,
            agent=record.agent,
            adapter=record.adapter,
            trace_id=record.trace_id,
            model=record.model,
            trigger=record.trigger,
            started_at=record.started_at.timestamp(),
            ended_at=record.ended_at.timestamp(),
            outcome=record.outcome,
            reason=record.reason,
            cost_usd=record.cost_usd,
            cost_source=record.cost_source,
            spawned=record.spawned,
            pull_request=record.pull_request,
            repo=home.key if home else None,
            branch=home.branch if home else None,
            episode_status=episode.episode_id if episode else f"skipped:{skip}",
        )
        sessions, events = session_rows(record, repos)
        with self.store.transaction():
            self.store.insert_run(run_row, sessions, events, record_json, record_hash, now)
            if episode is not None:
                self.store.insert_episode(
                    episode_row(episode, record, now), record_job_provider=self.provider.name
                )
        self._notify_run_stored(RunStored(run=run_row, record=record, repos=repos))
        if episode is None:
            metrics.RUNS_SKIPPED.labels(reason=str(skip)).inc()
            metrics.EPISODES_RECORDED.labels(provider=self.provider.name, outcome="skipped").inc()
            log.info(
                "run.ingested run=%s agent=%s episode=skipped reason=%s",
                record.run_id,
                record.agent,
                skip,
            )
            return IngestResult(record.run_id, None, f"skipped:{skip}")
        log.info(
            "run.ingested run=%s agent=%s episode=%s",
            record.run_id,
            record.agent,
            episode.episode_id,
        )
        if not process_now:
            return IngestResult(record.run_id, episode.episode_id, "pending")
        self.process_jobs(episode_id=episode.episode_id)
        indexed = self.store.index_rows_for_episode(episode.episode_id)
        status = "recorded" if indexed else "pending"
        return IngestResult(record.run_id, episode.episode_id, status)

    def _resolve_sessions(self, record: RunRecord) -> dict[str, SessionRepo]:
        repos: dict[str, SessionRepo] = {}
        for session in record.sessions:
            if session.repo is not None:
                try:
                    key = validate_repo_key(session.repo)
                except InvalidInput as exc:
                    raise InvalidRunRecord(
                        f"sessions[{session.id}].repo", session.repo, exc.reason
                    ) from exc
                repos[session.id] = SessionRepo(key=key, root=None, branch=session.branch)
                continue
            found = self._resolver.resolve(session.cwd)
            if found is not None:
                repos[session.id] = SessionRepo(
                    key=found.key,
                    root=found.root,
                    # A branch git names is outside input too: one outside the branch
                    # label's set is dropped (the run is still recorded).
                    branch=session.branch or labels.coerce("branch", found.branch),
                    real_cwd=os.path.realpath(session.cwd),
                )
        return repos

    # ---- recording and forgetting jobs ------------------------------------------------
    def process_jobs(self, *, limit: int = 100, episode_id: str | None = None) -> dict[str, int]:
        """Run due record and forget jobs (or only those of one episode); returns counts."""
        now = self._clock()
        done: Counter[str] = Counter()
        for job in self.store.due_jobs(now, limit, episode_id=episode_id):
            outcome = self._record(job) if job.kind == "record" else self._forget_one(job)
            done[f"{job.kind}:{outcome}"] += 1
        self._update_pending_gauges()
        return dict(done)

    def _linked_pull_request(self, record: RunRecord, home: SessionRepo | None) -> str | None:
        """The pull request an earlier run linked to this run's branch (000 REQ-5), when the
        record names none. Not on a default branch, where every run would inherit whichever
        pull request someone last opened from it."""
        if record.pull_request or home is None or not home.branch:
            return None
        if home.branch in DEFAULT_BRANCHES:
            return None
        return self.store.linked_pull_request(home.key, home.branch, record.started_at.timestamp())

    def _utility_allows(self, use: str) -> bool:
        """Take one slot of the shared utility limits; False (counted) when none is left."""
        api = self.settings.model_api
        now = self._clock()
        outcome = self.store.utility_claim(
            use,
            now=now,
            per_minute=api.utility_rate_per_minute,
            day_start=now - now % 86400.0,
            daily=api.utility_daily_ceiling,
        )
        metrics.UTILITY_CALLS.labels(use=use, outcome=outcome).inc()
        if outcome != "called":
            log.info("utility.refused use=%s reason=%s", use, outcome)
        return outcome == "called"

    def utility_status(self) -> dict[str, Any]:
        """Today's utility calls (UTC day) against the configured limits."""
        api = self.settings.model_api
        now = self._clock()
        counts = self.store.utility_counts(now - now % 86400.0)
        return {
            "calls_today": counts.get("called", 0),
            "refused_today": {
                "rate_limited": counts.get("rate_limited", 0),
                "daily_ceiling": counts.get("daily_ceiling", 0),
            },
            "rate_per_minute": api.utility_rate_per_minute,
            "daily_ceiling": api.utility_daily_ceiling,
        }

    def _summarize(self, row: EpisodeRow) -> None:
        """Attach a summary once, before the first send; never blocks past its deadline."""
        if row.summary_outcome is not None or row.episode is None:
            return
        episode = Episode.from_dict(row.episode)
        outcome = "fallback"
        if (
            self._summarizer is not None
            and self.settings.memory.episodes.summary
            and self._utility_allows("episode_summary")
        ):
            result = self._summarizer.summarize(row.text or render_text(episode))
            if result.summary:
                episode = episode.with_summary(result.summary)
                outcome = "ok" if episode.summary else "fallback"
        metrics.EPISODE_SUMMARIES.labels(outcome=outcome).inc()
        text = render_text(episode)
        self.store.update_episode_body(
            row.id,
            summary=episode.summary,
            summary_outcome=outcome,
            episode=episode.to_dict(),
            text=text,
            content_hash=content_hash(text),
        )

    def _record(self, job: Job) -> str:
        with span("fleetmem.episode.record", episode_id=job.episode_id, provider=job.provider) as s:
            outcome = self._record_job(job)
            s.set(outcome=outcome)
            return outcome

    def _record_job(self, job: Job) -> str:
        row = self.store.get_episode(job.episode_id)
        if row is None or row.forgotten_at is not None or row.episode is None:
            self.store.finish_job(job.id)
            return "cancelled"
        if job.provider != self.provider.name:
            return self._retry(job, "provider is not the configured one", "record")
        if job.provider == BUILTIN and self.store.builtin_has(row.id):
            # Only a job whose holder died between the built-in index's write and the job's
            # end finds the episode indexed already (the two commit apart; the provider may
            # run on another thread). Finish it: recording, and summarizing, again would do
            # the work twice. An upstream provider cannot be asked, so a job it outlived is
            # sent again, keyed by the episode id (docs/postgres.md).
            with self.store.transaction():
                self.store.add_index_rows(job.provider, [row.id], row.id, row.scope, self._clock())
                self.store.finish_job(job.id)
            log.info("episode.record_resumed provider=%s episode=%s", job.provider, row.id)
            return "ok"
        self._summarize(row)
        row = self.store.get_episode(job.episode_id) or row
        assert row.episode is not None and row.text is not None
        started = time.perf_counter()
        try:
            ids = self._call(
                lambda: self.provider.record(
                    row.id, row.scope, row.trust_class, row.episode or {}, row.text or ""
                ),
                timeout=max(10.0, self.settings.memory.episodes.provider_timeout_s),
            )
            ids = valid_record_ids(ids)
        except Exception as exc:  # any provider failure becomes a retry, never a lost episode
            metrics.PROVIDER_DURATION.labels(provider=job.provider, op="record").observe(
                time.perf_counter() - started
            )
            log.warning(
                "episode.record_failed provider=%s episode=%s error=%s",
                job.provider,
                job.episode_id,
                short_error(exc),
            )
            return self._retry(job, short_error(exc), "record")
        metrics.PROVIDER_DURATION.labels(provider=job.provider, op="record").observe(
            time.perf_counter() - started
        )
        with self.store.transaction():
            self.store.add_index_rows(job.provider, ids, row.id, row.scope, self._clock())
            self.store.finish_job(job.id)
        metrics.EPISODES_RECORDED.labels(provider=job.provider, outcome="ok").inc()
        log.info(
            "episode.recorded provider=%s episode=%s ids=%d bytes=%d",
            job.provider,
            row.id,
            len(ids),
            len(row.text.encode("utf-8")),
        )
        return "ok"

    def _forget_one(self, job: Job) -> str:
        assert job.provider_id is not None
        provider: EpisodeProvider | None = self.provider
        if job.provider != self.provider.name:
            provider = self._provider_for(job.provider) if self._provider_for else None
        if provider is None:
            return self._retry(job, "provider is not the configured one", "forget")
        pid = job.provider_id
        forget = provider.forget
        started = time.perf_counter()
        try:
            self._call(
                lambda: forget(pid),
                timeout=max(5.0, self.settings.memory.episodes.provider_timeout_s),
            )
        except Exception as exc:
            log.warning(
                "episode.forget_failed provider=%s episode=%s error=%s",
                job.provider,
                job.episode_id,
                short_error(exc),
            )
            return self._retry(job, short_error(exc), "forget")
        finally:
            metrics.PROVIDER_DURATION.labels(provider=job.provider, op="forget").observe(
                time.perf_counter() - started
            )
        with self.store.transaction():
            # forgotten: false (unknown id) still means the provider no longer holds it.
            self.store.set_index_state(job.provider, pid, "forgotten")
            self.store.finish_job(job.id)
        return "ok"

    def _retry(self, job: Job, error: str, kind: str) -> str:
        now = self._clock()
        if now - job.created_at >= RETRY_WINDOW_S:
            self.store.fail_job(job.id, error)
            if kind == "record":
                metrics.EPISODES_RECORDED.labels(provider=job.provider, outcome="error").inc()
            elif job.provider_id is not None:
                self.store.set_index_state(job.provider, job.provider_id, "forget_failed")
            return "failed"
        self.store.retry_job(job.id, now + backoff(job.attempts), error)
        return "retry"

    def _update_pending_gauges(self) -> None:
        counts = self.store.job_counts()
        for kind in ("record", "forget"):
            metrics.PENDING.labels(provider=self.provider.name, kind=kind).set(
                counts.get((kind, "pending"), 0)
            )

    # ---- reading ----------------------------------------------------------------------
    def list_episodes(
        self,
        *,
        agent: str | None = None,
        repo: str | None = None,
        since: float | None = None,
        limit: int = 100,
    ) -> list[StoredEpisode]:
        if not 1 <= limit <= 1000:
            raise InvalidInput("limit", limit, "must be between 1 and 1000")
        if repo is not None:
            repo = validate_repo_key(repo)
        if agent is not None:
            agent = validate_agent_name(agent)
        rows = self.store.list_episodes(
            EpisodeFilter(agent=agent, repo=repo, since=since, limit=limit)
        )
        return [episode_of(row) for row in rows]

    def get_episode(self, episode_id: str) -> StoredEpisode:
        row = self.store.get_episode(episode_id)
        if row is None:
            raise UnknownEpisode(episode_id)
        return episode_of(row)

    def episode_index(self, episode_id: str) -> list[EpisodeIndexEntry]:
        """Where each provider holds ``episode_id`` and in what state (empty until one has
        recorded it), forgotten episodes included: forgetting reports through it."""
        return [index_entry_of(row) for row in self.store.index_rows_for_episode(episode_id)]

    def scopes_for(
        self, *, repo: str | None = None, agent: str | None = None, every_repo: bool = False
    ) -> list[str]:
        """The scopes a caller may see: a repository named by the operator, an agent's, or
        (``every_repo``, the operator only) every repository holding an episode."""
        if every_repo:
            if repo is not None or agent is not None:
                raise InvalidInput("every_repo", every_repo, "give it without repo or agent")
            return self.store.episode_scopes()
        if repo is not None:
            return [project_scope(validate_repo_key(repo))]
        if agent is not None:
            last = self.store.latest_run(agent)
            if last is None or last.repo is None:
                raise NotAttributed(
                    "the agent has no run in a repository to take a scope from", agent=agent
                )
            return [project_scope(last.repo)]
        raise NotAttributed("recall needs a repository or an agent to scope it")

    # ---- forgetting -------------------------------------------------------------------
    @traced("fleetmem.forget", lambda r: {"episode_id": r.episode_id})
    def forget(self, episode_id: str) -> ForgetResult:
        """Tombstone first (recall drops it at once), then ask the provider to forget."""
        row = self.get_episode(episode_id)
        already = row.forgotten_at is not None
        pending = self.store.tombstone_episode(episode_id, self._clock())
        log.info("episode.forgotten episode=%s provider_ids=%d", episode_id, len(pending))
        if pending:
            self.process_jobs(episode_id=episode_id)
        states = Counter(r.state for r in self.store.index_rows_for_episode(episode_id))
        return ForgetResult(
            episode_id=episode_id,
            already_forgotten=already,
            pending=states.get("forget_pending", 0),
            forgotten=states.get("forgotten", 0),
        )

    def forget_run(self, run_id: str) -> RunForgotten:
        """Take a run out of the run graph entirely (``fleetmem forget --run RUN``).

        Tombstone first, as for an episode: each of the run's episodes is forgotten (recall
        drops it at once, its providers are asked to forget it), then the run's rows go in
        one transaction (docs/runs.md, "What the run graph keeps"). ``NotFound`` when no
        trace of the run is stored."""
        run_id = check_run_id(run_id, "run")
        episodes = tuple(self.forget(e) for e in self.store.episodes_of_run(run_id))
        if not self.store.remove_run(run_id) and not episodes:
            raise NotFound("unknown run", run=run_id)
        log.info("run.forgotten run=%s episodes=%d", run_id, len(episodes))
        return RunForgotten(run_id, episodes)

    def apply_retention(self) -> int:
        """Forget every episode older than ``[memory.episodes] retention``; returns how many."""
        cutoff = self._clock() - self.settings.memory.episodes.retention_s
        total = 0
        while True:
            batch = self.store.episodes_started_before(cutoff, 500)
            if not batch:
                return total
            for episode_id in batch:
                self.forget(episode_id)
            total += len(batch)

    def compact_index(self, budget_s: float = PASS_BUDGET_S) -> Compaction:
        """Merge the built-in text index's segments (see ``store/sqlite/fts_upkeep.py``).

        The daemon's hourly pass and ``fleetmem jobs`` call this: an index fed one episode at
        a time splits into more segments as it grows, and each one costs every text query
        a lookup per term.
        """
        done = self.store.builtin_compact(budget_s)
        metrics.INDEX_SEGMENTS.set(done.segments_after)
        if done.steps:
            log.info(
                "jobs.index_compacted segments=%d->%d steps=%d seconds=%.2f complete=%s",
                done.segments_before,
                done.segments_after,
                done.steps,
                done.seconds,
                done.complete,
            )
        return done

    def backfill_vectors(self, limit: int = 50) -> int:
        """Re-embed built-in episodes that were indexed while the embedder was down."""
        embed_document = getattr(self.provider, "embed_document", None)
        embedder = getattr(self.provider, "embedder", None)
        if embed_document is None or embedder is None:
            return 0
        fixed = 0
        for row in self.store.builtin_missing_vectors(embedder.model_id, limit):
            if row.episode is None or row.text is None:
                continue
            vector, _, _ = embed_document(row.episode)
            if vector is None:
                break  # still down; try again on the next tick
            self.provider.record(row.id, row.scope, row.trust_class, row.episode, row.text)
            fixed += 1
        return fixed

    # ---- status -----------------------------------------------------------------------
    def probe_provider(self) -> dict[str, Any]:
        """Check the provider's contract now and record what was seen (the daemon does this
        on every background tick, so an idle provider that died is noticed within seconds).
        Never raises: a probe that fails is itself the news."""
        recheck = getattr(self.provider, "recheck", None)
        if recheck is not None:
            try:
                recheck(PROVIDER_PROBE_S)
            except Exception as exc:
                log.warning("provider.probe_failed error=%s", type(exc).__name__)
        return self.provider_state()

    def provider_state(self) -> dict[str, Any]:
        """This process's view of the provider, with ``down_since`` taken from the recorded
        outage when that began earlier: how long a provider has been unreachable must not
        depend on when the process that asks was started."""
        describe = getattr(self.provider, "describe", None)
        provider: dict[str, Any] = (
            describe(probe_s=PROVIDER_PROBE_S)
            if describe is not None
            else {"name": self.provider.name, "state": "ok", "contract": None}
        )
        state = str(provider.get("state"))
        down = state in DOWN_STATES
        try:
            record = self.store.note_provider_health(
                str(provider.get("name")),
                state=state,
                down=down,
                at=self._clock(),
                reason=provider.get("reason"),
            )
        except StoreError as exc:
            log.warning("provider.health_not_recorded error=%s", exc)
            return provider
        if down and record.down_since is not None:
            own = provider.get("down_since")
            provider["down_since"] = min(record.down_since, own or record.down_since)
        return provider

    def reembed_progress(self) -> dict[str, Any]:
        """How many episodes and facts have a vector of the active embedder (``reembed``)."""
        return vector_progress(self.store, getattr(self.provider, "embedder", None))

    def status(self, *, probe_embedder: bool = True) -> dict[str, Any]:
        """A JSON-ready description of the memory subsystem (documented in docs/cli.md).

        ``embedder`` names the active embedder and says whether search is hybrid or
        word-only and why (``probe_embedder`` loads an unloaded local model to find out);
        ``reembed`` is the progress of filling in vectors of the active model.
        """
        jobs = self.store.job_counts()
        embedder = getattr(self.provider, "embedder", None)
        health = describe_embedder(embedder, probe=probe_embedder)
        progress = self.reembed_progress()
        # The episodes still without a vector, as the re-embed progress counts them (one COUNT
        # query); capped as the figure has always been.
        missing = min(progress["episodes"]["missing"], 10_000) if progress["episodes"] else 0
        now = self._clock()
        segments = self.store.builtin_segments()
        oldest_record = self.store.oldest_pending("record")
        oldest_forget = self.store.oldest_pending("forget")
        settings = self.settings
        provider = self.provider_state()
        return {
            "provider": provider,
            "embedding_model": embedder.model_id if embedder else None,
            "embedder": health.as_dict(),
            "reembed": progress,
            "summaries": bool(
                self._summarizer
                and self._summarizer.configured
                and settings.memory.episodes.summary
            ),
            "utility": self.utility_status(),
            "episodes": self.store.episode_counts(),
            "runs": self.store.run_status_counts(),
            "pending": {
                "record": jobs.get(("record", "pending"), 0),
                "forget": jobs.get(("forget", "pending"), 0),
                "oldest_record_age_s": None if oldest_record is None else now - oldest_record,
                "oldest_forget_age_s": None if oldest_forget is None else now - oldest_forget,
            },
            "failed": {
                "record": jobs.get(("record", "failed"), 0),
                "forget": jobs.get(("forget", "failed"), 0),
            },
            "vectors_missing": missing,
            "index_segments": len(segments),
            "index_outside_largest": round(outside_share(segments), 4),
            "retention_s": settings.memory.episodes.retention_s,
        }
