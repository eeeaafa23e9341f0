"""Recall over any number of scopes: checked once, asked two at a time, merged.

The end-to-end tests go through the real composition root: the built-in provider behind its
MCP server and circuit breaker, over real SQLite.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from fleetmem.errors import InvalidInput
from fleetmem.providers.base import ProviderItem, ProviderRecall
from fleetmem.service.bootstrap import App
from fleetmem.service.memory import MemoryService
from fleetmem.service.recall_scopes import (
    MAX_RECALL_SCOPES,
    PROVIDER_MAX_SCOPES,
    check_scopes,
    groups,
    merge,
)
from tests.conftest import ingest_text


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(9))


# ---- checking -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("scopes", "why"),
    [
        ("project:github.com/acme/api", "must be a list"),
        (["agent:coder"], "only in project:<repo> scopes"),
        (["workspace"], "only in project:<repo> scopes"),
        (["project:"], "scope"),
        (["project:https://github.com/acme/api"], "not a URL"),
        (["project:github.com/acme/api", 7], "must be a string"),
        (["project:a/../b"], "'.' or '..'"),
    ],
)
def test_a_bad_scope_list_is_an_error_naming_scopes(scopes: Any, why: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_scopes(scopes)
    assert caught.value.field == "scopes"
    assert why in str(caught.value)


def test_too_many_scopes_is_an_error_and_repeats_are_dropped() -> None:
    with pytest.raises(InvalidInput, match="at most"):
        check_scopes([f"project:h/o/r{i}" for i in range(MAX_RECALL_SCOPES + 1)])
    assert check_scopes(["project:h/a", "project:h/b", "project:h/a"]) == [
        "project:h/a",
        "project:h/b",
    ]


def test_groups_respect_the_contract_limit(rng: random.Random) -> None:
    scopes = [f"project:h/{_word(rng)}" for _ in range(rng.randrange(3, 30))]
    split = groups(scopes)
    assert all(1 <= len(g) <= PROVIDER_MAX_SCOPES for g in split)
    assert [s for g in split for s in g] == scopes


# ---- merging ----------------------------------------------------------------------------------
def test_scored_answers_merge_by_score_and_unscored_ones_interleave() -> None:
    a = [ProviderItem("a1", "x", 0.9), ProviderItem("a2", "x", 0.2)]
    b = [ProviderItem("b1", "x", 0.5), ProviderItem("a1", "x", 0.4)]
    assert [i.id for i in merge([a, b], 10)] == ["a1", "b1", "a2"]
    assert [i.id for i in merge([a, b], 2)] == ["a1", "b1"]
    c = [ProviderItem("c1", "x"), ProviderItem("c2", "x")]
    assert [i.id for i in merge([a, c], 10)] == ["a1", "c1", "a2", "c2"]


# ---- through the service ------------------------------------------------------------------------
def _fleet(app: App, repos: int, rng: random.Random) -> tuple[list[str], dict[str, str]]:
    """One run per repository, each about its own random word; scopes and word -> episode."""
    scopes, by_word = [], {}
    for n in range(repos):
        repo = f"github.com/acme/r{n}-{_word(rng)}"
        word = _word(rng)
        eid = ingest_text(
            app.memory,
            f"run-{n}",
            f"2026-11-0{1 + n % 9}T10:00:00Z",
            f"fixed the {word} failure in the parser",
            repo=repo,
        )
        scopes.append(f"project:{repo}")
        by_word[word] = eid
    return scopes, by_word


def test_recall_over_many_scopes_finds_every_repository(
    make_app: Callable[..., App], rng: random.Random
) -> None:
    app = make_app()
    scopes, by_word = _fleet(app, rng.randrange(5, 9), rng)
    app.memory.process_jobs()
    breaker = app.providers.provider("builtin").breaker
    for word, eid in by_word.items():
        result = app.memory.recall(word, scopes=scopes, limit=5)
        assert result.degraded is None
        assert result.items and result.items[0].episode_id == eid
    # A word every run holds finds one run per repository, each from its own scope.
    every = app.memory.recall("parser failure", scopes=scopes, limit=20)
    assert {h.episode_id for h in every.items} == set(by_word.values())
    assert breaker.state == "closed"


def test_callers_mistakes_never_reach_the_provider_or_its_breaker(
    make_app: Callable[..., App],
    rng: random.Random,
) -> None:
    app = make_app()
    scopes, by_word = _fleet(app, 3, rng)
    app.memory.process_jobs()
    breaker = app.providers.provider("builtin").breaker
    for _ in range(8):  # more than the breaker's threshold of consecutive failures
        with pytest.raises(InvalidInput) as caught:
            app.memory.recall("parser", scopes=[*scopes, "agent:coder"])
        assert caught.value.field == "scopes"
        with pytest.raises(InvalidInput):
            app.memory.recall("parser", scopes=scopes[0])
    assert breaker.state == "closed"
    word, eid = next(iter(by_word.items()))
    assert app.memory.recall(word, scopes=scopes).items[0].episode_id == eid


class _HalfBroken:
    """A provider whose calls fail for one scope: the boundary we cannot break for real."""

    name = "builtin"

    def __init__(self, inner: Any, broken: str) -> None:
        self.inner, self.broken, self.calls = inner, broken, []  # type: ignore[var-annotated]

    def recall(
        self, query: str, scopes: Sequence[str], limit: int, paths: Sequence[str]
    ) -> ProviderRecall:
        self.calls.append(list(scopes))
        if self.broken in scopes:
            raise ConnectionError("upstream went away")
        answer: ProviderRecall = self.inner.recall(query, scopes, limit, paths)
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_failing_group_degrades_the_answer_but_keeps_the_others(
    make_app: Callable[..., App],
    rng: random.Random,
) -> None:
    app = make_app()
    scopes, by_word = _fleet(app, 6, rng)
    app.memory.process_jobs()
    provider = _HalfBroken(app.providers.builtin, scopes[0])
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    try:
        result = memory.recall("parser failure", scopes=scopes, limit=20)
    finally:
        memory.close()
    assert all(len(c) <= PROVIDER_MAX_SCOPES for c in provider.calls)
    assert len(provider.calls) == 3
    assert result.degraded == "provider_unavailable"
    found = {h.episode_id for h in result.items}
    lost = {by_word[w] for w in by_word if by_word[w] not in found}
    assert len(found) == 4 and len(lost) == 2


# ---- the operator's recall everywhere ------------------------------------------------------------
def test_operator_recall_across_every_repository(
    make_app: Callable[..., App], rng: random.Random
) -> None:
    from fleetmem.service.agent_memory import EVERY_REPO
    from fleetmem.surfaces.http.memory_routes import _recall

    app = make_app()
    scopes, by_word = _fleet(app, rng.randrange(4, 8), rng)
    app.memory.process_jobs()
    assert app.memory.scopes_for(every_repo=True) == sorted(scopes)
    word, eid = rng.choice(list(by_word.items()))
    found = app.agent_memory.operator_recall(word, every_repo=True)
    assert found.repo == EVERY_REPO
    assert [h.episode_id for h in found.episodes.items] == [eid]
    with pytest.raises(InvalidInput, match="every_repo"):
        app.memory.scopes_for(repo="github.com/acme/api", every_repo=True)
    # The API route: all_repos is one of the three ways to scope, and only a boolean.
    data = _recall(app, {"query": word, "all_repos": True})
    assert [i["episode_id"] for i in data["items"]] == [eid]
    for bad, field in (
        ({"query": word, "all_repos": "yes"}, "all_repos"),
        ({"query": word, "all_repos": True, "repo": "github.com/acme/api"}, "repo"),
    ):
        with pytest.raises(InvalidInput) as caught:
            _recall(app, bad)
        assert caught.value.field == field


def test_cli_recall_all_repos(home: Any, rng: random.Random) -> None:
    from tests.conftest import make_record, session, write_config
    from tests.surfaces.cli_helpers import run_cli, run_json

    write_config(home, '[model_api]\nembedding_model = ""\n')
    words = {}
    for n in range(3):
        word = _word(rng)
        record = make_record(
            run_id=f"cli-{n}",
            result_text=f"the {word} job timed out",
            sessions=[session(repo=f"github.com/acme/cli{n}")],
        )
        path = home / f"run{n}.json"
        path.write_text(json.dumps(record), encoding="utf-8")
        words[word] = run_json(home, "runs", "ingest", str(path))["episode_id"]
    word, eid = rng.choice(list(words.items()))
    found = run_json(home, "recall", word, "--all-repos")
    assert [i["episode_id"] for i in found["items"]] == [eid]
    both = run_cli(home, "recall", word, "--all-repos", "--repo", "a/b", check=False)
    assert both.returncode == 2
