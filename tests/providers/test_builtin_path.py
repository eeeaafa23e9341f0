"""The built-in provider is reached over MCP (in-process), like any upstream (seed 000 REQ-11)."""

from __future__ import annotations

from collections.abc import Callable

from fleetmem import metrics
from fleetmem.providers.mcp_provider import McpEpisodeProvider
from fleetmem.service.bootstrap import App
from tests.conftest import make_record

SCOPE = "project:github.com/acme/api"


def test_recall_goes_through_the_mcp_client_and_the_index_filter(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    episode_id = app.memory.ingest_run(make_record()).episode_id
    provider = app.providers.provider("builtin")
    assert isinstance(provider, McpEpisodeProvider)
    assert provider.transport == "in-process"
    sent = provider.session.calls
    result = app.memory.recall("settlement fixture", scopes=[SCOPE])
    assert [h.episode_id for h in result.items] == [episode_id]
    assert provider.session.calls == sent + 1  # one memory_recall over MCP, no fast path

    # The built-in provider's answers pass the same index filter as an upstream's: an
    # episode whose index row is gone is dropped even though the built-in index has it.
    with app.store.transaction() as conn:
        conn.execute("DELETE FROM provider_index WHERE episode_id = ?", (episode_id,))
    before = metrics.sample(
        "fleetmem_results_dropped_total", {"provider": "builtin", "reason": "unknown_id"}
    )
    result = app.memory.recall("settlement fixture", scopes=[SCOPE])
    assert result.items == () and result.dropped == {"unknown_id": 1}
    after = metrics.sample(
        "fleetmem_results_dropped_total", {"provider": "builtin", "reason": "unknown_id"}
    )
    assert after == before + 1


def test_builtin_passes_every_check_without_touching_the_real_store(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    app.memory.ingest_run(make_record())
    before = (app.store.episode_counts(), app.store.run_status_counts())
    report = app.providers.check()
    assert report.provider == "builtin" and report.transport == "in-process"
    assert [c.outcome for c in report.checks] == ["pass"] * 7, report.checks
    assert (report.recorded, report.forgotten, report.cleanup_failed) == (1, 1, 0)
    # Synthetic episodes never enter the index (nor the store).
    assert (app.store.episode_counts(), app.store.run_status_counts()) == before
    rows = app.store.db.conn.execute(
        "SELECT count(*) FROM provider_index WHERE scope LIKE 'project:conformance.invalid/%'"
    ).fetchone()
    assert rows[0] == 0


def test_status_reports_the_builtin_contract(make_app: Callable[..., App]) -> None:
    app = make_app()
    provider = app.memory.status()["provider"]
    assert provider["state"] == "ok" and provider["contract"] == 1
    assert provider["implementation"]["name"] == "fleetmem-builtin"
    assert metrics.REGISTRY.get_sample_value("fleetmem_provider_up", {"provider": "builtin"}) == 1
