"""Many processes, one memory: leases, the hourly pass once across daemons, a run's briefing
computed once whichever daemon is asked, and a database outage (a cut network, a connection
killed mid-recall) that degrades reads, refuses writes and heals by itself.

Two ``App`` objects over one store are two daemons: each has its own connections, caches and
lease holder, as separate processes do (``tests/integrations/test_fleet_netns.py`` runs real
daemons in separate network namespaces).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from fleetmem.errors import StoreError
from fleetmem.service.agent_memory import STORE_UNAVAILABLE, UNREACHABLE
from fleetmem.service.bootstrap import App, build
from fleetmem.service.jobs import BackgroundJobs
from fleetmem.store.base import Store
from tests import store_kinds
from tests.conftest import make_record, session, write_config
from tests.fakes.tcp_proxy import TcpProxy, target_of

API = "github.com/acme/api"
VECTORS_OFF = '[model_api]\nembedding_model = ""\n'


def test_a_lease_has_one_holder_until_it_runs_out(new_store: Callable[[], Store]) -> None:
    one, two = new_store(), new_store()
    assert one.claim_lease("work", "a", now=100.0, hold_s=30.0)
    assert not two.claim_lease("work", "b", now=101.0, hold_s=30.0)
    assert one.claim_lease("work", "a", now=102.0, hold_s=30.0)  # its holder may renew it
    # The holder died: its hold runs out and another takes the work over.
    assert two.claim_lease("work", "b", now=133.0, hold_s=30.0)
    assert not one.claim_lease("work", "a", now=134.0, hold_s=30.0)
    # Periodic work: done at 140, not handed out again before 140 + 60, by anyone.
    two.release_lease("work", "b", done_at=140.0)
    assert not one.claim_lease("work", "a", now=150.0, hold_s=30.0, every_s=60.0)
    assert one.claim_lease("work", "a", now=200.0, hold_s=30.0, every_s=60.0)
    # One-off work forgets its lease; another holder's release changes nothing.
    two.release_lease("work", "b", forget=True)
    assert not two.claim_lease("work", "b", now=201.0, hold_s=30.0)
    one.release_lease("work", "a", forget=True)
    assert two.claim_lease("work", "b", now=202.0, hold_s=30.0)


def test_the_hourly_pass_runs_once_across_daemons(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    apps = [make_app(), make_app()]
    passes: list[int] = []
    for n, app in enumerate(apps):
        monkeypatch.setattr(app.memory, "apply_retention", lambda n=n: passes.append(n) or 0)
    now = [1_000.0]
    daemons = [
        BackgroundJobs(a.memory, facts=a.facts, clock=lambda: now[0], retention_every_s=3600.0)
        for a in apps
    ]
    for _ in range(3):
        for jobs in daemons:
            jobs.tick()
        now[0] += 600.0
    assert len(passes) == 1  # three rounds of two daemons in half an hour: one pass
    now[0] += 3600.0
    daemons[1].tick()
    daemons[0].tick()
    assert passes[1:] == [1]  # an hour later, whichever daemon asked first


def test_a_briefing_is_computed_once_whichever_daemon_is_asked(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    apps = [make_app(), make_app()]
    opened = apps[0].runs.open_run("coder", repo=API)
    computed: list[int] = []
    for n, app in enumerate(apps):
        real = app.briefings.briefing_for_caller

        def slow(caller: Any, n: int = n, real: Any = real) -> Any:
            computed.append(n)
            time.sleep(0.4)  # both daemons are asked while it is being computed
            return real(caller)

        monkeypatch.setattr(app.briefings, "briefing_for_caller", slow)
    served: list[Any] = [None, None]

    def ask(n: int) -> None:
        app = apps[n]
        served[n] = app.agent_memory.briefing(app.agent_memory.caller(opened.token))

    threads = [threading.Thread(target=ask, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(computed) == 1
    assert served[0].text == served[1].text and served[0].version == served[1].version == 1
    assert sorted([served[0].computed_now, served[1].computed_now]) == [False, True]


# ---- outages (PostgreSQL: a network between the daemon and its database) -------------------
@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[App, TcpProxy, str]]:
    """An app whose database is reached through a proxy the test can cut; and the direct URL
    of the same schema."""
    base = store_kinds.required_url()
    schema, url = store_kinds.fresh_schema(base)
    proxy = TcpProxy(target_of(url))
    home = tmp_path / "home"
    home.mkdir()
    through = proxy.url_for(url)
    write_config(home, f'{VECTORS_OFF}\n[store]\nurl = "{through}"\n')
    app = build(home, {"HOME": str(tmp_path)})
    yield app, proxy, url
    app.close()
    proxy.close()
    store_kinds.drop_schema(base, schema)


def _record(run_id: str, text: str) -> dict[str, Any]:
    return make_record(run_id=run_id, result_text=text, sessions=[session(repo=API)])


def _eventually(check: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "did not recover"
        time.sleep(0.2)


def test_an_outage_degrades_reads_refuses_writes_and_heals(
    proxied: tuple[App, TcpProxy, str],
) -> None:
    app, proxy, _ = proxied
    episode = app.memory.ingest_run(_record("run-1", "fixed the settlement ledger")).episode_id
    opened = app.runs.open_run("coder", repo=API)
    memory = app.agent_memory
    assert memory.recall(memory.caller(opened.token), "settlement ledger").degraded is None

    proxy.cut()
    started = time.monotonic()
    caller = memory.caller(opened.token)
    assert caller is UNREACHABLE
    briefing = memory.briefing(caller)
    assert (briefing.text, briefing.degraded) == ("", STORE_UNAVAILABLE)
    answer = memory.recall(caller, "settlement ledger")
    assert answer.degraded == STORE_UNAVAILABLE and 'degraded="store_unavailable"' in answer.text
    operator = memory.operator_recall("settlement ledger", repo=API)
    assert operator.episodes.degraded == STORE_UNAVAILABLE and not operator.episodes.items
    # Reads degrade within seconds, as a provider outage does; nothing raised.
    assert time.monotonic() - started < 15
    # Writes are refused with a clear error, never half-done and never queued.
    with pytest.raises(StoreError, match="unavailable"):
        memory.remember(caller, "The ledger closes at midnight UTC.")
    with pytest.raises(StoreError):
        app.memory.ingest_run(_record("run-2", "bumped the SDK"))
    BackgroundJobs(app.memory, facts=app.facts).tick()  # a tick in an outage only logs

    proxy.restore()

    def healed() -> bool:
        found = memory.recall(memory.caller(opened.token), "settlement ledger")
        return found.degraded is None and episode is not None and episode in found.text

    _eventually(healed)
    # The refused write was not stored: the agent (or the supervisor) sends it again.
    assert app.store.get_run("run-2") is None
    assert app.memory.ingest_run(_record("run-2", "bumped the SDK")).status == "recorded"
    again = memory.briefing(memory.caller(opened.token))
    assert again.degraded is None and again.version == 1 and again.computed_now


def test_a_connection_killed_mid_recall_degrades_and_recovers(
    tmp_path: Path,
) -> None:
    base = store_kinds.required_url()
    schema, url = store_kinds.fresh_schema(base)
    name = f"fleetmem-kill-{schema[-6:]}"
    home = tmp_path / "home"
    home.mkdir()
    write_config(home, f'{VECTORS_OFF}\n[store]\nurl = "{url}&application_name={name}"\n')
    app = build(home, {"HOME": str(tmp_path)})
    try:
        for n in range(20):
            app.memory.ingest_run(_record(f"run-{n}", f"ledger settlement fix number {n}"))
        stop = threading.Event()
        answers: list[str | None] = []
        errors: list[BaseException] = []

        def recalls() -> None:
            while not stop.is_set():
                try:
                    got = app.agent_memory.operator_recall("ledger settlement", repo=API)
                    answers.append(got.episodes.degraded)
                except BaseException as exc:
                    errors.append(exc)

        workers = [threading.Thread(target=recalls) for _ in range(3)]
        for w in workers:
            w.start()
        killed = 0
        with psycopg.connect(base, autocommit=True) as admin:
            for _ in range(15):
                time.sleep(0.1)
                killed += len(
                    admin.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE application_name = %s AND pid <> pg_backend_pid()",
                        (name,),
                    ).fetchall()
                )
        stop.set()
        for w in workers:
            w.join(30)
        assert killed >= 5 and not errors, errors
        assert len(answers) > 10
        # Afterwards the pool replaces every dead connection: full answers again. The last
        # kill may have come a moment ago, and the pool reconnects in the background with a
        # backoff, so a recall asked at once may still degrade (after OUTAGE_WAIT_S): allow
        # the pool a few seconds, as a daemon's next callers would.
        deadline = time.monotonic() + 15.0
        found = app.agent_memory.operator_recall("ledger settlement", repo=API)
        while found.episodes.degraded is not None and time.monotonic() < deadline:
            time.sleep(0.5)
            found = app.agent_memory.operator_recall("ledger settlement", repo=API)
        assert found.episodes.degraded is None and len(found.episodes.items) == 8
    finally:
        app.close()
        store_kinds.drop_schema(base, schema)
