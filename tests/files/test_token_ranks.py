"""Counting from the ranks on disk: the tokenizer's counts exactly, on any text, without
loading it; a file that cannot be trusted is never used."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
import unicodedata
import uuid
from pathlib import Path

import pytest

from fleetmem import token_ranks
from fleetmem.token_counts import CachedTokenizer
from fleetmem.token_ranks import RankCounter, build, open_counter
from fleetmem.tokenize import get_tokenizer

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "src" / "fleetmem" / "service" / "memory.py", ROOT / "docs" / "facts.md"]
WHITESPACE = [" ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "\u2028", "\x0b", "\n\n  "]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ranks") / "o200k-ranks.sqlite3"
    assert build(path, get_tokenizer().encoding)
    return path


def _codepoint(rng: random.Random) -> str:
    """Any scalar value, weighted towards what text holds: ASCII, Latin, other scripts,
    symbols and emoji, marks, and the rest of the planes (unassigned ones included)."""
    ranges = [(0x20, 0x7E), (0xA0, 0x24F), (0x300, 0x36F), (0x370, 0x10FF), (0x1100, 0x2FFF),
              (0x3000, 0x9FFF), (0xAC00, 0xD7A3), (0xE000, 0xFFFD), (0x1F000, 0x1FAFF),
              (0x10000, 0x10FFFF)]  # fmt: skip
    low, high = rng.choice(ranges)
    return chr(rng.randint(low, high))


def _text(rng: random.Random, corpus: list[str]) -> str:
    kind = rng.randrange(4)
    if kind == 0:  # a slice of real prose or code
        source = rng.choice(corpus)
        start = rng.randrange(len(source))
        return source[start : start + rng.randint(1, 600)]
    if kind == 1:  # any characters
        return "".join(_codepoint(rng) for _ in range(rng.randint(1, 80)))
    if kind == 2:  # words, numbers and ids between whitespace of every kind
        words = [rng.choice(["the", "Fix", "CAPS", "it's", "WE'LL", "x", "/path", "..."]),
                 str(rng.randrange(10**rng.randint(1, 9))), uuid.uuid4().hex[: rng.randint(1, 32)],
                 rng.choice(["naïve", "日本語", "👍🏽", "e\u0301", "Straße", "ǅ"])]  # fmt: skip
        return "".join(
            rng.choice(words) + rng.choice(WHITESPACE) for _ in range(rng.randint(1, 30))
        )
    # a run line as a session's context shows it, with fresh values
    return (
        f"- claude-code live since 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z on branch "
        f"feat/{uuid.uuid4().hex[:8]} (run claude-{uuid.uuid4()})"
    )


def test_counts_are_the_tokenizers_on_fresh_random_text(ranks: Path, rng: random.Random) -> None:
    real = get_tokenizer()
    corpus = [p.read_text(encoding="utf-8") for p in SOURCES]
    counter = open_counter(ranks)
    assert counter is not None
    texts = [_text(rng, corpus) for _ in range(3000)] + ["", "\ud800 lone surrogate"]
    counted = [(t, counter.count(t), real.count(t)) for t in texts]
    assert [row for row in counted if row[1] is not None and row[1] != row[2]] == []
    # Left to the tokenizer only when a character is one Python's Unicode tables do not know.
    left = [t for t, mine, _ in counted if mine is None]
    assert all(any(unicodedata.category(c) == "Cn" for c in t) for t in left)
    assert len(left) < len(texts) / 4
    # Whole files too, through a fresh counter (nothing remembered from the texts above).
    fresh = open_counter(ranks)
    assert fresh is not None
    assert [fresh.count(s) for s in corpus] == [real.count(s) for s in corpus]


def test_every_character_python_knows_is_classed_as_the_tokenizer_classes_it(
    ranks: Path, rng: random.Random
) -> None:
    """A sample of all assigned code points (all 282,230 agreed when this was written, in
    12 s): each in the contexts where its class decides the split (after a letter, between
    digits, doubled before a lowercase letter, after a line break, before a contraction)."""
    real = get_tokenizer()
    counter = open_counter(ranks)
    assert counter is not None
    assigned = (c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    sample = rng.sample([c for c in assigned if unicodedata.category(chr(c)) != "Cn"], 20_000)
    probes = [f"x{c}:R 1{c}2 {c}{c}a\n{c}A'S {c}\n" for c in map(chr, sample)]
    assert [p for p in probes if counter.count(p) != real.count(p)] == []


def test_a_character_unknown_to_python_is_counted_by_the_tokenizer(
    ranks: Path, tmp_path: Path
) -> None:
    unknown = "\u058b:R"  # unassigned in Unicode 14 and 16; the regex package knows it
    assert unicodedata.category("\u058b") == "Cn"
    counter = open_counter(ranks)
    assert counter is not None
    assert counter.count(unknown) is None
    cache = CachedTokenizer(tmp_path / "counts.sqlite3", ranks=ranks)
    assert cache.count(unknown) == get_tokenizer().count(unknown) == 4


def test_a_file_for_other_versions_or_broken_is_not_used(ranks: Path, tmp_path: Path) -> None:
    stale = tmp_path / "stale.sqlite3"
    stale.write_bytes(ranks.read_bytes())
    with sqlite3.connect(stale) as db:
        db.execute("UPDATE meta SET value = 'o200k_base;quicktok-v1=0.0.1;regex=1'")
    assert open_counter(stale) is None
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(b"not a database" * 100)
    assert open_counter(broken) is None
    assert open_counter(tmp_path / "missing.sqlite3") is None


class _Disagreeing:
    """The real encoding, except that it counts one token more than there are."""

    def __init__(self) -> None:
        self._real = get_tokenizer().encoding

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def count(self, text: str) -> int:
        return int(self._real.count(text)) + 1


def test_a_file_that_counts_differently_from_the_tokenizer_is_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "o200k-ranks.sqlite3"
    assert not build(path, _Disagreeing())
    assert open_counter(path) is None
    # Only the verdict is kept (no ranks, no temporary file), so that no process spends the
    # 0.5 s on writing it again until a version changes.
    assert list(tmp_path.iterdir()) == [path] and path.stat().st_size < 64 * 1024
    assert token_ranks.settled(path)

    def refuse(*_: object) -> bool:
        raise AssertionError("the ranks were written again")

    monkeypatch.setattr(token_ranks, "build", refuse)
    cache = CachedTokenizer(tmp_path / "counts.sqlite3", ranks=path)
    assert cache.count("counted by the tokenizer") == get_tokenizer().count(
        "counted by the tokenizer"
    )


def test_the_first_process_writes_the_file_and_the_next_counts_without_the_tokenizer(
    tmp_path: Path, rng: random.Random
) -> None:
    counts, ranks = tmp_path / "counts.sqlite3", tmp_path / "o200k-ranks.sqlite3"
    first = CachedTokenizer(counts, ranks=ranks)
    assert first.count("the first text") == get_tokenizer().count("the first text")
    first.close()
    assert ranks.is_file()
    texts = [_text(rng, [SOURCES[1].read_text(encoding="utf-8")]) for _ in range(300)]
    # Characters Python's Unicode tables know (the others are the tokenizer's: above).
    texts = [t for t in texts if all(unicodedata.category(c) != "Cn" for c in t)]
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from fleetmem import tokenize\n"
        "from fleetmem.token_counts import CachedTokenizer\n"
        "cache = CachedTokenizer(Path(sys.argv[1]), ranks=Path(sys.argv[2]))\n"
        "counts = [cache.count(t) for t in json.loads(sys.stdin.read())]\n"
        "print(json.dumps({'counts': counts, 'loaded': tokenize.loaded()}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(counts), str(ranks)],
        input=json.dumps(texts), capture_output=True, text=True, cwd=ROOT, timeout=120,
        check=True,
    )  # fmt: skip
    answer = json.loads(done.stdout)
    assert answer["loaded"] is False
    real = get_tokenizer()
    assert answer["counts"] == [real.count(t) for t in texts]


def test_a_text_too_long_for_the_ranks_is_counted_by_the_tokenizer(
    ranks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("fleetmem.token_counts.RANKS_MAX_CHARS", 10)
    used: list[str] = []
    monkeypatch.setattr(RankCounter, "count", lambda self, text: used.append(text) or 0)
    monkeypatch.setattr("fleetmem.token_counts.loaded", lambda: False)
    cache = CachedTokenizer(tmp_path / "counts.sqlite3", ranks=ranks)
    long_text = "a sentence longer than ten characters"
    assert cache.count(long_text) == get_tokenizer().count(long_text)
    assert cache.count("short") == 0  # from the (patched) ranks counter
    assert used == ["short"]


def test_check_corpus_covers_what_the_pre_tokenizer_tells_apart() -> None:
    import regex

    pieces = {p for t in token_ranks.check_corpus() for p in regex.findall(token_ranks.PATTERN, t)}
    kinds = {
        "cased word": any(p[:1].isupper() and p[1:].islower() for p in pieces),
        "contraction": any(p.lower().endswith(("'s", "'re", "'ll", "'d")) for p in pieces),
        "digits": any(p.isdigit() and len(p) == 3 for p in pieces),
        "punctuation with a line break": any(
            p.rstrip("\r\n/") != p and not p.isspace() for p in pieces
        ),
        "line breaks": any(p.strip(" ") == "\n" for p in pieces),
        "trailing whitespace": any(p.isspace() and "\n" not in p for p in pieces),
        "caseless script": any("\u3040" <= p.strip()[:1] <= "\u9fff" for p in pieces if p.strip()),
        "marks": any("\u0300" <= c <= "\u036f" for p in pieces for c in p),
    }
    assert all(kinds.values()), kinds


def test_a_python_with_newer_unicode_tables_than_the_tokenizer_counts_with_the_tokenizer(
    ranks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(token_ranks, "TOKENIZER_UNICODE", (13, 0))  # older than Python's
    assert open_counter(ranks) is None
    assert not build(tmp_path / "o200k-ranks.sqlite3", get_tokenizer().encoding)
    assert list(tmp_path.iterdir()) == []
    assert token_ranks.settled(tmp_path / "o200k-ranks.sqlite3")  # nothing to write, ever
