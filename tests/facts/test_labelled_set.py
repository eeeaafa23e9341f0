"""The labelled paraphrase set that calibrates fact search is what it claims to be."""

from __future__ import annotations

import re
from collections import Counter

from fleetmem.core.facts import KINDS, clean_body, find_source
from fleetmem.core.textquery import STOPWORDS
from tests.facts.conftest import labelled


def stems(text: str) -> set[str]:
    """Content words, folded to a crude stem (first five letters, or the word minus a common
    suffix), so that 'deploys' and 'deployed' count as one word."""
    out = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in STOPWORDS or len(word) < 2:
            continue
        out.add(word[:5] if len(word) > 5 else re.sub(r"(ies|es|s|ed|ing)$", "", word) or word)
    return out


def test_sizes() -> None:
    data = labelled()
    assert len(data["facts"]) >= 150
    assert len(data["queries"]) >= 50
    assert len(data["negatives"]) >= 10 and len(data["duplicates"]) >= 10


def test_every_fact_is_a_valid_fact() -> None:
    data = labelled()
    ids = Counter(f["id"] for f in data["facts"])
    assert max(ids.values()) == 1
    bodies = Counter(f["body"] for f in data["facts"])
    assert max(bodies.values()) == 1
    for fact in data["facts"]:
        assert fact["kind"] in KINDS
        assert clean_body(fact["body"]) == fact["body"]  # no secret, within 500 characters
        if fact["kind"] == "reference":
            assert find_source(fact["body"]) is not None, fact


def test_queries_share_no_content_word_with_their_fact() -> None:
    data = labelled()
    facts = {f["id"]: f["body"] for f in data["facts"]}
    targets = [q["fact"] for q in data["queries"]]
    assert len(set(targets)) == len(targets)  # one query per fact
    for q in data["queries"]:
        shared = stems(q["query"]) & stems(facts[q["fact"]])
        assert not shared, (q, shared)


def test_the_stemmer_would_notice_a_shared_word() -> None:
    assert stems("deploys are frozen") & stems("we deployed on Friday")
    assert not stems("how long before shipping") & stems("delivery dates")


def test_duplicates_point_at_facts() -> None:
    data = labelled()
    facts = {f["id"] for f in data["facts"]}
    assert all(d["fact"] in facts for d in data["duplicates"])
