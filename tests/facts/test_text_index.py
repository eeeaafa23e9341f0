"""The store's literal-search index finds exactly what testing every body one by one finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fleetmem.store.fact_text_index import FactTextIndex, IndexedFact
from fleetmem.store.facts import SearchRow

# A tiny alphabet, so terms occur inside words, across word boundaries and many times a body.
TEXT = st.text(alphabet="ab c", min_size=0, max_size=12).map(lambda s: " ".join(s.split()))
TERM = st.text(alphabet="abc", min_size=1, max_size=3)
STATUSES = ("active", "evidence", "forgotten")
SCOPES = ("workspace", "agent:x")


def reference(
    facts: list[IndexedFact],
    statuses: set[str],
    scopes: set[str] | None,
    ids: list[str],
    phrase: str,
    words: list[str],
    worded: list[str],
) -> list[SearchRow]:
    """The definition, body by body (as the store did before the index)."""
    out = []
    for f in facts:
        if f.status not in statuses or (scopes is not None and f.scope not in scopes):
            continue
        literal = None
        if phrase and phrase in f.norm:
            literal = "phrase"
        elif words and all(w in f.norm for w in words):
            literal = "words"
        if literal is None and f.id not in ids and f.id not in worded:
            continue
        found = len(words) if literal == "words" else sum(w in f.norm for w in words)
        if literal is None and f.id not in ids and not found:
            continue
        out.append(SearchRow(f.id, f.content_hash, f.created_at, literal, found))
    return out


@settings(max_examples=300, deadline=None)
@given(
    bodies=st.lists(
        st.tuples(TEXT, st.sampled_from(STATUSES), st.sampled_from(SCOPES)), max_size=12
    ),
    phrase=st.one_of(st.just(""), TERM),
    words=st.lists(TERM, max_size=3, unique=True),
    picks=st.lists(st.integers(0, 15), max_size=6),
    worded_picks=st.lists(st.integers(0, 15), max_size=6),
    only_workspace=st.booleans(),
)
def test_the_index_matches_the_body_by_body_definition(
    bodies: list[tuple[str, str, str]],
    phrase: str,
    words: list[str],
    picks: list[int],
    worded_picks: list[int],
    only_workspace: bool,
) -> None:
    facts = [
        IndexedFact(f"f_{i}", norm, f"h{i}", float(i), status, scope)
        for i, (norm, status, scope) in enumerate(bodies)
    ]
    ids = [f"f_{i}" for i in picks]  # some name no fact: they are ignored
    worded = [f"f_{i}" for i in worded_picks]
    statuses = {"active", "evidence"}
    scopes = {"workspace"} if only_workspace else None
    index = FactTextIndex(facts)
    got = index.search_rows(
        statuses, scopes, ids=ids, phrase=phrase, words=words, ids_if_worded=worded
    )
    assert got == reference(facts, statuses, scopes, ids, phrase, words, worded)


def test_a_term_never_matches_across_two_facts() -> None:
    index = FactTextIndex(
        [
            IndexedFact("f_1", "ends with ab", "h1", 1.0, "active", "workspace"),
            IndexedFact("f_2", "cd starts this one", "h2", 2.0, "active", "workspace"),
        ]
    )
    assert index.containing("ab") == {0}
    assert index.containing("abcd") == set()
    assert index.containing("ab cd") == set()
    assert index.containing("one") == {1}
