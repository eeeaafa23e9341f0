"""Query text to FTS5 MATCH, and the pruning of phrases too common to be worth scoring."""

from __future__ import annotations

from fleetmem.core.textquery import fts_match, match_phrases, or_match, prune_common


def test_match_phrases_reads_back_what_fts_match_built() -> None:
    match = fts_match('why does "tests/auth" NEAR fail? say "hi"')
    assert match is not None
    assert match_phrases(match) == ["tests", "auth", "near", "fail", "say", "hi"]
    assert or_match(match_phrases(match)) == match


def test_or_match_quotes_embedded_quotes_and_refuses_nothing() -> None:
    assert or_match(['a"b', "c"]) == '"a""b" OR "c"'
    assert match_phrases('"a""b" OR "c"') == ['a"b', "c"]
    assert or_match([]) is None


def test_prune_keeps_every_phrase_below_the_floor() -> None:
    counts = {"ledger": 900, "flaky": 950, "test": 990}
    # 1,000 documents, floor 2,000: a small store ranks with every word (exact BM25).
    assert prune_common(counts, 1_000, share=0.05, floor=2_000) == ["ledger", "flaky", "test"]


def test_prune_drops_common_phrases_on_a_large_store() -> None:
    counts = {"ledger": 40, "test": 60_000, "flaky": 4_000, "py": 90_000}
    kept = prune_common(counts, 100_000, share=0.05, floor=2_000)
    assert kept == ["ledger", "flaky"]  # cap is 5,000 documents; query order is kept


def test_prune_never_drops_every_phrase_that_occurs() -> None:
    counts = {"test": 60_000, "py": 90_000, "src": 70_000}
    assert prune_common(counts, 100_000, share=0.05, floor=2_000) == ["test"]


def test_prune_drops_phrases_found_nowhere() -> None:
    assert prune_common({"zyzzyva": 0, "ledger": 3}, 10, share=0.5, floor=0) == ["ledger"]
    assert prune_common({"zyzzyva": 0}, 10, share=0.5, floor=0) == []
