"""Fixtures for facts: a FactService over a real SQLite store with a clock and ids we control."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fleetmem.core.facts import Actor
from fleetmem.service.bootstrap import App
from fleetmem.service.facts import FactService
from tests.fakes.table_embedder import TableEmbedder

DATA = Path(__file__).resolve().parents[1] / "data" / "facts_paraphrase.json"
VECTORS_OFF = '[model_api]\nembedding_model = ""\n'
MINILM = '[model_api]\nembedding_model = "local:minilm"\n'
ALICE = Actor("human", "alice")
BOB = Actor("human", "bob")
API = "github.com/acme/api"
WEB = "github.com/acme/web"


class Clock:
    """A clock tests move by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def labelled() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make_facts(
    make_app: Callable[..., App], clock: Clock
) -> Iterator[Callable[..., tuple[App, FactService]]]:
    """(app, service) over a fresh home; the service uses the test clock and f_0001-style ids."""
    services: list[FactService] = []

    def factory(config: str = VECTORS_OFF) -> tuple[App, FactService]:
        app = make_app(config)
        counter = itertools.count(1)
        service = FactService(
            store=app.store,
            settings=lambda: app.config.current,
            embedder=app.embedder,
            clock=clock,
            new_id=lambda: f"f_{next(counter):04d}",
        )
        services.append(service)
        return app, service

    yield factory
    for service in services:
        service.close()


@pytest.fixture
def facts(make_facts: Callable[..., tuple[App, FactService]]) -> FactService:
    return make_facts()[1]


@pytest.fixture
def table_facts(
    make_app: Callable[..., App], clock: Clock
) -> Callable[[dict[str, np.ndarray]], FactService]:
    """FactServices whose embedder maps each known text to the vector the test laid out."""
    services: list[FactService] = []

    def factory(table: dict[str, np.ndarray]) -> FactService:
        app = make_app()
        counter = itertools.count(1)
        service = FactService(
            store=app.store,
            settings=lambda: app.config.current,
            embedder=TableEmbedder(table),
            clock=clock,
            new_id=lambda: f"f_{next(counter):04d}",
        )
        services.append(service)
        return service

    yield factory  # type: ignore[misc]
    for service in services:
        service.close()
