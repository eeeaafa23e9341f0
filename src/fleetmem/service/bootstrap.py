"""The one composition root: settings, store, embedder, provider and services, wired once.

Surfaces call :func:`build` and never construct these parts themselves, so the CLI and the
daemon run exactly the same code against the same store.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fleetmem.config import ConfigHolder, Settings, default_home
from fleetmem.config.values import Invalid, postgres_url
from fleetmem.core.facts import DEFAULT_WORKSPACE
from fleetmem.embed.base import Embedder
from fleetmem.embed.factory import make_embedder
from fleetmem.embed.memo import RecentQueries
from fleetmem.errors import ConfigError, UnknownAgentWorkspace, UnknownWorkspace
from fleetmem.providers.builtin import BuiltinProvider
from fleetmem.providers.hub import ProviderHub
from fleetmem.service.activity import ActivityFeed
from fleetmem.service.agent_memory import AgentMemory
from fleetmem.service.briefings import BriefingService
from fleetmem.service.context_providers import default_providers
from fleetmem.service.fact_items import FactItems
from fleetmem.service.facts import FactService
from fleetmem.service.files import ContextFileService
from fleetmem.service.memory import MemoryService
from fleetmem.service.portability import PortabilityService
from fleetmem.service.reembed import ReembedSteps, run_reembed
from fleetmem.service.runs import RunsService
from fleetmem.service.summaries import Summarizer, make_summarizer
from fleetmem.service.workspaces import WorkspaceService
from fleetmem.store.sqlite.store import SqliteStore
from fleetmem.token_counts import CACHE_FILE as TOKEN_CACHE_FILE
from fleetmem.token_counts import CachedTokenizer
from fleetmem.token_ranks import RANKS_FILE

if TYPE_CHECKING:
    from fleetmem.store.postgres.store import PostgresStore

STORE_FILE = "fleetmem.db"
#: Selects a PostgreSQL store, in place of ``[store] url`` (docs/postgres.md).
STORE_URL_ENV = "FLEETMEM_STORE_URL"


@dataclass
class App:
    home: Path
    config: ConfigHolder
    store: SqliteStore | PostgresStore
    embedder: Embedder | None
    summarizer: Summarizer | None
    memory: MemoryService
    providers: ProviderHub
    runs: RunsService
    briefings: BriefingService
    files: ContextFileService
    facts: FactService
    agent_memory: AgentMemory
    portability: PortabilityService
    token_counts: CachedTokenizer
    #: Who changed what in the workspace's facts and files (the Memory page's feed).
    activity: ActivityFeed
    #: Create, list, rename and delete workspaces (the tenants).
    workspaces: WorkspaceService
    #: The workspace ``facts``, ``files``, ``activity``, ``agent_memory`` and ``briefings``
    #: are bound to; :meth:`in_workspace` gives the same application for another one.
    workspace: str = DEFAULT_WORKSPACE
    _views: dict[str, App] = field(default_factory=dict, repr=False, compare=False)
    _views_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _root: App | None = field(default=None, repr=False, compare=False)

    @property
    def settings(self) -> Settings:
        return self.config.current

    def in_workspace(self, workspace: str) -> App:
        """This application with its workspace-owned services bound to ``workspace`` (an id):
        facts, context files, proposals, the activity feed, operator recall and briefing
        previews. Everything else (store, runs, episodes, providers) is shared. Views are
        kept per workspace until it is deleted; closing a view closes nothing."""
        root = self._root or self
        if workspace == root.workspace:
            return root
        with root._views_lock:
            found = root._views.get(workspace)
            if found is None:
                facts = root.facts.in_workspace(workspace)
                files = root.files.in_workspace(workspace)
                briefings = root.briefings.with_facts_source(FactItems(facts))
                found = replace(
                    root,
                    facts=facts,
                    files=files,
                    briefings=briefings,
                    agent_memory=root.agent_memory.in_workspace(facts, files, briefings),
                    activity=root.activity.in_workspace(workspace),
                    workspace=workspace,
                    _views={},
                    _root=root,
                )
                root._views[workspace] = found
        return found

    def agent_workspace(self, agent: str) -> str:
        """The id of the workspace agent ``agent``'s runs act in: the one its
        ``[agent.NAME] workspace`` names (by id or name), else ``default``. Raises
        UnknownAgentWorkspace when the key names no workspace: never a fallback to default."""
        root = self._root or self
        settings = root.settings
        ref = settings.agent(agent).workspace
        if ref is None:
            return DEFAULT_WORKSPACE
        try:
            return root.workspaces.resolve(ref, f"agent.{agent}.workspace").id
        except UnknownWorkspace:
            source = settings.origins.get(f"agent.{agent}.workspace")
            raise UnknownAgentWorkspace(agent, ref, source=source) from None

    def for_agent(self, agent: str) -> App:
        """This application bound to the workspace agent ``agent``'s runs act in (see
        :meth:`agent_workspace`): what every agent-facing path (MCP tools, hooks,
        ``fleetmem run``) serves a run through, whichever view it was called on."""
        return (self._root or self).in_workspace(self.agent_workspace(agent))

    def forget_view(self, workspace: str) -> None:
        """Drop the cached view of a deleted workspace."""
        root = self._root or self
        with root._views_lock:
            root._views.pop(workspace, None)

    def close(self) -> None:
        if self._root is not None:
            return  # a view shares its root's parts; the root closes them
        self.memory.close()
        self.facts.close()
        self.providers.close()
        if self.summarizer is not None:
            self.summarizer.close()
        close = getattr(self.embedder, "close", None)
        if close is not None:
            close()
        self.token_counts.close()
        self.store.close()


def build(home: Path | None = None, environ: Mapping[str, str] | None = None) -> App:
    """Open (creating if needed) the fleetmem home and wire every service over it.

    Raises ConfigError for a bad configuration; nothing is written in that case.
    """
    env = dict(os.environ if environ is None else environ)
    home = home or default_home(env)
    config = ConfigHolder(home)
    settings = config.current
    home.mkdir(parents=True, exist_ok=True)
    api = settings.model_api
    # The embedder loads its model lazily, so commands that never embed stay fast.
    embedder = make_embedder(api.embedding_model, api.base_url, api.api_key_env, env)
    if embedder is not None:
        # A recall's query is embedded once, for the episode index and the facts alike.
        embedder = RecentQueries(embedder)
    summarizer = make_summarizer(
        settings.memory.episodes.summary, api.base_url, api.utility_model, api.api_key_env, env
    )
    store = open_store(home, settings, env)
    # Every provider, the built-in one included, is reached over MCP through the hub.
    providers = ProviderHub(
        settings=lambda: config.current,
        builtin=BuiltinProvider(
            store, embedder, cues=lambda: config.current.memory.episodes.recall_cues
        ),
        call_log=store,
        log_dir=home / "logs",
        environ=env,
    )
    memory = MemoryService(
        store=store,
        settings=lambda: config.current,
        provider=providers.configured(),
        summarizer=summarizer,
        provider_for=providers.provider_or_none,
    )
    runs = RunsService(store=store, settings=lambda: config.current)
    # A stored run record closes its live run and indexes the paths it edited.
    memory.add_run_listener(runs.on_run_stored)
    briefings = BriefingService(memory=memory, runs=runs, settings=lambda: config.current)
    # Context files; the facts block and the run feeds plug in as segment providers.
    # Every budget counts with one tokenizer; counts of texts seen before come from the
    # home's cache, so a short-lived command or hook need not load the 0.8 s vocabulary.
    token_counts = CachedTokenizer(home / TOKEN_CACHE_FILE, ranks=home / RANKS_FILE)
    files = ContextFileService(
        store=store, settings=lambda: config.current, tokenizer=lambda: token_counts
    )
    # Facts of the default workspace; FactService.in_workspace(name) serves another tenant.
    facts = FactService(
        store=store,
        settings=lambda: config.current,
        embedder=embedder,
        count_tokens=token_counts.count,
    )
    files.providers.update(default_providers(files, facts, runs, lambda: config.current))
    # Briefings and recall answers show facts; what a run is served is recorded by
    # AgentMemory, which also keeps each run's briefing (the MCP server's tools).
    briefings.set_facts_source(FactItems(facts))
    agent_memory = AgentMemory(
        runs=runs,
        memory=memory,
        briefings=briefings,
        facts=facts,
        files=files,
        store=store,
        settings=lambda: config.current,
    )
    portability = PortabilityService(
        store, memory.ingest_run, after_import=lambda: _after_import(store, facts, memory)
    )
    logging.getLogger("fleetmem").debug("bootstrap home=%s", home)
    app = App(
        home=home,
        config=config,
        store=store,
        embedder=embedder,
        summarizer=summarizer,
        memory=memory,
        providers=providers,
        runs=runs,
        briefings=briefings,
        files=files,
        facts=facts,
        agent_memory=agent_memory,
        portability=portability,
        token_counts=token_counts,
        activity=ActivityFeed(store, facts.workspace),
        workspaces=WorkspaceService(store, home, agents=lambda: _agent_workspaces(config.current)),
    )
    app.workspaces.on_deleted(app.forget_view)
    # A run's tools act in its agent's workspace, whichever view they are called on.
    agent_memory.route_agents(lambda agent: app.for_agent(agent).agent_memory)
    return app


def _agent_workspaces(settings: Settings) -> dict[str, str]:
    """Agent name -> the workspace (id or name) its ``[agent.NAME] workspace`` names."""
    return {
        name: agent.workspace
        for name, agent in settings.agents.items()
        if agent.workspace is not None
    }


def store_url(settings: Settings, env: Mapping[str, str]) -> str | None:
    """The PostgreSQL URL selected by ``FLEETMEM_STORE_URL`` or ``[store] url``, or None for
    the embedded SQLite file. A bad URL in the variable is a ConfigError like one in a file."""
    raw = env.get(STORE_URL_ENV)
    if raw:
        try:
            postgres_url(raw)
        except Invalid as exc:
            raise ConfigError("store.url", raw, exc.reason, source=STORE_URL_ENV) from None
        return raw
    return settings.store.url


def open_store(
    home: Path, settings: Settings, env: Mapping[str, str]
) -> SqliteStore | PostgresStore:
    """The store the settings select: PostgreSQL for a URL, else the home's SQLite file."""
    url = store_url(settings, env)
    if url is None:
        return SqliteStore(home / STORE_FILE)
    # Imported here: a SQLite home never loads the PostgreSQL driver.
    from fleetmem.store.postgres.store import PostgresStore

    return PostgresStore(url, claim_s=settings.store.claim_timeout_s)


def _after_import(
    store: SqliteStore | PostgresStore, facts: FactService, memory: MemoryService
) -> None:
    # An archive carries rows with their workspace ids, not the workspaces: one that came in
    # new gets a row (named by its id, renamable) so it is listed and can be switched to.
    adopted = store.workspace_adopt(time.time())
    if adopted:
        logging.getLogger("fleetmem").info("import.workspaces_adopted ids=%s", ",".join(adopted))
    _embed_imported(facts, memory)


def _embed_imported(facts: FactService, memory: MemoryService) -> None:
    # Imported facts and episodes arrive without vectors; embed them now rather than leave
    # them to be found by words only until the next background pass. Each kind stops at its
    # first step that embeds nothing (all done, or the embedder is down).
    run_reembed(ReembedSteps(memory, facts), budget_s=None)
