"""An upstream provider as fleetmem's episode store, against real provider processes.

Seed 000 REQ-2, REQ-3, REQ-9, REQ-10, REQ-13, REQ-18, REQ-21: each scenario runs the
reference provider (or one of its misbehaving variants) as a real subprocess over stdio,
or as a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fleetmem import metrics
from fleetmem.providers import contract
from fleetmem.providers.calllog import args_digest
from fleetmem.service.bootstrap import App
from fleetmem.service.memory import MemoryService
from tests.conftest import make_record, session
from tests.providers.conftest import (
    Calls,
    HttpProvider,
    config,
    provider_state,
    stdio_upstream,
    wait_for,
)

API = "github.com/acme/api"
BILLING = "github.com/acme/billing"
SCOPE = f"project:{API}"


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def dropped(provider: str, reason: str) -> float:
    return metrics.sample(
        "fleetmem_results_dropped_total", {"provider": provider, "reason": reason}
    )


def ingest(app: App, **overrides: Any) -> str:
    result = app.memory.ingest_run(make_record(**overrides))
    assert result.episode_id is not None
    return result.episode_id


def test_reference_provider_records_recalls_and_logs_hashed_calls(
    make_app: Callable[..., App], calls: Calls
) -> None:
    app = make_app(config(stdio_upstream("ref", "--calls-file", str(calls.path)), provider="ref"))
    result = app.memory.ingest_run(make_record())
    assert result.status == "recorded"
    episode_id = result.episode_id or ""
    rows = app.store.index_rows_for_episode(episode_id)
    # Two memories derived from one episode, both indexed under the episode's scope.
    assert len(rows) == 2 and {r.provider for r in rows} == {"ref"}
    assert {r.scope for r in rows} == {SCOPE}
    recall = app.memory.recall("settlement fixture timezone", scopes=[SCOPE])
    assert recall.provider == "ref" and recall.degraded is None
    assert {h.provider_id for h in recall.items} == {r.provider_id for r in rows}
    assert {(h.episode_id, h.agent, h.repo) for h in recall.items} == {
        (episode_id, "api-fixer", API)
    }
    # The session was checked with memory_contract before anything else was sent.
    assert calls.tools()[:2] == ["memory_contract", "memory_record_episode"]

    # The call log holds the daemon's own rows with arguments hashed, never the episode.
    log = {r.tool: r for r in app.store.recent_calls("ref")}
    assert set(log) == {"memory_record_episode", "memory_recall"}
    assert {r.caller for r in log.values()} == {"fleetmem"}
    assert {r.outcome for r in log.values()} == {"ok"}
    stored = app.memory.get_episode(episode_id)
    sent = contract.record_request(
        episode_id, stored.scope, stored.trust_class, stored.episode or {}, stored.text or ""
    )
    assert log["memory_record_episode"].args_sha256 == args_digest(sent)[0]
    db = sqlite3.connect(app.store.db.path)
    try:
        dump = "\n".join(str(r) for r in db.execute("SELECT * FROM call_log"))
    finally:
        db.close()
    assert "settlement" not in dump and "api-fixer" not in dump


def test_a_provider_that_ignores_scope_cannot_widen_it(
    make_app: Callable[..., App],
) -> None:
    app = make_app(config(stdio_upstream("wide", "--misbehave", "ignore-scope"), provider="wide"))
    ingest(app, run_id="api-run", result_text="ledger reconciliation flake fixed")
    ingest(
        app,
        run_id="billing-run",
        sessions=[session(repo=BILLING)],
        result_text="ledger reconciliation flake in billing, secret plan",
    )
    before = dropped("wide", "scope")
    result = app.memory.recall("ledger reconciliation flake", scopes=[SCOPE])
    assert result.items and {h.repo for h in result.items} == {API}
    assert "secret plan" not in " ".join(h.text for h in result.items)
    assert result.dropped["scope"] == 2  # both memories derived from the billing episode
    assert dropped("wide", "scope") == before + 2


def test_ids_the_provider_was_never_given_are_dropped(make_app: Callable[..., App]) -> None:
    app = make_app(
        config(stdio_upstream("shared", "--misbehave", "foreign-ids"), provider="shared")
    )
    ingest(app)
    before = dropped("shared", "unknown_id")
    result = app.memory.recall("settlement fixture", scopes=[SCOPE])
    assert result.items
    assert "foreign-memory-1" not in {h.provider_id for h in result.items}
    assert result.dropped["unknown_id"] == 1
    assert dropped("shared", "unknown_id") == before + 1


def test_oversized_items_and_nan_scores_are_dropped_not_truncated(
    make_app: Callable[..., App],
) -> None:
    app = make_app(config(stdio_upstream("big", "--misbehave", "oversized"), provider="big"))
    ingest(app)
    before = dropped("big", "invalid")
    result = app.memory.recall("settlement fixture", scopes=[SCOPE])
    assert len(result.items) == 2  # the two good memories
    assert all(len(h.text) <= 2000 and h.score is not None for h in result.items)
    assert result.dropped == {"invalid": 2}
    assert dropped("big", "invalid") == before + 2


def test_an_unsupported_contract_is_never_recorded_to(
    make_app: Callable[..., App], calls: Calls
) -> None:
    app = make_app(
        config(
            stdio_upstream("v2", "--misbehave", "contract2", "--calls-file", str(calls.path)),
            provider="v2",
        )
    )
    result = app.memory.ingest_run(make_record())
    assert result.status == "pending"
    status = app.memory.status()
    assert status["provider"]["state"] == "incompatible"
    assert status["provider"]["contract"] == 2
    assert status["pending"]["record"] == 1
    recall = app.memory.recall("settlement", scopes=[SCOPE])
    assert (recall.items, recall.degraded) == ((), "provider_unavailable")
    assert "memory_record_episode" not in calls.tools()
    assert "memory_recall" not in calls.tools()
    assert metrics.sample("fleetmem_provider_up", {"provider": "v2"}) == 0


def test_a_server_without_memory_contract_is_incompatible(
    make_app: Callable[..., App], calls: Calls
) -> None:
    app = make_app(
        config(
            stdio_upstream("nocon", "--misbehave", "no-contract", "--calls-file", str(calls.path)),
            provider="nocon",
        )
    )
    assert app.memory.ingest_run(make_record()).status == "pending"
    provider = app.memory.status()["provider"]
    assert provider["state"] == "incompatible" and "memory_contract" in provider["reason"]
    assert calls.tools() == []  # not even a record call reached it


def test_a_hung_provider_degrades_within_provider_timeout_then_the_breaker_opens(
    make_app: Callable[..., App],
) -> None:
    app = make_app(
        config(stdio_upstream("slow", "--misbehave", "hang"), provider="slow", timeout="1s")
    )
    ingest(app)  # recording does not hang
    degraded_before = metrics.sample(
        "fleetmem_recalls_total", {"provider": "slow", "outcome": "degraded"}
    )
    for _ in range(5):  # the default breaker threshold
        started = time.monotonic()
        result = app.memory.recall("settlement", scopes=[SCOPE])
        assert 1.0 <= time.monotonic() - started < 2.5
        assert (result.items, result.degraded) == ((), "provider_unavailable")
    assert provider_state(app) == "breaker_open"
    started = time.monotonic()
    result = app.memory.recall("settlement", scopes=[SCOPE])
    # Refused at once: no wait for the timeout, and (below) nothing sent to the provider.
    assert time.monotonic() - started < 0.9
    assert result.degraded == "provider_unavailable"
    after = metrics.sample("fleetmem_recalls_total", {"provider": "slow", "outcome": "degraded"})
    assert after == degraded_before + 6
    outcomes = [r.outcome for r in app.store.recent_calls("slow") if r.tool == "memory_recall"]
    assert outcomes == ["timeout"] * 5


def test_a_provider_dying_mid_session_is_reopened_and_checked_again(
    make_app: Callable[..., App], calls: Calls
) -> None:
    app = make_app(
        config(
            stdio_upstream("mortal", "--misbehave", "die", "--calls-file", str(calls.path)),
            provider="mortal",
        )
    )
    ingest(app)
    result = app.memory.recall("settlement", scopes=[SCOPE])
    assert result.degraded == "provider_unavailable"
    wait_for(lambda: len(calls.pids()) == 2)
    wait_for(lambda: provider_state(app) == "ok")
    # memory_contract on open and again after the reconnect, one per process.
    contract_calls = [(pid, t) for pid, t, _ in calls.lines() if t == "memory_contract"]
    assert [pid for pid, _ in contract_calls] == calls.pids()


def test_a_killed_provider_degrades_recall_and_queues_records_then_recovers(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    pid_file = tmp_path / "ref.pid"
    store_file = tmp_path / "ref-memories.json"
    app = make_app(
        config(
            stdio_upstream("ref", "--pid-file", str(pid_file), "--store", str(store_file)),
            provider="ref",
            timeout="2s",
        )
    )
    clock = Clock(time.time())
    svc = MemoryService(
        store=app.store,
        settings=lambda: app.config.current,
        provider=app.providers.configured(),
        clock=clock,
    )
    try:
        first = svc.ingest_run(make_record(run_id="first")).episode_id or ""
        assert svc.recall("settlement", scopes=[SCOPE]).items
        old_pid = int(pid_file.read_text())
        os.kill(old_pid, signal.SIGKILL)
        started = time.monotonic()
        result = svc.recall("settlement", scopes=[SCOPE])
        assert time.monotonic() - started < 2.0  # within provider_timeout
        assert (result.items, result.degraded) == ((), "provider_unavailable")
        second = svc.ingest_run(make_record(run_id="second"))
        assert second.status == "pending"
        forgot = svc.forget(first)  # REQ-10: the tombstone holds while the provider is down
        assert forgot.pending == 2
        assert svc.status()["pending"] == {**svc.status()["pending"], "record": 1, "forget": 2}

        wait_for(lambda: pid_file.read_text() != str(old_pid) and provider_state(app) == "ok")
        clock.now += 3600
        assert svc.process_jobs() == {"record:ok": 1, "forget:ok": 2}
        found = svc.recall("settlement", scopes=[SCOPE])
        assert {h.episode_id for h in found.items} == {second.episode_id}
    finally:
        svc.close()


def test_malformed_answers_are_provider_errors(make_app: Callable[..., App]) -> None:
    app = make_app(config(stdio_upstream("junk", "--misbehave", "malformed"), provider="junk"))
    assert app.memory.ingest_run(make_record()).status == "pending"
    assert app.memory.recall("settlement", scopes=[SCOPE]).degraded == "provider_unavailable"
    outcomes = {r.tool: r.outcome for r in app.store.recent_calls("junk")}
    assert outcomes == {"memory_record_episode": "invalid", "memory_recall": "invalid"}
    job_error = app.memory.status()["pending"]["record"]
    assert job_error == 1


def test_a_provider_that_never_forgets_is_held_to_the_tombstone(
    make_app: Callable[..., App],
) -> None:
    app = make_app(
        config(stdio_upstream("sticky", "--misbehave", "never-forget"), provider="sticky")
    )
    episode_id = ingest(app)
    assert app.memory.recall("settlement", scopes=[SCOPE]).items
    before = dropped("sticky", "forgotten")
    app.memory.forget(episode_id)
    result = app.memory.recall("settlement", scopes=[SCOPE])
    assert result.items == ()
    assert result.dropped == {"forgotten": 2}  # the provider still answers with them
    assert dropped("sticky", "forgotten") == before + 2


def test_retention_calls_memory_forget_on_the_upstream(
    make_app: Callable[..., App], calls: Calls
) -> None:
    app = make_app(
        config(stdio_upstream("zep", "--calls-file", str(calls.path)), provider="zep")
        + '[memory.episodes]\nretention = "30d"\n'
    )
    clock = Clock(1_795_857_243.0)  # the example record's start
    svc = MemoryService(
        store=app.store,
        settings=lambda: app.config.current,
        provider=app.providers.configured(),
        clock=clock,
    )
    try:
        episode_id = svc.ingest_run(make_record()).episode_id or ""
        ids = sorted(r.provider_id for r in app.store.index_rows_for_episode(episode_id))
        clock.now += 31 * 86_400.0
        assert svc.apply_retention() == 1
        forgotten = sorted(d for _, t, d in calls.lines() if t == "memory_forget")
        assert forgotten == ids
        assert {r.state for r in app.store.index_rows_for_episode(episode_id)} == {"forgotten"}
    finally:
        svc.close()


def test_provider_up_is_absent_before_the_first_contract_check(
    make_app: Callable[..., App],
) -> None:
    app = make_app(config(stdio_upstream("fresh-one"), provider="fresh-one"))
    labels = {"provider": "fresh-one"}
    assert metrics.REGISTRY.get_sample_value("fleetmem_provider_up", labels) is None
    checks = metrics.sample(
        "fleetmem_provider_duration_seconds_count", {**labels, "op": "contract"}
    )
    assert provider_state(app) == "ok"  # status opens the session and waits for the check
    assert metrics.REGISTRY.get_sample_value("fleetmem_provider_up", labels) == 1
    after = metrics.sample("fleetmem_provider_duration_seconds_count", {**labels, "op": "contract"})
    assert after == checks + 1


def test_streamable_http_provider_with_a_header_from_the_environment(
    make_app: Callable[..., App], http_provider: Callable[..., HttpProvider]
) -> None:
    server = http_provider("--require-header", "X-Token=tok-123")
    table = f'[mcp.web]\nurl = "{server.url}"\nheaders = {{ X-Token = "WEB_TOKEN" }}\n'
    app = make_app(config(table, provider="web"), WEB_TOKEN="tok-123")
    status = app.memory.status()["provider"]
    assert (status["state"], status["transport"], status["where"]) == ("ok", "http", "127.0.0.1")
    episode_id = ingest(app)
    found = app.memory.recall("settlement fixture", scopes=[SCOPE])
    assert {h.episode_id for h in found.items} == {episode_id}


def test_a_missing_header_variable_leaves_the_provider_unavailable(
    make_app: Callable[..., App], http_provider: Callable[..., HttpProvider]
) -> None:
    server = http_provider("--require-header", "X-Token=tok-123")
    table = f'[mcp.web2]\nurl = "{server.url}"\nheaders = {{ X-Token = "WEB2_TOKEN" }}\n'
    app = make_app(config(table, provider="web2"))
    provider = app.memory.status()["provider"]
    assert provider["state"] == "unavailable"
    assert "WEB2_TOKEN" in provider["reason"]
    assert app.memory.ingest_run(make_record()).status == "pending"


def test_a_reload_switches_provider_and_old_episodes_are_still_forgotten(
    make_app: Callable[..., App], home: Path, calls: Calls
) -> None:
    app = make_app(config(stdio_upstream("ref", "--calls-file", str(calls.path))))
    old = ingest(app, run_id="before-switch")
    assert {r.provider for r in app.store.index_rows_for_episode(old)} == {"builtin"}
    (home / "fleetmem.toml").write_text(
        config(stdio_upstream("ref", "--calls-file", str(calls.path)), provider="ref")
    )
    assert app.config.reload() is None
    new = ingest(app, run_id="after-switch")
    assert {r.provider for r in app.store.index_rows_for_episode(new)} == {"ref"}
    assert app.memory.status()["provider"]["name"] == "ref"
    # Forgetting an episode recorded to the previous provider still reaches that provider.
    result = app.memory.forget(old)
    assert (result.forgotten, result.pending) == (1, 0)
    assert not app.store.builtin_has(old)


def test_an_incompatible_provider_is_used_again_once_a_later_check_passes(
    make_app: Callable[..., App], tmp_path: Path, calls: Calls
) -> None:
    from fleetmem.providers.hub import ProviderHub

    version = tmp_path / "contract"
    version.write_text("2")
    app = make_app(
        config(
            stdio_upstream(
                "upgrading",
                "--contract-from",
                str(version),
                "--calls-file",
                str(calls.path),
            ),
            provider="upgrading",
        )
    )
    hub = ProviderHub(
        settings=lambda: app.config.current,
        builtin=app.providers.builtin,
        call_log=app.store,
        log_dir=tmp_path / "logs",
        environ={},
        session_options={"recheck_s": 0.2},
    )
    svc = MemoryService(
        store=app.store, settings=lambda: app.config.current, provider=hub.configured()
    )
    try:
        assert svc.ingest_run(make_record()).status == "pending"
        assert svc.status()["provider"]["state"] == "incompatible"
        version.write_text("1")  # the operator upgrades the provider in place
        wait_for(lambda: svc.status()["provider"]["state"] == "ok")
        assert "memory_record_episode" not in calls.tools()
        assert svc.recall("settlement", scopes=[SCOPE]).degraded is None
    finally:
        svc.close()
        hub.close()
