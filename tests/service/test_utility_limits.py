"""Shared limits on utility-model calls (episode summaries): a rate per minute and a ceiling
per UTC day, counted in the store so that every process of one home draws on one window."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from fleetmem import metrics
from fleetmem.errors import ConfigError
from fleetmem.service.bootstrap import App, build
from tests.conftest import make_record, session, write_config
from tests.fakes.openai_server import FakeOpenAI


def _config(base_url: str, rate: int, daily: int) -> str:
    return (
        f'[model_api]\nbase_url = "{base_url}"\nutility_model = "tiny"\nembedding_model = ""\n'
        f"utility_rate_per_minute = {rate}\nutility_daily_ceiling = {daily}\n"
    )


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _ingest(app: App, n: int) -> Any:
    record = make_record(
        run_id=f"run-{n}", result_text=f"run {n} fixed the ledger", sessions=[session()]
    )
    result = app.memory.ingest_run(record)
    return app.memory.get_episode(result.episode_id)


def _chat_calls(server: FakeOpenAI) -> int:
    return sum(1 for r in server.requests if r.path.endswith("/chat/completions"))


def test_past_the_rate_summaries_are_not_asked_for_and_the_episode_is_kept(
    make_app: Callable[..., App], fake_openai: FakeOpenAI
) -> None:
    app = make_app(_config(fake_openai.base_url, rate=3, daily=100))
    clock = Clock(1_800_000_000.0)  # 2027-01-15, mid-day UTC
    app.memory._clock = clock
    before = metrics.sample(
        "fleetmem_utility_calls_total", {"use": "episode_summary", "outcome": "rate_limited"}
    )
    rows = [_ingest(app, n) for n in range(5)]
    assert [r.summary_outcome for r in rows] == ["ok", "ok", "ok", "fallback", "fallback"]
    assert all(r.summary is None for r in rows[3:])
    assert _chat_calls(fake_openai) == 3
    assert (
        metrics.sample(
            "fleetmem_utility_calls_total", {"use": "episode_summary", "outcome": "rate_limited"}
        )
        == before + 2
    )
    clock.now += 61  # a new minute: the window has room again
    assert _ingest(app, 5).summary_outcome == "ok"
    status = app.memory.status()["utility"]
    assert status == {
        "calls_today": 4,
        "refused_today": {"rate_limited": 2, "daily_ceiling": 0},
        "rate_per_minute": 3,
        "daily_ceiling": 100,
    }


def test_the_daily_ceiling_holds_until_midnight_utc(
    make_app: Callable[..., App], fake_openai: FakeOpenAI
) -> None:
    app = make_app(_config(fake_openai.base_url, rate=100, daily=2))
    midnight = 1_800_057_600.0  # a multiple of 86,400: 00:00 UTC
    clock = Clock(midnight - 120)
    app.memory._clock = clock
    outcomes = []
    for n in range(4):
        outcomes.append(_ingest(app, n).summary_outcome)
        clock.now += 20
    assert outcomes == ["ok", "ok", "fallback", "fallback"]
    assert app.memory.status()["utility"]["refused_today"]["daily_ceiling"] == 2
    clock.now = midnight + 1
    assert _ingest(app, 9).summary_outcome == "ok"
    assert app.memory.status()["utility"]["calls_today"] == 1


def test_two_stores_opened_on_one_home_share_one_window(home: Any, fake_openai: FakeOpenAI) -> None:
    write_config(home, _config(fake_openai.base_url, rate=4, daily=100))
    apps = [build(home, {"HOME": str(home.parent)}) for _ in range(2)]
    try:
        results: list[str | None] = []
        lock = threading.Lock()

        def work(app: App, offset: int) -> None:
            for n in range(4):
                row = _ingest(app, offset + n)
                with lock:
                    results.append(row.summary_outcome)

        threads = [threading.Thread(target=work, args=(a, 10 * i)) for i, a in enumerate(apps)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results, key=str) == ["fallback"] * 4 + ["ok"] * 4
        assert _chat_calls(fake_openai) == 4
    finally:
        for app in apps:
            app.close()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("utility_rate_per_minute", "0"),
        ("utility_daily_ceiling", '"lots"'),
        ("utility_daily_ceiling", "-1"),
    ],
)
def test_bad_limits_are_refused_naming_the_key(home: Any, key: str, value: str) -> None:
    write_config(home, f'[model_api]\nembedding_model = ""\n{key} = {value}\n')
    with pytest.raises(ConfigError, match=f"model_api.{key}"):
        build(home, {"HOME": str(home.parent)})
