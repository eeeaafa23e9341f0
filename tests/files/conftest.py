"""Fixtures for context files: a real SQLite store, a settable clock, a configurable service."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetmem.config import load_global
from fleetmem.service.files import Actor, ContextFileService
from fleetmem.store.base import Store

CORPUS = Path(__file__).resolve().parent / "corpus"
MARINA = Actor("user", "marina")
DEV = Actor("user", "dev")
START = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(new_store: Callable[[], Store]) -> Store:
    """This test's store: SQLite, or PostgreSQL under ``[postgres]`` (tests/store_kinds.py)."""
    return new_store()


ServiceFactory = Callable[..., ContextFileService]


@pytest.fixture
def make_files(store: Store, clock: Clock, tmp_path: Path) -> ServiceFactory:
    """A service over the test store; ``config`` is the global fleetmem.toml text."""
    counter = itertools.count()

    def factory(config: str = "", workspace: str = "default", **kw: object) -> ContextFileService:
        home = tmp_path / f"home-{next(counter)}"
        home.mkdir()
        (home / "fleetmem.toml").write_text(config, encoding="utf-8")
        settings = load_global(home)
        return ContextFileService(
            store=store,
            settings=lambda: settings,
            clock=clock,
            workspace=workspace,
            **kw,  # type: ignore[arg-type]
        )

    return factory


@pytest.fixture
def files(make_files: ServiceFactory) -> ContextFileService:
    return make_files()


def corpus() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(CORPUS.iterdir())}
