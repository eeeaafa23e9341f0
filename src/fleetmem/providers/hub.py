"""The providers of one process: the built-in one and every ``[mcp.NAME]`` upstream.

The hub owns the MCP loop thread and one :class:`McpEpisodeProvider` (one supervised session
and one circuit breaker) per provider name, created on first use and replaced when a
configuration reload changes that upstream's table. The memory service holds a
:class:`ConfiguredProvider`, which always forwards to the provider ``[memory] provider``
names now.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleetmem.config import BUILTIN_PROVIDER, McpSettings, Settings
from fleetmem.config.values import UPSTREAM_NAME
from fleetmem.core.episode import Episode, content_hash, render_text
from fleetmem.embed.base import Embedder
from fleetmem.errors import InvalidInput, NotFound
from fleetmem.providers import transports
from fleetmem.providers.base import EpisodeProvider, ProviderRecall
from fleetmem.providers.breaker import CircuitBreaker
from fleetmem.providers.builtin import BuiltinProvider
from fleetmem.providers.calllog import CallLog
from fleetmem.providers.reserved import refuse_reserved
from fleetmem.store.base import EpisodeRow, RunRow, Store, Vector

# The MCP client side (asyncio, the SDK's session, the conformance suite) is imported when a
# provider is first opened: a hook answering in its own process builds a hub but never calls
# a provider, and those imports would be a tenth of its time.
if TYPE_CHECKING:
    from fleetmem.providers.conformance import ConformanceReport
    from fleetmem.providers.mcp_provider import McpEpisodeProvider
    from fleetmem.providers.runtime import LoopThread

log = logging.getLogger("fleetmem.providers")


class ProviderHub:
    """Builds, caches, checks and closes providers; thread-safe."""

    def __init__(
        self,
        *,
        settings: Callable[[], Settings],
        builtin: BuiltinProvider,
        call_log: CallLog | None,
        log_dir: Path,
        environ: Mapping[str, str],
        session_options: Mapping[str, Any] | None = None,
        breaker_options: Mapping[str, Any] | None = None,
    ) -> None:
        self._settings = settings
        self.builtin = builtin
        self._call_log = call_log
        self._log_dir = log_dir
        self._environ = dict(environ)
        self._session_options = dict(session_options or {})
        self._breaker_options = dict(breaker_options or {})
        self._runner: LoopThread | None = None
        # The built-in provider's tools run here: few threads, so few SQLite connections.
        self._builtin_pool = ThreadPoolExecutor(
            max_workers=4, thread_name_prefix="fleetmem-builtin"
        )
        self._lock = threading.Lock()
        self._providers: dict[str, tuple[McpSettings | None, McpEpisodeProvider]] = {}
        self._closed = False

    @property
    def runner(self) -> LoopThread:
        """The loop every MCP session of this hub runs on (made on first use)."""
        with self._lock:
            if self._runner is None:
                from fleetmem.providers.runtime import LoopThread

                self._runner = LoopThread()
            return self._runner

    def refuse_reserved(self, name: str, arguments: Mapping[str, Any], *, caller: str) -> None:
        """Raise ``ProviderReserved`` if ``name`` is an episode-provider tool reserved to
        fleetmem, logging the refusal in this hub's call log (see
        :func:`fleetmem.providers.reserved.refuse_reserved`)."""
        refuse_reserved(name, arguments, self._settings(), caller=caller, call_log=self._call_log)

    # ---- lookup -----------------------------------------------------------------------
    def _definition(self, name: str) -> McpSettings | None:
        if name == BUILTIN_PROVIDER:
            return None
        up = self._settings().mcp.get(name)
        if up is None:
            if not isinstance(name, str) or not UPSTREAM_NAME.fullmatch(name):
                raise InvalidInput("provider", name, "must be builtin or an [mcp.NAME] name")
            raise NotFound(
                "no such provider: neither builtin nor an [mcp.NAME] upstream of the global file",
                provider=name,
            )
        return up

    def _target(self, name: str, up: McpSettings | None) -> transports.Target:
        if up is None:
            from fleetmem.providers.builtin_server import build_server

            server = build_server(self.builtin, self._builtin_pool)
            return transports.in_process(BUILTIN_PROVIDER, server)
        return transports.upstream(up, log_dir=self._log_dir, environ=self._environ)

    def provider(self, name: str) -> McpEpisodeProvider:
        """The provider called ``name`` (built-in or a declared upstream), opened lazily."""
        from fleetmem.providers.mcp_provider import McpEpisodeProvider
        from fleetmem.providers.session import SupervisedSession

        up = self._definition(name)
        stale: McpEpisodeProvider | None = None
        runner = self.runner
        with self._lock:
            if self._closed:
                raise RuntimeError("the provider hub is closed")
            known = self._providers.get(name)
            if known is not None and known[0] == up:
                return known[1]
            if known is not None:
                stale = known[1]
            session = SupervisedSession(self._target(name, up), runner, **self._session_options)
            made = McpEpisodeProvider(
                name,
                session,
                settings=self._settings,
                breaker=CircuitBreaker(**self._breaker_options),
                # The built-in provider is not an upstream: its calls never leave the process.
                call_log=None if up is None else self._call_log,
            )
            self._providers[name] = (up, made)
        if stale is not None:
            log.info("provider.replaced provider=%s", name)
            stale.close()
        return made

    def provider_or_none(self, name: str) -> EpisodeProvider | None:
        """For forget jobs of a provider that is no longer the configured one."""
        try:
            return self.provider(name)
        except InvalidInput:
            return None

    def configured(self) -> ConfiguredProvider:
        return ConfiguredProvider(self)

    @property
    def configured_name(self) -> str:
        return self._settings().memory.provider

    def start(self) -> None:
        """Open the configured provider's session now (the daemon calls this at start)."""
        self.provider(self.configured_name).session.start()

    # ---- conformance ------------------------------------------------------------------
    def check(self, name: str | None = None) -> ConformanceReport:
        """Run the conformance suite against ``name`` (default: the configured provider).

        A fresh session is used, never the daemon's. The built-in provider is checked over a
        scratch store in a temporary directory, so synthetic episodes never touch the real
        one; it indexes only episodes fleetmem stored, so the suite's episode is stored in
        that scratch store first, as the daemon would.
        """
        from fleetmem.providers.conformance import run_conformance
        from fleetmem.providers.session import SupervisedSession

        name = name or self.configured_name
        up = self._definition(name)
        settings = self._settings()
        scratch: tempfile.TemporaryDirectory[str] | None = None
        store: Store | None = None
        scratch_index: BuiltinProvider | None = None
        before_record: Callable[[Episode], None] | None = None
        if up is None:
            from fleetmem.providers.builtin_server import build_server
            from fleetmem.store.sqlite.store import SqliteStore

            scratch = tempfile.TemporaryDirectory(prefix="fleetmem-check-")
            sqlite = SqliteStore(Path(scratch.name) / "check.db")
            store = sqlite
            index = BuiltinProvider(
                sqlite, self.builtin.embedder, self.builtin.options, self.builtin.cues
            )
            target = transports.in_process(
                BUILTIN_PROVIDER, build_server(index, self._builtin_pool)
            )
            before_record = _storer(sqlite)
            scratch_index = index
        else:
            target = transports.upstream(up, log_dir=self._log_dir, environ=self._environ)
        session = SupervisedSession(target, self.runner, check_contract=False)
        try:
            return run_conformance(
                session,
                provider=name,
                provider_timeout=settings.memory.episodes.provider_timeout_s,
                call_timeout=target.call_timeout_s,
                before_record=before_record,
            )
        finally:
            session.close()
            if scratch_index is not None:
                scratch_index.close()
            if store is not None:
                store.close()
            if scratch is not None:
                scratch.cleanup()

    def calls(self, upstream: str | None = None, limit: int = 50) -> list[Any]:
        """The newest call-log rows (of one upstream), for ``fleetmem provider calls``."""
        recent = getattr(self._call_log, "recent_calls", None)
        return [] if recent is None else list(recent(upstream, limit))

    # ---- lifecycle --------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._closed = True
            providers = [p for _, p in self._providers.values()]
            self._providers.clear()
            runner = self._runner
        for provider in providers:
            provider.close()
        if runner is not None:
            runner.close()
        self._builtin_pool.shutdown(wait=True, cancel_futures=True)
        self.builtin.close()


