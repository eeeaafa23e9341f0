"""A record job whose holder died after the built-in index took the episode, before the job
was marked done (a kill -9 between the two commits), is finished by whoever claims it next,
without recording or summarizing the episode again (issue 20: no job runs twice)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import pytest

from fleetmem.service.bootstrap import App
from tests.conftest import make_record, session, sql_rows


def test_a_job_resumed_after_its_index_write_is_not_run_again(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app()
    marker = "zq" + secrets.token_hex(6)
    record = make_record(
        run_id=f"run-{secrets.token_hex(4)}",
        result_text=f"fixed the {marker} ledger test",
        sessions=[session()],
    )
    result = app.memory.ingest_run(record, process_now=False)
    assert result.episode_id is not None
    row = app.store.get_episode(result.episode_id)
    assert row is not None and row.episode is not None and row.text is not None
    # The dead daemon's half: the provider's write committed, the job never finished.
    provider = app.memory.provider
    provider.record(row.id, row.scope, row.trust_class, row.episode, row.text)
    assert app.store.job_counts() == {("record", "pending"): 1}

    writes: list[str] = []
    put = app.store.builtin_put

    def counted(episode_id: str, *args: Any, **kwargs: Any) -> None:
        writes.append(episode_id)
        put(episode_id, *args, **kwargs)

    monkeypatch.setattr(app.store, "builtin_put", counted)
    summaries: list[str] = []
    monkeypatch.setattr(app.memory, "_summarize", lambda r: summaries.append(r.id))

    assert app.memory.process_jobs() == {"record:ok": 1}
    assert writes == [] and summaries == []  # nothing done twice
    assert app.store.job_counts() == {}
    assert sql_rows(
        app.store,
        "SELECT provider, provider_id FROM provider_index WHERE episode_id = ?",
        (row.id,),
    ) == [("builtin", row.id)]
    found = app.memory.recall(f"{marker} ledger", scopes=[row.scope])
    assert [h.episode_id for h in found.items] == [row.id]


def test_a_new_job_is_recorded_once(make_app: Callable[..., App], monkeypatch: Any) -> None:
    app = make_app()
    writes: list[str] = []
    put = app.store.builtin_put

    def counted(episode_id: str, *args: Any, **kwargs: Any) -> None:
        writes.append(episode_id)
        put(episode_id, *args, **kwargs)

    monkeypatch.setattr(app.store, "builtin_put", counted)
    result = app.memory.ingest_run(
        make_record(run_id=f"run-{secrets.token_hex(4)}", sessions=[session()])
    )
    assert result.episode_id is not None and writes == [result.episode_id]
