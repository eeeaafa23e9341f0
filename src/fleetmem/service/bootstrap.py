"""The one composition root: settings, store, embedder, provider and services, wired once.

Surfaces call :func:`build` and never construct these parts themselves, so the CLI and the
daemon run exactly the same code against the same store.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fleetmem.config import ConfigHolder, Settings, default_home
from fleetmem.embed.base import Embedder
from fleetmem.embed.factory import make_embedder
from fleetmem.providers.builtin import BuiltinProvider
from fleetmem.service.memory import MemoryService
from fleetmem.service.summaries import Summarizer, make_summarizer
from fleetmem.store.sqlite.store import SqliteStore

STORE_FILE = "fleetmem.db"


@dataclass
class App:
    home: Path
    config: ConfigHolder
    store: SqliteStore
    embedder: Embedder | None
    summarizer: Summarizer | None
    memory: MemoryService

    @property
    def settings(self) -> Settings:
        return self.config.current

    def close(self) -> None:
        self.memory.close()
        if self.summarizer is not None:
            self.summarizer.close()
        close = getattr(self.embedder, "close", None)
        if close is not None:
            close()
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
    summarizer = make_summarizer(
        settings.memory.episodes.summary, api.base_url, api.utility_model, api.api_key_env, env
    )
    store = SqliteStore(home / STORE_FILE)
    provider = BuiltinProvider(store, embedder)
    memory = MemoryService(
        store=store,
        settings=lambda: config.current,
        provider=provider,
        summarizer=summarizer,
    )
    logging.getLogger("fleetmem").debug("bootstrap home=%s", home)
    return App(
        home=home,
        config=config,
        store=store,
        embedder=embedder,
        summarizer=summarizer,
        memory=memory,
    )
