"""With the real offline model: a question put in other words is ranked by meaning, a question
about nothing the store holds is answered with nothing, and the word channel's coverage reads
as documented."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from fleetmem.core.textquery import fts_match
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions
from fleetmem.service.bootstrap import App
from fleetmem.service.memory import MemoryService
from tests.conftest import ingest_text

API = "github.com/acme/api"
SCOPE = f"project:{API}"
#: (what a run did, a question about it that shares no content word with it).
TARGETS = (
    (
        "Replaced the hand-rolled date parser with the standard library",
        "stop using our homemade timestamp parsing code",
    ),
    (
        "Made the CSV export stream rows instead of building the whole file in memory",
        "spreadsheet download used too much RAM for big accounts",
    ),
    (
        "Timezone bug: reports used server local time instead of UTC",
        "daily summaries showed wrong hours for users abroad",
    ),
)
#: Routine runs that share a common word of a question ("code", "using", "download", "big",
#: "site", "reference", "daily", "wrong"...) but not its meaning: what BM25 ranks for a
#: paraphrase.
ROUTINE = (
    "Code owners file now lists the platform team",
    "Using the shared lint preset in every package",
    "Stop words list for the search box extended",
    "Updated the download mirror list for the docs build",
    "Split the big settings module into smaller ones",
    "Accounts page copy edits from the design review",
    "Site footer shows the build number",
    "Reference counting in the cache map fixed",
    "Generation of the changelog moved to the release job",
    "Daily standup notes template moved to the wiki",
    "Fixed a wrong variable name in the lint script",
    "Working hours added to the team handbook",
    "Users guide screenshots refreshed",
)
#: Filler runs, so the questions' common words are as common as in a store in use (in a
#: store of twenty runs every word is rare, and one shared word covers a short question).
FILLER_VERBS = ("Refactored", "Added tests for", "Profiled", "Documented", "Cleaned up")
FILLER_AREAS = ("auth service", "search index", "CI pipeline", "admin dashboard", "importer")
FILLER_NOTES = (
    "docs updated",
    "code reviewed by two people",
    "site preview checked",
    "some tests skipped on CI",
    "final review by the lead",
    "users notified in the channel",
    "pages of the wiki linked",
    "nothing was missing from the changelog",
    "the listing of flags was sorted",
    "daily build stayed green",
    "hours of flaky runs saved",
    "download links checked",
    "a bump of the minor version",
    "no wrong turns this time",
    "big diff, small change",
)


def _filler(rng: random.Random) -> str:
    verb, area, note = rng.choice(FILLER_VERBS), rng.choice(FILLER_AREAS), rng.choice(FILLER_NOTES)
    return f"{verb} the {area}; {note}."


UNRELATED = (
    "chocolate cake recipe",
    "how tall is mount everest",
    "guitar chords for beginners",
    "best hiking trails in the alps",
    "history of the roman empire",
    "tips for growing tomatoes",
)


def _fill(memory: MemoryService, rng: random.Random) -> dict[str, str]:
    """Targets and routine runs in a random order on random days; text -> episode id."""
    fillers: set[str] = set()
    while len(fillers) < 60:
        fillers.add(_filler(rng))
    texts = [t for t, _ in TARGETS] + list(ROUTINE) + sorted(fillers)
    rng.shuffle(texts)
    ids = {}
    for n, text in enumerate(texts):
        at = (
            f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T{n // 60:02d}:{n % 60:02d}:00Z"
        )
        ids[text] = ingest_text(memory, f"r{n}", at, text, branch=f"b{n}")
    return ids


def _found(memory: MemoryService, query: str) -> list[str]:
    return [h.episode_id for h in memory.recall(query, scopes=[SCOPE], limit=10).items]


@pytest.fixture
def filled(make_app: Callable[..., App]) -> tuple[App, dict[str, str]]:
    app = make_app("")  # the default offline embedder
    return app, _fill(app.memory, random.Random())


def test_a_question_in_other_words_is_ranked_by_meaning(
    filled: tuple[App, dict[str, str]],
) -> None:
    # Each target is the model's own first choice (checked first, so a failure says whether
    # the model or the fusion lost it); the fusion must not let the routine runs that share
    # a common word with the question outrank it.
    app, ids = filled
    embedder = app.memory.provider.embedder
    assert embedder is not None
    for text, question in TARGETS:
        vector = embedder.embed([question])[0]
        by_meaning = app.store.search_vector(vector, embedder.model_id, [SCOPE], 1)
        assert by_meaning[0][0] == ids[text], f"the model ranks another run first: {question}"
        assert _found(app.memory, question)[0] == ids[text], question


def test_trusting_every_word_match_buries_the_paraphrase(
    filled: tuple[App, dict[str, str]],
) -> None:
    # The same store with the word channel trusted whatever it covers: routine runs that
    # share a common word with the question push its target down (what the trust prevents).
    app, ids = filled
    assert app.memory.provider.embedder is not None
    provider = BuiltinProvider(
        app.store, app.memory.provider.embedder, RankingOptions(words_low=0.0, words_high=0.0)
    )
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    try:
        firsts = [_found(memory, q)[0] == ids[t] for t, q in TARGETS]
    finally:
        memory.close()
    assert not all(firsts)


def test_a_question_about_nothing_held_is_answered_with_nothing(
    filled: tuple[App, dict[str, str]],
) -> None:
    app, _ = filled
    answered = [q for q in UNRELATED if _found(app.memory, q)]
    assert answered == []


def test_a_word_match_that_covers_the_question_is_answered_whatever_its_meaning(
    make_app: Callable[..., App],
) -> None:
    # An error code means nothing to a sentence model; asked for, it is still found.
    app = make_app("")
    rng = random.Random()
    code = f"E{rng.randrange(10_000, 99_999)}"
    eid = ingest_text(app.memory, "r1", "2026-11-20T10:00:00Z", f"Ledger import stopped: {code}")
    ingest_text(app.memory, "r2", "2026-11-21T10:00:00Z", "Renamed the CI workflow file.")
    assert _found(app.memory, code)[0] == eid


def test_coverage_reads_how_much_of_the_query_a_match_holds(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    rng = random.Random()
    rare = [f"zq{rng.randrange(10**6)}x" for _ in range(3)]
    whole = ingest_text(app.memory, "r1", "2026-11-20T10:00:00Z", " ".join(rare), branch="b1")
    part = ingest_text(app.memory, "r2", "2026-11-20T11:00:00Z", rare[0], branch="b2")
    for n in range(8):
        ingest_text(app.memory, f"f{n}", f"2026-11-2{n}T12:00:00Z", "routine work", branch="c")
    match = fts_match(" ".join(rare))
    assert match is not None
    hits = dict(app.store.search_text_scored(match, [SCOPE], 10))
    assert set(hits) == {whole, part}
    assert 0.8 < hits[whole] < 1.5  # each word once, about a whole share
    assert abs(hits[part] * 3 - hits[whole]) < 0.35 * hits[whole]  # one word of three
    # A query word no run holds still counts: the same match covers less of a longer query.
    longer = fts_match(" ".join([*rare, f"absent{rng.randrange(10**6)}"]))
    assert longer is not None
    wider = dict(app.store.search_text_scored(longer, [SCOPE], 10))
    assert wider[whole] < 0.85 * hits[whole]
    assert app.store.search_text(match, [SCOPE], 10) == [i for i, _ in hits.items()]
