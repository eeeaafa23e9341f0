"""A run id the run-record schema stores is accepted by every service that takes a run id:
the facts a run is served, its frozen context, and forgetting it. One past the bound is
refused by each, naming the field."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from fleetmem.core.labels import MAX_RUN_ID_CHARS
from fleetmem.errors import InvalidInput
from fleetmem.service.bootstrap import App
from tests.conftest import make_record, session

REPO = "github.com/acme/api"


def _ident(rng: random.Random, length: int) -> str:
    """A run id of ``length`` made like real ones: words, dates and counters joined by dashes
    and dots (no ``=`` or ``:``, which would make a random tail read as a key = secret)."""
    parts = ["run"]
    while sum(map(len, parts)) + len(parts) - 1 < length:
        parts.append(rng.choice(["api", "nightly", str(rng.randrange(10_000)), "fix.7", "b"]))
    return "-".join(parts)[:length].rstrip("-.").ljust(length, "x")


def test_the_longest_stored_run_id_is_served_frozen_and_forgotten(
    make_app: Callable[..., App], rng: random.Random
) -> None:
    app = make_app()
    run_id = _ident(rng, MAX_RUN_ID_CHARS)
    stored = app.memory.ingest_run(make_record(run_id=run_id, sessions=[session(repo=REPO)]))
    assert stored.episode_id is not None
    app.facts.facts_block(run_id=run_id, agent="coder", repo=REPO)
    context = app.files.assemble("coder", repo=REPO, run_id=run_id)
    assert context.text is not None
    assert app.files.run_loads(run_id)  # recorded under the whole id
    forgotten = app.memory.forget_run(run_id)
    assert len(forgotten.episodes) == 1


def test_one_character_past_the_bound_is_refused_by_each(
    make_app: Callable[..., App], rng: random.Random
) -> None:
    app = make_app()
    too_long = _ident(rng, MAX_RUN_ID_CHARS + 1)
    calls = (
        ("run_id", lambda: app.facts.facts_block(run_id=too_long, agent="coder", repo=REPO)),
        ("run_id", lambda: app.files.assemble("coder", repo=REPO, run_id=too_long)),
        ("run", lambda: app.memory.forget_run(too_long)),
    )
    for field, call in calls:
        with pytest.raises(InvalidInput) as caught:
            call()
        assert caught.value.field == field
        assert str(MAX_RUN_ID_CHARS) in str(caught.value)
