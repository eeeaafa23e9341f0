"""The cross-process token count cache: exact counts, the vocabulary loaded only when needed,
and never a failure of its own."""

from __future__ import annotations

import logging
import random
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetmem import token_counts
from fleetmem.service.bootstrap import App
from fleetmem.token_counts import CachedTokenizer
from fleetmem.tokenize import Tokenizer, get_tokenizer

ROOT = Path(__file__).resolve().parents[2]

PIECES = (
    "the", " ", "\n", "deploy", "ledger", "é", "日本語", "🙂", "<|endoftext|>", "  ", "\t",
    "x" * 70, "0123456789", "password=", "## Heading\n", "- item\n", "\u200b", "ß",
)  # fmt: skip


def _texts(rng: random.Random, n: int) -> list[str]:
    texts = [""]
    for _ in range(n):
        texts.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 60))))
    return texts


def _refuse() -> Tokenizer:
    raise AssertionError("the vocabulary was loaded although every count was known")


def test_counts_are_the_tokenizers_and_a_second_process_needs_no_vocabulary(
    tmp_path: Path, rng: random.Random
) -> None:
    real = get_tokenizer()
    texts = _texts(rng, 300)
    first = CachedTokenizer(tmp_path / "counts.sqlite3", load=get_tokenizer)
    assert [first.count(t) for t in texts] == [real.count(t) for t in texts]
    first.close()
    # A new instance over the same file (as a new process is) knows every count already,
    # long texts and short ones alike.
    second = CachedTokenizer(tmp_path / "counts.sqlite3", load=_refuse)
    assert [second.count(t) for t in texts] == [real.count(t) for t in texts]
    # Ids and bytes are the tokenizer's business: asked for, it is loaded.
    with pytest.raises(AssertionError, match="vocabulary was loaded"):
        second.encode("a text to cut")
    second.close()


def test_a_broken_cache_file_is_counted_around(
    tmp_path: Path, rng: random.Random, caplog: pytest.LogCaptureFixture
) -> None:
    real = get_tokenizer()
    texts = _texts(rng, 40)
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(bytes(rng.randrange(256) for _ in range(8192)))
    blocked = tmp_path / "a-file" / "counts.sqlite3"  # its parent is a file: cannot exist
    blocked.parent.write_text("not a directory", encoding="utf-8")
    for path in (corrupt, blocked):
        caplog.clear()
        cache = CachedTokenizer(path, load=get_tokenizer)
        with caplog.at_level(logging.WARNING, logger="fleetmem.token_counts"):
            assert [cache.count(t) for t in texts] == [real.count(t) for t in texts]
        warnings = [r for r in caplog.records if "unusable" in r.getMessage()]
        assert len(warnings) == 1, path  # said once, not once per count
        cache.close()
    assert blocked.parent.read_text(encoding="utf-8") == "not a directory"


def test_a_wrong_row_is_not_believed(tmp_path: Path) -> None:
    path = tmp_path / "counts.sqlite3"
    cache = CachedTokenizer(path, load=get_tokenizer)
    text = "a text long enough to be looked up in the cache file " * 3
    expected = cache.count(text)
    cache.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE counts SET tokens = -5")
    again = CachedTokenizer(path, load=get_tokenizer)
    assert again.count(text) == expected
    again.close()


def test_the_file_keeps_a_bounded_number_of_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(token_counts, "MAX_ROWS", 500)
    path = tmp_path / "counts.sqlite3"
    cache = CachedTokenizer(path, load=get_tokenizer)
    for n in range(3000):
        cache.count(f"text number {n} " * 8)
    cache.close()
    with sqlite3.connect(path) as db:
        (rows,) = db.execute("SELECT COUNT(*) FROM counts").fetchone()
    assert 500 <= rows < 500 + 1000


def test_processes_counting_at_once_agree_and_never_fail(tmp_path: Path) -> None:
    path = tmp_path / "counts.sqlite3"
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from fleetmem.token_counts import CachedTokenizer\n"
        "from fleetmem.tokenize import get_tokenizer\n"
        "cache = CachedTokenizer(Path(sys.argv[1]), load=get_tokenizer)\n"
        "real = get_tokenizer()\n"
        "for n in range(400):\n"
        "    text = f'shared text {n % 50} and own text {sys.argv[2]} {n} ' * 4\n"
        "    assert cache.count(text) == real.count(text), text\n"
        "print('ok')\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), str(i)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.strip() == "ok", err
        assert "unusable" not in err


def test_a_files_listing_in_a_new_app_reads_the_counts_of_the_last_one(
    make_app: Callable[..., App],
) -> None:
    first = make_app()
    listed = first.files.listing()
    assert first.token_counts is not None
    first.close()
    again = make_app()
    assert again.token_counts is not None
    again.token_counts._load = _refuse  # any count not already known would load the BPE
    assert again.files.listing() == listed
