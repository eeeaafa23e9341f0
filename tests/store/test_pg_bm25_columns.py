"""The PostgreSQL store scores a query's candidates column by column (numpy): every score is
the one the row-by-row sum gives, to the last bit, and the head it puts in order is the order
of sorting every candidate one by one. Random candidates, fresh each run (no server needed)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest

from fleetmem.store.postgres import text_index
from fleetmem.store.postgres.builtin_index import (
    _bm25_ranked,
    _checked,
    _head,
    _Postings,
    _rank,
)
from fleetmem.store.postgres.text_index import Phrase
from fleetmem.store.sqlite import builtin_index as fts5

Terms = list[tuple[str | None, str, float]]


def _row_by_row(
    rows: Sequence[tuple[int, int, int, int, int, float]],
    tokens: Sequence[str],
    in_phrases: Mapping[int, Mapping[str, float]],
    facts: Mapping[int, tuple[int, float]],
    terms: Terms,
    avgdl: float,
    cap: int,
) -> list[tuple[float, float, int]]:
    """The scoring as one Python sum per candidate (how the store scored before numpy)."""
    found: dict[int, dict[str, float]] = {}
    known = dict(facts)
    for erow, k, main, context, doc_len, started in rows:
        f = text_index.posting_frequency(main, context, fts5.CONTEXT_WEIGHT)
        found.setdefault(erow, {})[tokens[k - 1]] = f
        known[erow] = (doc_len, started)
    candidates = sorted(found.keys() | in_phrases.keys(), reverse=True)[:cap]
    k1, b = text_index.K1, text_index.B
    out = []
    for erow in candidates:
        doc_len, started = known[erow]
        norm = k1 * (1 - b + b * doc_len / avgdl) if avgdl > 0 else k1
        score = 0.0
        for token, text, weight in terms:
            hits = (
                found.get(erow, {}).get(token)
                if token is not None
                else in_phrases.get(erow, {}).get(text)
            )
            if hits:
                score += weight * (hits * (k1 + 1)) / (hits + norm)
        if score > 0:
            out.append((score, started, erow))
    return out


def _case(rng: random.Random) -> tuple[list, list[str], dict, dict, Terms, float, int]:
    tokens = sorted({"".join(rng.choices("abcdefgh", k=5)) for _ in range(rng.randint(1, 4))})
    erows = rng.sample(range(1, 5_000), rng.randint(1, 400))
    starts = [float(rng.choice(range(10))) for _ in range(5)]  # few starts: ties of start
    lengths = {e: rng.randint(1, 60) for e in erows}
    started = {e: rng.choice(starts) for e in erows}
    rows = []
    for erow in erows:
        for k in rng.sample(range(1, len(tokens) + 1), rng.randint(1, len(tokens))):
            # Few distinct counts: many candidates share a score exactly.
            main, context = rng.choice([(1, 0), (2, 0), (0, 1), (1, 2), (3, 1)])
            rows.append((erow, k, main, context, lengths[erow], started[erow]))
    rng.shuffle(rows)
    phrases = [f"{tokens[0]} {t}" for t in tokens[:2]]
    in_phrases: dict[int, dict[str, float]] = {}
    facts: dict[int, tuple[int, float]] = {}
    for erow in rng.sample(range(1, 6_000), rng.randint(0, 80)):
        in_phrases[erow] = {p: rng.choice([1.0, 2.0, 0.5, 1.5]) for p in phrases[:2]}
        facts[erow] = lengths.get(erow, rng.randint(1, 60)), started.get(erow, rng.choice(starts))
    terms: Terms = [(t, t, rng.choice([1e-6, 0.3, 1.7, rng.random() * 3])) for t in tokens]
    if rng.random() < 0.3:  # two phrases with one stem ("dogs", "dog"): each counted
        terms.append((tokens[0], tokens[0] + "s", 0.9))
    terms += [(None, p, rng.choice([1e-6, 2.2, rng.random() * 4])) for p in phrases]
    rng.shuffle(terms)
    avgdl = rng.choice([0.0, 12.5, rng.random() * 40 + 1])
    cap = rng.choice([4_000, 50, 7, 1])
    return rows, tokens, in_phrases, facts, terms, avgdl, cap


@pytest.mark.parametrize("case", range(40))
def test_column_scores_equal_the_row_by_row_sum_and_the_head_is_in_order(
    case: int, rng: random.Random
) -> None:
    seed = rng.randrange(1 << 30)
    rng = random.Random(seed)
    rows, tokens, in_phrases, facts, terms, avgdl, cap = _case(rng)
    limit = rng.choice([1, 8, 15, 60])
    expected = _row_by_row(rows, tokens, in_phrases, facts, terms, avgdl, cap)
    by_token = {t: k for k, t in enumerate(tokens, start=1)}
    found = _bm25_ranked(
        _Postings.of(rows), by_token, in_phrases, facts, terms, avgdl, cap, _head(limit)
    )
    ordered = len(found.head)
    ranked = found.head + found.rest()
    # The same candidates with the same scores, bit for bit.
    assert sorted(ranked, key=lambda s: s[2]) == sorted(expected, key=lambda s: s[2]), seed
    # The head: at least what was asked for (or everything), in the order of a full sort.
    assert ordered >= min(_head(limit), len(expected))
    keys = [_rank(s) for s in sorted(expected, key=_rank)]
    assert [_rank(s) for s in ranked[:ordered]] == keys[:ordered], seed
    # Everything after it ranks strictly below its last (no tie crosses the boundary), and
    # the rest, when asked for, comes in order too.
    if 0 < ordered < len(ranked):
        assert all(_rank(s) > _rank(ranked[ordered - 1]) for s in ranked[ordered:]), seed
    assert [_rank(s) for s in ranked] == keys, seed
    assert found.more == (len(ranked) > ordered)


def test_no_candidate() -> None:
    found = _bm25_ranked(_Postings.of([]), {}, {}, {}, [("a", "a", 1.0)], 3.0, 10, 64)
    assert found.head == [] and not found.more and found.rest() == []


def _checked_row_by_row(
    phrase: Phrase, tokens: Sequence[str], postings: Sequence[tuple]
) -> list[tuple[int, int, float, float]]:
    """A phrase checked one row at a time on sets of positions (how the store checked it
    before numpy)."""
    by_token: dict[str, dict[int, tuple]] = {t: {} for t in tokens}
    for row in postings:
        by_token[row[0]][row[1]] = row
    out = []
    for erow in sorted(by_token[tokens[0]], reverse=True):
        if not all(erow in by_token[t] for t in tokens[1:]):
            continue
        head = by_token[phrase.tokens[0]][erow]
        first = text_index.unpack_positions(head[5])
        starts = set(first)
        for k, t in enumerate(phrase.tokens[1:], start=1):
            starts &= {p - k for p in text_index.unpack_positions(by_token[t][erow][5])}
        main = head[4]
        f = sum(
            1.0 if i < main else fts5.CONTEXT_WEIGHT for i, at in enumerate(first) if at in starts
        )
        row = by_token[tokens[0]][erow]
        out.append((erow, row[2], row[3], float(f)))
    return out


@pytest.mark.parametrize("case", range(40))
def test_a_phrase_checked_at_once_is_checked_as_row_by_row(case: int, rng: random.Random) -> None:
    """Random documents over a small vocabulary (so phrases hit, repeat, overlap and fall in
    the context), random phrases of 2 to 4 tokens, some with a token twice."""
    seed = rng.randrange(1 << 30)
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choices("abcdef", k=3)) for _ in range(rng.randint(2, 5))]
    words = rng.choices(vocabulary, k=rng.randint(2, 4))
    phrase = Phrase(" ".join(words), tuple(words))
    distinct = list(dict.fromkeys(words))
    lead = rng.choice(distinct)
    tokens = [lead, *sorted(set(distinct) - {lead})]
    postings = []
    for erow in rng.sample(range(1, 10_000), rng.randint(1, 300)):
        length = rng.randint(1, 80)
        text = [rng.choice(vocabulary) for _ in range(length)]
        main_end = rng.randint(0, length)  # positions after it are the context's
        doc_len = length + rng.randint(0, 5)
        started = float(rng.randint(0, 5))
        for t in set(text) & set(distinct):
            if rng.random() < 0.1:
                continue  # a token some rows lack
            at = [p + 1 for p, w in enumerate(text) if w == t]
            main = sum(1 for p in at if p <= main_end)
            postings.append((t, erow, doc_len, started, main, text_index.pack_positions(at)))
    rng.shuffle(postings)
    expected = _checked_row_by_row(phrase, tokens, postings)
    assert _checked(phrase, tokens, postings) == expected, seed
