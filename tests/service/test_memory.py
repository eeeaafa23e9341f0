"""MemoryService end to end over a real SQLite store (seed 000 REQ-1, REQ-5 to REQ-11)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from fleetmem import metrics
from fleetmem.errors import Conflict, InvalidInput, InvalidRunRecord, NotAttributed, UnknownEpisode
from fleetmem.providers.base import ProviderItem, ProviderRecall
from fleetmem.service.bootstrap import App
from fleetmem.service.memory import RETRY_WINDOW_S, MemoryService
from tests.conftest import git, make_record, session, stored_bytes
from tests.fakes.openai_server import FakeOpenAI

API = "github.com/acme/api"
BILLING = "github.com/acme/billing"


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def service_with(app: App, provider: Any, clock: Clock | None = None) -> MemoryService:
    return MemoryService(
        store=app.store,
        settings=lambda: app.config.current,
        provider=provider,
        clock=clock or Clock(),
    )


def ingest(app: App, **overrides: Any) -> str:
    result = app.memory.ingest_run(make_record(**overrides))
    assert result.episode_id is not None, result
    return result.episode_id


# ---- recording ----------------------------------------------------------------------------
def test_default_config_records_to_builtin(make_app: Callable[..., App]) -> None:
    app = make_app()
    before = metrics.sample(
        "fleetmem_episodes_recorded_total", {"provider": "builtin", "outcome": "ok"}
    )
    result = app.memory.ingest_run(make_record())
    assert result.status == "recorded"
    rows = app.store.index_rows_for_episode(result.episode_id or "")
    assert [(r.provider, r.provider_id, r.scope) for r in rows] == [
        ("builtin", result.episode_id, f"project:{API}")
    ]
    after = metrics.sample(
        "fleetmem_episodes_recorded_total", {"provider": "builtin", "outcome": "ok"}
    )
    assert after == before + 1


def test_bad_record_is_refused_naming_the_field_and_nothing_is_stored(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    bad = make_record()
    bad["sessions"][0]["events"][0] = {"type": "edit"}
    with pytest.raises(InvalidRunRecord) as info:
        app.memory.ingest_run(bad)
    assert info.value.field == "sessions[0].events[0].path"
    for field, value in [("outcome", "exploded"), ("started_at", "yesterday"), ("spawned", "yes")]:
        with pytest.raises(InvalidRunRecord) as info:
            app.memory.ingest_run(make_record(**{field: value}))
        assert info.value.field == field
    with pytest.raises(InvalidRunRecord) as info:
        app.memory.ingest_run(b"{not json")
    with pytest.raises(InvalidRunRecord) as info:
        app.memory.ingest_run(make_record(surprise=1))
    assert info.value.field == "surprise"
    assert app.store.run_status_counts() == {}
    assert app.store.episode_counts()["total"] == 0


def test_duplicate_is_harmless_but_a_conflict_is_refused(make_app: Callable[..., App]) -> None:
    app = make_app()
    first = app.memory.ingest_run(make_record())
    again = app.memory.ingest_run(make_record())
    assert again.status == "duplicate" and again.episode_id == first.episode_id
    # Reusing a run id for different content is a conflict (409 / exit 4), naming the id.
    with pytest.raises(Conflict, match="run-2026-11-28-0042") as info:
        app.memory.ingest_run(make_record(outcome="succeeded"))
    assert "run_id" in str(info.value)
    assert sum(app.memory.status()["runs"].values()) == 1  # the first run alone is stored


def test_no_repository_no_episode_and_counted(make_app: Callable[..., App], tmp_path: Path) -> None:
    app = make_app()
    outside = tmp_path / "work"
    outside.mkdir()
    before = metrics.sample("fleetmem_runs_skipped_total", {"reason": "no_repository"})
    result = app.memory.ingest_run(
        make_record(sessions=[session(cwd=str(outside), repo=None, edits=("a.py",))])
    )
    assert result.status == "skipped:no_repository" and result.episode_id is None
    after = metrics.sample("fleetmem_runs_skipped_total", {"reason": "no_repository"})
    assert after == before + 1
    assert app.memory.status()["runs"] == {"skipped:no_repository": 1}


def test_real_git_repository_is_resolved(
    make_app: Callable[..., App], git_repo: Callable[..., Path]
) -> None:
    app = make_app()
    root = git_repo("api", remote="https://bot:s3cr3t@github.com:443/acme/api.git")
    git(root, "checkout", "-q", "-b", "fix/flaky")
    (root / "pkg").mkdir()
    result = app.memory.ingest_run(
        make_record(
            sessions=[
                {
                    "id": "s1",
                    "cwd": str(root / "pkg"),
                    "events": [
                        {"type": "edit", "path": "mod.py"},
                        {"type": "edit", "path": str(root / "README.md")},
                        {"type": "edit", "path": "/etc/hosts"},
                    ],
                }
            ]
        )
    )
    ep = app.memory.get_episode(result.episode_id or "")
    assert ep.repo == API and ep.branch == "fix/flaky"
    assert ep.episode is not None
    assert ep.episode["files_touched"] == ["README.md", "pkg/mod.py"]
    assert "s3cr3t" not in json.dumps(ep.episode)


def test_project_file_can_opt_an_agent_out(
    make_app: Callable[..., App], git_repo: Callable[..., Path]
) -> None:
    app = make_app()
    root = git_repo("scratch", remote="git@github.com:acme/scratch.git")
    (root / ".fleetmem.toml").write_text("[agent.api-fixer]\nmemory_record = false\n")
    result = app.memory.ingest_run(make_record(sessions=[session(cwd=str(root), repo=None)]))
    assert result.status == "skipped:opted_out"


def test_global_opt_out(make_app: Callable[..., App]) -> None:
    app = make_app('[model_api]\nembedding_model = ""\n[agent.api-fixer]\nmemory_record = false\n')
    assert app.memory.ingest_run(make_record()).status == "skipped:opted_out"


def test_stored_run_record_is_redacted(make_app: Callable[..., App]) -> None:
    app = make_app()
    token = "ghp_" + "Ab3" * 12
    record = make_record(result_text=f"token {token}", prompt=f"use {token}")
    app.memory.ingest_run(record)
    dump = stored_bytes(app.store)
    assert str(record["run_id"]).encode() in dump  # the dump does hold the stored rows
    assert token.encode() not in dump


# ---- recall -------------------------------------------------------------------------------
def test_recall_by_exact_words_with_vectors_off(make_app: Callable[..., App]) -> None:
    app = make_app()
    ep = ingest(app)
    ingest(
        app,
        run_id="other",
        result_text="Upgraded the logging library and fixed deprecation warnings.",
    )
    result = app.memory.recall("settlement fixture timezone", scopes=[f"project:{API}"])
    assert result.degraded is None
    assert result.items[0].episode_id == ep
    hit = result.items[0]
    assert (hit.agent, hit.repo, hit.run_id, hit.provider) == (
        "api-fixer",
        API,
        "run-2026-11-28-0042",
        "builtin",
    )
    assert hit.untrusted


def test_recall_never_crosses_repositories(make_app: Callable[..., App]) -> None:
    app = make_app()
    ingest(app, sessions=[session(repo=BILLING)], result_text="ledger reconciliation broke")
    result = app.memory.recall("ledger reconciliation", scopes=[f"project:{API}"])
    assert result.items == ()
    assert app.memory.recall("ledger", scopes=[f"project:{BILLING}"]).items


def test_recall_bounds_are_checked(make_app: Callable[..., App]) -> None:
    app = make_app()
    scopes = [f"project:{API}"]
    for kwargs, field in [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x" * 513}, "query"),
        ({"query": "ok", "limit": 0}, "limit"),
        ({"query": "ok", "limit": 21}, "limit"),
        ({"query": "ok", "limit": True}, "limit"),
        ({"query": "ok", "paths": ["a"] * 21}, "paths"),
        ({"query": "ok", "paths": ["../etc/passwd"]}, "paths"),
        ({"query": "ok", "paths": ["/abs"]}, "paths"),
    ]:
        with pytest.raises(InvalidInput) as info:
            app.memory.recall(scopes=scopes, **kwargs)
        assert info.value.field == field


def test_scopes_for_agent_and_unattributed(make_app: Callable[..., App]) -> None:
    app = make_app()
    with pytest.raises(NotAttributed):
        app.memory.scopes_for(agent="api-fixer")
    with pytest.raises(NotAttributed):
        app.memory.scopes_for()
    ingest(app)
    assert app.memory.scopes_for(agent="api-fixer") == [f"project:{API}"]
    with pytest.raises(InvalidInput):
        app.memory.scopes_for(repo="bad key with spaces")


def test_path_boost_prefers_episodes_that_touched_the_path(make_app: Callable[..., App]) -> None:
    app = make_app()
    a = ingest(app, run_id="a", result_text="fixed the cache", sessions=[session(edits=("x.py",))])
    b = ingest(app, run_id="b", result_text="fixed the cache", sessions=[session(edits=("y.py",))])
    plain = app.memory.recall("cache", scopes=[f"project:{API}"])
    boosted = app.memory.recall("cache", scopes=[f"project:{API}"], paths=["x.py"])
    assert {h.episode_id for h in plain.items} == {a, b}
    assert boosted.items[0].episode_id == a


class ScriptedProvider:
    """A provider that answers what the test says: a misbehaving external store."""

    def __init__(self, items: Sequence[ProviderItem] = (), *, fail: bool = False) -> None:
        self.items = list(items)
        self.fail = fail
        self.hanging = False
        self.release = threading.Event()
        self.forgotten: list[str] = []
        self.recorded: list[dict[str, Any]] = []

    @property
    def name(self) -> str:
        return "scripted"

    def record(
        self, episode_id: str, scope: str, trust_class: str, episode: Mapping[str, Any], text: str
    ) -> list[str]:
        if self.fail:
            raise ConnectionError("provider down")
        self.recorded.append({"episode_id": episode_id, "text": text, "episode": episode})
        return [f"m-{episode_id}-1", f"m-{episode_id}-2"]

    def recall(
        self, query: str, scopes: Sequence[str], limit: int, paths: Sequence[str]
    ) -> ProviderRecall:
        if self.hanging:
            self.release.wait(5)
        if self.fail:
            raise ConnectionError("provider down")
        return ProviderRecall(items=tuple(self.items))

    def forget(self, provider_id: str) -> bool:
        if self.fail:
            raise TimeoutError("provider timed out")
        self.forgotten.append(provider_id)
        return True


def test_index_filter_drops_by_reason_and_keeps_our_provenance(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    provider = ScriptedProvider()
    svc = service_with(app, provider)
    mine = svc.ingest_run(make_record(run_id="mine")).episode_id
    theirs = svc.ingest_run(make_record(run_id="theirs", sessions=[session(repo=BILLING)]))
    gone = svc.ingest_run(make_record(run_id="gone")).episode_id
    svc.forget(gone or "")
    provider.items = [
        ProviderItem(f"m-{mine}-1", "recorded by release-bot in acme/billing", 0.9),
        ProviderItem(f"m-{theirs.episode_id}-1", "billing secret stuff", 0.8),
        ProviderItem("m-never-recorded", "shared store noise", 0.7),
        ProviderItem(f"m-{gone}-1", "forgotten text", 0.6),
        ProviderItem(f"m-{mine}-2", "x" * 5000, 0.5),
        ProviderItem(f"m-{mine}-2", "nan score", float("nan")),
        ProviderItem("i" * 129, "long id", 0.1),
    ]
    before = {
        r: metrics.sample("fleetmem_results_dropped_total", {"provider": "scripted", "reason": r})
        for r in ("scope", "unknown_id", "forgotten", "invalid")
    }
    result = svc.recall("anything", scopes=[f"project:{API}"])
    assert [h.text for h in result.items] == ["recorded by release-bot in acme/billing"]
    hit = result.items[0]
    assert hit.agent == "api-fixer" and hit.repo == API and hit.episode_id == mine
    assert dict(result.dropped) == {"scope": 1, "unknown_id": 1, "forgotten": 1, "invalid": 3}
    for reason, n in result.dropped.items():
        now = metrics.sample(
            "fleetmem_results_dropped_total", {"provider": "scripted", "reason": reason}
        )
        assert now == before[reason] + n
    svc.close()


def test_provider_failure_degrades_recall_and_queues_records(make_app: Callable[..., App]) -> None:
    app = make_app()
    clock = Clock()
    provider = ScriptedProvider(fail=True)
    svc = service_with(app, provider, clock)
    result = svc.ingest_run(make_record())
    assert result.status == "pending"
    assert svc.status()["pending"]["record"] == 1
    recall = svc.recall("ledger", scopes=[f"project:{API}"])
    assert recall.degraded == "provider_unavailable" and recall.items == ()
    # The provider comes back: the stored copy is sent on the next due retry.
    provider.fail = False
    clock.now += 3600
    assert svc.process_jobs() == {"record:ok": 1}
    assert provider.recorded[0]["episode_id"] == result.episode_id
    assert svc.status()["pending"]["record"] == 0
    svc.close()


def test_record_gives_up_after_24_hours(make_app: Callable[..., App]) -> None:
    app = make_app()
    clock = Clock()
    svc = service_with(app, ScriptedProvider(fail=True), clock)
    svc.ingest_run(make_record())
    clock.now += RETRY_WINDOW_S + 1
    assert svc.process_jobs() == {"record:failed": 1}
    assert svc.status()["failed"]["record"] == 1
    svc.close()


def test_hung_provider_is_cut_at_provider_timeout(make_app: Callable[..., App]) -> None:
    app = make_app(
        '[memory.episodes]\nprovider_timeout = "200ms"\n[model_api]\nembedding_model = ""\n'
    )
    provider = ScriptedProvider()
    provider.hanging = True
    svc = service_with(app, provider)

    started = time.monotonic()
    result = svc.recall("ledger", scopes=[f"project:{API}"])
    assert time.monotonic() - started < 2.0
    assert result.degraded == "provider_unavailable"
    provider.release.set()
    svc.close()


# ---- forgetting and retention -------------------------------------------------------------
def test_forget_stops_recall_at_once_and_deletes_the_body(make_app: Callable[..., App]) -> None:
    app = make_app()
    ep = ingest(app)
    assert app.memory.recall("ledger", scopes=[f"project:{API}"]).items
    result = app.memory.forget(ep)
    assert (result.forgotten, result.pending) == (1, 0)
    assert app.memory.recall("ledger", scopes=[f"project:{API}"]).items == ()
    row = app.memory.get_episode(ep)
    assert row.forgotten_at is not None and row.text is None and row.episode is None
    assert not app.store.builtin_has(ep)
    with pytest.raises(UnknownEpisode):
        app.memory.forget("ep_00000000000000000000")


def test_forget_holds_while_the_provider_is_down(make_app: Callable[..., App]) -> None:
    app = make_app()
    clock = Clock()
    provider = ScriptedProvider()
    svc = service_with(app, provider, clock)
    ep = svc.ingest_run(make_record()).episode_id or ""
    provider.fail = True
    provider.items = [ProviderItem(f"m-{ep}-1", "still here", 1.0)]
    result = svc.forget(ep)
    assert result.pending == 2
    provider.fail = False
    assert svc.recall("x", scopes=[f"project:{API}"]).items == ()  # tombstone holds
    assert svc.status()["pending"]["forget"] == 2
    clock.now += 3600
    svc.process_jobs()
    assert sorted(provider.forgotten) == [f"m-{ep}-1", f"m-{ep}-2"]
    assert svc.status()["pending"]["forget"] == 0
    provider.fail = True
    ep2 = svc.ingest_run(make_record(run_id="second")).episode_id or ""
    provider.fail = False
    clock.now += 3600
    svc.process_jobs()
    assert {r.state for r in app.store.index_rows_for_episode(ep2)} == {"recorded"}
    provider.fail = True
    svc.forget(ep2)
    clock.now += RETRY_WINDOW_S + 10
    svc.process_jobs()
    states = {r.state for r in app.store.index_rows_for_episode(ep2)}
    assert states == {"forget_failed"}
    svc.close()


def test_retention_forgets_old_episodes(make_app: Callable[..., App]) -> None:
    app = make_app('[memory.episodes]\nretention = "30d"\n[model_api]\nembedding_model = ""\n')
    day = 86_400.0
    t0 = 1_795_857_243.0  # 2026-11-28T09:14:03Z, the example's start
    clock = Clock(now=t0)
    svc = service_with(app, app.memory.provider, clock)
    old = svc.ingest_run(make_record(run_id="old")).episode_id or ""
    newer = (
        svc.ingest_run(
            make_record(
                run_id="newer", started_at="2026-12-10T09:14:03Z", ended_at="2026-12-10T09:20:00Z"
            )
        ).episode_id
        or ""
    )
    clock.now = t0 + 20 * day
    assert svc.apply_retention() == 0
    clock.now = t0 + 35 * day
    assert svc.apply_retention() == 1
    assert app.memory.get_episode(old).forgotten_at is not None
    assert app.memory.get_episode(newer).forgotten_at is None
    clock.now = t0 + 50 * day
    assert svc.apply_retention() == 1
    assert app.memory.get_episode(newer).forgotten_at is not None
    svc.close()


# ---- summaries ----------------------------------------------------------------------------
def summary_config(base_url: str) -> str:
    return f'[model_api]\nbase_url = "{base_url}"\nutility_model = "tiny"\nembedding_model = ""\n'


def test_summary_is_added_and_redacted(
    make_app: Callable[..., App], fake_openai: FakeOpenAI
) -> None:
    app = make_app(summary_config(fake_openai.base_url))
    token = "ghp_" + "Zq9" * 12
    ep = ingest(app, result_text=f"pushed with {token}")
    row = app.memory.get_episode(ep)
    assert row.summary and row.summary_outcome == "ok"
    assert f"summary: {row.summary}" in (row.text or "")
    assert token.encode() not in fake_openai.received_bytes()


def test_oversized_summary_is_discarded(
    make_app: Callable[..., App], fake_openai: FakeOpenAI
) -> None:
    app = make_app(summary_config(fake_openai.base_url))
    fake_openai.mode = "oversized_summary"
    before = metrics.sample("fleetmem_episode_summaries_total", {"outcome": "fallback"})
    ep = ingest(app)
    row = app.memory.get_episode(ep)
    assert row.summary is None and row.summary_outcome == "fallback"
    assert app.store.index_rows_for_episode(ep)
    after = metrics.sample("fleetmem_episode_summaries_total", {"outcome": "fallback"})
    assert after == before + 1


def test_no_model_api_means_no_summary_not_no_episode(make_app: Callable[..., App]) -> None:
    app = make_app()
    ep = ingest(app)
    row = app.memory.get_episode(ep)
    assert row.summary is None and row.summary_outcome == "fallback"
    assert app.store.index_rows_for_episode(ep)


# ---- embeddings ---------------------------------------------------------------------------
def embed_config(base_url: str) -> str:
    return f'[model_api]\nbase_url = "{base_url}"\nembedding_model = "bow-64"\n'


def test_hybrid_recall_falls_back_to_text_when_embeddings_fail(
    make_app: Callable[..., App], fake_openai: FakeOpenAI
) -> None:
    app = make_app(embed_config(fake_openai.base_url))
    ep = ingest(app)
    assert app.memory.status()["vectors_missing"] == 0
    fake_openai.mode = "error_503"
    result = app.memory.recall("settlement fixture", scopes=[f"project:{API}"])
    assert result.degraded == "embeddings_unavailable"
    assert [h.episode_id for h in result.items] == [ep]


def test_vectors_missing_are_backfilled(
    make_app: Callable[..., App], fake_openai: FakeOpenAI
) -> None:
    app = make_app(embed_config(fake_openai.base_url))
    fake_openai.mode = "error_503"
    ingest(app)
    assert app.memory.status()["vectors_missing"] == 1
    fake_openai.mode = "ok"
    assert app.memory.backfill_vectors() == 1
    assert app.memory.status()["vectors_missing"] == 0


def test_status_reports_counts(make_app: Callable[..., App]) -> None:
    app = make_app()
    ingest(app)
    status = app.memory.status()
    provider = status["provider"]
    assert (provider["name"], provider["state"], provider["contract"]) == ("builtin", "ok", 1)
    assert provider["transport"] == "in-process"
    assert status["episodes"]["live"] == 1
    assert status["embedding_model"] is None
    json.dumps(status)


def test_retention_applies_to_an_external_provider(make_app: Callable[..., App]) -> None:
    app = make_app('[memory.episodes]\nretention = "30d"\n[model_api]\nembedding_model = ""\n')
    clock = Clock(now=1_795_857_243.0)
    provider = ScriptedProvider()
    svc = service_with(app, provider, clock)
    ep = svc.ingest_run(make_record()).episode_id
    clock.now += 31 * 86_400.0
    assert svc.apply_retention() == 1
    assert sorted(provider.forgotten) == [f"m-{ep}-1", f"m-{ep}-2"]
    svc.close()


def test_concurrent_ingest_from_threads_loses_nothing(make_app: Callable[..., App]) -> None:
    app = make_app()
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(10):
                app.memory.ingest_run(make_record(run_id=f"t{n}-{i}"))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert app.store.episode_counts()["live"] == 40
    assert app.memory.status()["pending"]["record"] == 0
