"""A recall answer ranks its facts while the provider searches episodes, and answers the same.

``MemoryService.recall_alongside`` runs the episode recall on the service's own small pool
and the facts in the calling thread. These tests hold it to the sequential path: the same
document, the same errors, a provider that is down still degrades the episodes section, and
the pool is gone after the service closes (recalls then run one after the other).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from fleetmem.errors import InvalidInput
from fleetmem.providers.base import ProviderRecall
from fleetmem.service.bootstrap import App
from fleetmem.service.memory import MemoryService
from fleetmem.surfaces.mcp.server import build_server, fixed_token
from tests.mcp.conftest import API, World, client_for, document, ok_text, run_async

MINILM = '[model_api]\nembedding_model = "local:minilm"\n'
CONFIG = MINILM + "[agent.api-fixer]\nbriefing_max_chars = 4000\n"
QUERIES = ("ledger settlement fixture", "Decimal amounts", "reviewer", "no such words zzz")


@pytest.fixture
def minilm_world(make_app: Callable[..., App]) -> World:
    return World(make_app(CONFIG))


def _recall_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("fleetmem-recall")]


class Down:
    """An episode provider that is down (an external process we cannot reach)."""

    enforces_deadlines = True
    name = "builtin"

    def __init__(self) -> None:
        self.asked = threading.Event()

    def record(self, *args: object) -> list[str]:
        raise ConnectionError("down")

    def recall(self, *args: object) -> Any:
        self.asked.set()
        raise ConnectionError("down")

    def forget(self, provider_id: str) -> bool:
        raise ConnectionError("down")


class Answering:
    """An episode provider that answers nothing, noting the thread each recall ran on."""

    enforces_deadlines = True
    name = "builtin"

    def __init__(self) -> None:
        self.threads: list[str] = []
        self.done = threading.Event()

    def record(self, *args: object) -> list[str]:
        return []

    def recall(self, query: str, scopes: Sequence[str], limit: int, paths: Any) -> Any:
        self.threads.append(threading.current_thread().name)
        self.done.set()
        return ProviderRecall(items=())

    def forget(self, provider_id: str) -> bool:
        return True


def test_the_overlapped_answer_is_the_sequential_one(minilm_world: World) -> None:
    app = minilm_world.app
    caller = app.agent_memory.caller(minilm_world.me.token)
    assert caller is not None
    for query in QUERIES:
        for paths in ((), ("billing/ledger.py",)):
            app.memory.overlap_recalls = True
            overlapped = app.agent_memory.recall(caller, query, paths=paths)
            app.memory.overlap_recalls = False
            sequential = app.agent_memory.recall(caller, query, paths=paths)
            # The nonce is fresh per document; everything inside it is the same.
            assert document(overlapped.text) == document(sequential.text), query
            assert overlapped.shown == sequential.shown
            assert overlapped.facts == sequential.facts
            assert overlapped.degraded == sequential.degraded is None
    app.memory.overlap_recalls = True
    answer = app.agent_memory.recall(caller, "ledger settlement fixture")
    assert answer.shown.get("episodes", 0) > 0 and answer.shown.get("facts", 0) > 0


def test_the_episode_recall_runs_on_the_pool_until_the_service_closes(app: App) -> None:
    provider = Answering()
    # Other services in this process (earlier tests, the app's own) may keep their pools;
    # only the threads this service starts are its own.
    earlier = set(_recall_threads())
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    try:
        beside: list[str] = []

        def note_thread() -> int:
            beside.append(threading.current_thread().name)
            return 7

        result, value = memory.recall_alongside(
            "flaky ledger", note_thread, scopes=[f"project:{API}"]
        )
        assert value == 7 and result.items == () and result.degraded is None
        assert provider.threads == ["fleetmem-recall_0"]
        assert beside == [threading.current_thread().name]
        ours = set(_recall_threads()) - earlier
        assert ours
    finally:
        memory.close()
    for thread in ours:
        thread.join(10)
    assert not [t for t in ours if t.is_alive()], "the recall pool outlived its service"
    # Closed: both halves run in the calling thread, one after the other, same answer.
    result, value = memory.recall_alongside("flaky ledger", lambda: 8, scopes=[f"project:{API}"])
    assert value == 8 and result.items == ()
    assert provider.threads[-1] == threading.current_thread().name


def test_a_provider_that_is_down_still_degrades_the_episodes_only(app: App) -> None:
    provider = Down()
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    try:
        result, facts = memory.recall_alongside(
            "flaky ledger", lambda: ["a fact"], scopes=[f"project:{API}"]
        )
    finally:
        memory.close()
    assert provider.asked.is_set()
    assert result.items == () and result.degraded == "provider_unavailable"
    assert facts == ["a fact"]


def test_errors_surface_as_they_did(app: App) -> None:
    provider = Answering()
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    ran: list[bool] = []
    try:
        # Bad arguments: refused before either half runs.
        for bad in ({"query": "  "}, {"query": "x", "limit": 0}, {"query": "x", "paths": ["/abs"]}):
            args: dict[str, Any] = {"scopes": [f"project:{API}"], **bad}
            query = args.pop("query")
            with pytest.raises(InvalidInput):
                memory.recall_alongside(query, lambda: ran.append(True), **args)
        assert ran == [] and provider.threads == []

        # A failing alongside: its error is raised, once the recall it overlapped is done.
        def boom() -> None:
            raise RuntimeError("facts failed")

        with pytest.raises(RuntimeError, match="facts failed"):
            memory.recall_alongside("flaky ledger", boom, scopes=[f"project:{API}"])
        assert provider.done.is_set() and provider.threads == ["fleetmem-recall_0"]
    finally:
        memory.close()


def test_the_tool_sends_the_answer_once_as_text(minilm_world: World) -> None:
    """The answer (up to 16 KiB) is one text block: no structured copy doubles the reply."""
    app = minilm_world.app
    server = build_server(app, fixed_token(minilm_world.me.token))

    async def call() -> Any:
        async with client_for(server) as client:
            return await client.call_tool("recall", {"query": "ledger settlement fixture"})

    try:
        result = run_async(call)
    finally:
        server.close()
    assert result.structured_content is None
    assert [block.type for block in result.content] == ["text"]
    caller = app.agent_memory.caller(minilm_world.me.token)
    served = app.agent_memory.recall(caller, "ledger settlement fixture")
    assert document(ok_text(result)) == document(served.text)


@pytest.fixture
def app(make_app: Callable[..., App]) -> App:
    return make_app()