def _storer(store: Store) -> Callable[[Episode], None]:
    """Store a synthetic episode (and its run) the way ingest would, in a scratch store."""

    def store_episode(episode: Episode) -> None:
        started = datetime.strptime(episode.started_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        at = started.timestamp()
        text = render_text(episode)
        run = RunRow(
            run_id=episode.run_id,
            agent=episode.agent,
            adapter=episode.adapter,
            trace_id=None,
            model=None,
            trigger="manual",
            started_at=at,
            ended_at=at,
            outcome=episode.outcome,
            reason=episode.reason,
            cost_usd=None,
            cost_source=episode.cost_source,
            spawned=True,
            pull_request=None,
            repo=episode.repo,
            branch=None,
            episode_status=episode.episode_id,
        )
        row = EpisodeRow(
            id=episode.episode_id,
            run_id=episode.run_id,
            agent=episode.agent,
            adapter=episode.adapter,
            model=None,
            repo=episode.repo,
            branch=None,
            outcome=episode.outcome,
            scope=episode.scope,
            trust_class=episode.trust_class,
            started_at=at,
            recorded_at=at,
            forgotten_at=None,
            summary=None,
            summary_outcome="fallback",
            episode=episode.to_dict(),
            text=text,
            content_hash=content_hash(text),
        )
        with store.transaction():
            store.insert_run(run, [], [], "{}", content_hash("{}"), at)
            store.insert_episode(row, record_job_provider=None)

    return store_episode


class ConfiguredProvider:
    """The provider ``[memory] provider`` names, resolved on every call (reload-safe)."""

    enforces_deadlines = True

    def __init__(self, hub: ProviderHub) -> None:
        self._hub = hub

    @property
    def name(self) -> str:
        return self._hub.configured_name

    def _current(self) -> McpEpisodeProvider:
        return self._hub.provider(self.name)

    def record(
        self,
        episode_id: str,
        scope: str,
        trust_class: str,
        episode: Mapping[str, Any],
        text: str,
    ) -> list[str]:
        return self._current().record(episode_id, scope, trust_class, episode, text)

    def recall(
        self, query: str, scopes: Sequence[str], limit: int, paths: Sequence[str]
    ) -> ProviderRecall:
        return self._current().recall(query, scopes, limit, paths)

    def forget(self, provider_id: str) -> bool:
        return self._current().forget(provider_id)

    def describe(self, probe_s: float = 0.0) -> dict[str, Any]:
        return self._current().describe(probe_s)

    def recheck(self, timeout: float) -> None:
        self._current().recheck(timeout)

    # The built-in index's own maintenance (vector backfill) while it is the provider.
    @property
    def embedder(self) -> Embedder | None:
        return self._hub.builtin.embedder if self.name == BUILTIN_PROVIDER else None

    @property
    def embed_document(
        self,
    ) -> Callable[[Mapping[str, Any]], tuple[Vector | None, str, str]] | None:
        return self._hub.builtin.embed_document if self.name == BUILTIN_PROVIDER else None
