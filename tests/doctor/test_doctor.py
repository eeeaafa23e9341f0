"""fleetmem doctor against real homes: healthy, degraded and broken."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetmem.service.bootstrap import App
from fleetmem.service.doctor import exit_code, run_checks
from tests.conftest import EXAMPLE, write_config
from tests.fakes.openai_server import FakeOpenAI
from tests.surfaces.cli_helpers import run_cli


def by_name(app: App) -> dict[str, tuple[str, str]]:
    return {c.name: (c.status, c.detail) for c in run_checks(app)}


def test_healthy_home_with_vectors_off(make_app: Callable[..., App]) -> None:
    app = make_app()
    rows = by_name(app)
    assert rows["store"][0] == "ok" and "schema" in rows["store"][1]
    assert rows["embeddings"][0] == "info"
    assert rows["provider"][0] == "ok"
    assert rows["records"] == ("ok", "0 pending, none failed")
    assert exit_code(run_checks(app)) == 0


def test_embedder_down_fails_and_missing_vectors_warn(
    make_app: Callable[..., App], fake_openai: FakeOpenAI
) -> None:
    app = make_app(
        f'[model_api]\nbase_url = "{fake_openai.base_url}"\nembedding_model = "bow-64"\n'
    )
    fake_openai.mode = "error_503"
    app.memory.ingest_run(EXAMPLE.read_bytes())
    rows = by_name(app)
    assert rows["embeddings"][0] == "fail"
    assert rows["vectors"][0] == "warn" and rows["vectors"][1].startswith("1 episodes")
    assert exit_code(run_checks(app)) == 1


def test_cli_doctor_text_and_json(home: Path) -> None:
    write_config(home, '[model_api]\nembedding_model = ""\n')
    proc = run_cli(home, "doctor")
    assert "store" in proc.stdout and "FAIL" not in proc.stdout
    data = json.loads(run_cli(home, "doctor", "--json").stdout)
    assert {c["name"] for c in data["checks"]} >= {"configuration", "store", "provider"}


def test_agents_with_prompt_briefings_are_listed(make_app: Callable[..., App]) -> None:
    app = make_app(
        '[model_api]\nembedding_model = ""\n'
        "[agent.nightly]\nmemory_briefing = true\n[agent.quiet]\nmemory_record = true\n"
    )
    assert by_name(app)["prompt briefings"] == ("info", "memory_briefing is on for: nightly")


def test_the_capture_row_says_when_requests_are_read_by_the_rules_alone(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fleetmem.core import capture_learned, capture_weights

    app = make_app('[model_api]\nembedding_model = ""\n')
    capture_learned.default_model.cache_clear()
    assert by_name(app)["capture"] == ("ok", "rules and the learned second reading")
    monkeypatch.setattr(capture_weights, "SHA256", "0" * 64)
    capture_learned.default_model.cache_clear()
    try:
        status, detail = by_name(app)["capture"]
        assert status == "warn" and "rules only" in detail and "changed by hand" in detail
        assert exit_code(run_checks(app)) == 0  # a warning: memory still works
    finally:
        monkeypatch.undo()
        capture_learned.default_model.cache_clear()


def test_provider_rows_follow_state_and_outage_length() -> None:
    from fleetmem.service.doctor import _provider

    class NoUpstreams:
        class config:  # a stand-in for ConfigHolder
            current = None

    def row(provider: dict[str, object]) -> tuple[str, str]:
        check = _provider(NoUpstreams(), {"provider": provider}, wall=10_000.0)[0]
        return check.status, check.detail

    assert row({"name": "builtin", "state": "ok", "contract": 1})[0] == "ok"
    assert row({"name": "zep", "state": "incompatible", "reason": "contract 2"})[0] == "fail"
    assert row({"name": "zep", "state": "unavailable", "down_since": 9_900.0})[0] == "warn"
    status, detail = row({"name": "zep", "state": "unavailable", "down_since": 9_000.0})
    assert status == "fail" and "unreachable for 17 min" in detail
