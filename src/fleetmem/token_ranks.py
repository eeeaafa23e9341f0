"""Exact ``o200k_base`` token counts without loading the tokenizer.

Loading the encoding costs a process about 0.45 s, and a short-lived one (a hook answering a
session's start, ``fleetmem files show``) often needs only the count of a few new lines: the
context's scope line with its run id, a feed of recent runs. Counting needs much less than
the whole tokenizer. The encoding splits text into pieces with one regular expression, and
encodes each piece on its own; a piece that is a token is one token, any other is merged
pair by pair, lowest rank first, until no adjacent pair is a token. So a count needs the
pre-tokenizer (the ``regex`` package, whose Unicode classes are the ones the encoding was
defined with) and the rank of each byte string looked up, a few per piece.

The ranks live in a small SQLite file under the home (:data:`RANKS_FILE`), written by a
process that has the real tokenizer loaded (:func:`build`). Before the file is put in place,
its counts are checked against the tokenizer's on a corpus of every kind of text the
pre-tokenizer distinguishes (:func:`check_corpus`); a file written by other versions of
``quicktok`` or ``regex`` is ignored. A count from here is therefore the tokenizer's count,
and ``tests/files/test_token_ranks.py`` checks that on fresh random text too.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

from fleetmem.tokenize import ENCODING, PACKAGE, encodable

log = logging.getLogger(__name__)

#: Where the ranks live, under the home.
RANKS_FILE: Final = Path("cache") / "o200k-ranks.sqlite3"
#: The layout of the file; a file of another layout is written again.
FORMAT: Final = 2

#: ``o200k_base``'s pre-tokenizer, as OpenAI's tiktoken defines it: words with an optional
#: leading non-letter, case-aware so "camelCase" splits; numbers of up to three digits;
#: punctuation runs with the line breaks and slashes after them; line breaks with the
#: spaces before them; other whitespace.
PATTERN: Final = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

#: Pieces whose counts a counter keeps in memory (the same words recur in every text).
PIECE_MEMORY: Final = 50_000
#: The Unicode version of the character classes in quicktok 0.4's ``o200k_base``. A
#: character's class can only be vouched for when both sides know it: one unassigned in
#: Python's ``unicodedata`` is left to the tokenizer (the ``regex`` package may know it
#: already, as U+058B, where quicktok does not), and a Python whose ``unicodedata`` is newer
#: than this does not count from ranks at all.
TOKENIZER_UNICODE: Final = (16, 0)


def _versions() -> str:
    """What the file's correctness depends on besides the encoding: its layout, the
    vocabulary's package and the pre-tokenizer's Unicode tables. Read from the modules
    themselves: ``importlib.metadata`` would cost a hook answering in its own process 10 ms."""
    import quicktok
    import regex

    return f"format={FORMAT};{ENCODING};{PACKAGE}={quicktok.__version__};regex={regex.__version__}"


class RankCounter:
    """Counts tokens from a ranks file; thread-safe. Open with :func:`open_counter`."""

    def __init__(self, db: sqlite3.Connection) -> None:
        import regex  # deferred: only a process that counts this way pays its import

        self._db = db
        self._split = regex.compile(PATTERN).findall
        self._lock = threading.Lock()
        self._ranks: dict[bytes, int | None] = {}
        self._pieces: dict[str, int] = {}

    def count(self, text: str) -> int | None:
        """Number of ``o200k_base`` tokens of ``text`` encoded as ordinary text; None when
        the text holds a character whose class this counter cannot vouch for (one that
        Python's Unicode tables do not know), which the tokenizer must count."""
        text = encodable(text)
        if not text.isascii() and any(
            unicodedata.category(ch) == "Cn" for ch in set(text) if ch > "\x7f"
        ):
            return None
        total = 0
        pieces = self._pieces
        with self._lock:
            for piece in self._split(text):
                known = pieces.get(piece)
                if known is None:
                    known = self._piece_tokens(piece.encode("utf-8"))
                    if len(pieces) >= PIECE_MEMORY:
                        pieces.clear()
                    pieces[piece] = known
                total += known
        return total

    def _rank(self, key: bytes) -> int | None:
        ranks = self._ranks
        if key in ranks:
            return ranks[key]
        row = self._db.execute("SELECT rank FROM ranks WHERE piece = ?", (key,)).fetchone()
        found = None if row is None else int(row[0])
        if len(ranks) >= 4 * PIECE_MEMORY:
            ranks.clear()
        ranks[key] = found
        return found

    def _piece_tokens(self, data: bytes) -> int:
        if len(data) == 1 or self._rank(data) is not None:
            return 1
        # Byte-pair merging as the encoding does it: join the adjacent pair whose bytes have
        # the lowest rank (the leftmost of equals), until no adjacent pair is a token.
        parts = [data[i : i + 1] for i in range(len(data))]
        while len(parts) > 1:
            best_rank: int | None = None
            best_at = 0
            for at in range(len(parts) - 1):
                rank = self._rank(parts[at] + parts[at + 1])
                if rank is not None and (best_rank is None or rank < best_rank):
                    best_rank, best_at = rank, at
            if best_rank is None:
                break
            parts[best_at : best_at + 2] = [parts[best_at] + parts[best_at + 1]]
        return len(parts)

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()


def open_counter(path: Path) -> RankCounter | None:
    """A counter over the ranks file at ``path``; None when there is none, it cannot be read,
    it was written for other versions of the tokenizer or the pre-tokenizer, or its counts
    did not pass the check when it was written."""
    db = _open(path)
    if db is None:
        return None
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'check'").fetchone()
        if row is not None and row[0] == "passed":
            return RankCounter(db)
    except (sqlite3.Error, ImportError) as exc:
        log.info("token ranks %s unusable, counting with the tokenizer: %s", path, exc)
    db.close()
    return None


def settled(path: Path) -> bool:
    """Whether the file at ``path`` was written for these versions, whether its counts
    passed the check or not: either way, writing it again would give the same file."""
    db = _open(path)
    if db is not None:
        db.close()
    return db is not None or _unicode_version() > TOKENIZER_UNICODE


def ensure(path: Path, encoding: Callable[[], Any]) -> None:
    """Write the ranks file at ``path`` unless one written for these versions is there
    (whether its counts passed the check or not). ``encoding`` gives the loaded quicktok
    encoding, asked for only when the file is to be written."""
    if not settled(path):
        build(path, encoding())


def _open(path: Path) -> sqlite3.Connection | None:
    """The ranks file, read-only, when it exists and was written for these versions."""
    if not path.is_file() or _unicode_version() > TOKENIZER_UNICODE:
        return None
    try:
        versions = _versions()
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'versions'").fetchone()
            if row is not None and row[0] == versions:
                return db
        except sqlite3.Error:
            pass
        db.close()
    except (sqlite3.Error, ImportError) as exc:
        log.info("token ranks %s unusable, counting with the tokenizer: %s", path, exc)
    return None


def _unicode_version() -> tuple[int, int]:
    major, minor = unicodedata.unidata_version.split(".")[:2]
    return int(major), int(minor)


def _ordinary_tokens(encoding: Any) -> Iterable[tuple[bytes, int]]:
    """Every ordinary token of a loaded quicktok encoding, as (bytes, rank)."""
    specials = {encoding.encode_single_token(s) for s in encoding.special_tokens_set}
    for rank in range(int(encoding.n_vocab)):
        if rank in specials:
            continue
        try:
            yield bytes(encoding.decode_single_token_bytes(rank)), rank
        except KeyError:  # ids the encoding leaves unused, between its tokens and specials
            continue


def check_corpus(seed: int = 20261205) -> list[str]:
    """Texts covering what the pre-tokenizer tells apart: cased and uncased letters,
    contractions, digits, punctuation with line breaks and slashes after it, whitespace runs
    with and without line breaks, marks, scripts without case, emoji, and random mixes."""
    fixed = [
        "Hello world, it's a test. They'RE here; we'll see. I'd say DON'T.",
        "camelCase PascalCase snake_case kebab-case SCREAMING_CASE iPhone XMLHttpRequest",
        "1 12 123 1234 12345 3.14159 -42 1e-9 0x1F 2026-12-05T09:01:42Z v1.2.3",
        "x.\n/path/to/file.py:12\r\n\r\n  \n\t\tindented\n    \n  trailing  \n",
        "a  b   c\u00a0d\u2003e \u3000f\n\n\n",
        "def f(x):\n    return {'k': [1, 2, 3]}  # comment\n",
        "<|endoftext|> <|endofprompt|> <|fim_prefix|>",
        "naïve café résumé Ñandú ÅNGSTRÖM straße ǅemal ǈudevit",
        "e\u0301 a\u0308 combining \u0301\u0302 marks",
        "日本語のテキスト 中文文本 한국어 텍스트 ภาษาไทย",
        "Русский ТЕКСТ Ελληνικά ΚΕΙΜΕΝΟ עברית العربية हिन्दी",
        "emoji 👍🏽 👨‍👩‍👧 🇫🇷 ❤️ ✅ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛",
        "٠١٢٣ ４５６ Ⅻ ½ ² ³",
        "claude-d5476f5c-445f-4e2d-9e72-e5ad01 sha256:9f86d081884c7d659a2feaa0c55ad015",
        "   leading spaces\n\n\n\ntrailing newlines\n\n",
        "!!!???...---===***''' \"\"\" ``` ~~~ ///",
    ]
    rng = random.Random(seed)
    alphabet = (
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        " \t\n\r.,;:'\"!?/\\-_()[]{}<>@#$%^&*+=|~`"
        "éÉßçÇñÑøØåÅ日本中文한국Жжλ\u0301\u0308👍🏽\u200d\u00a0\u3000٣४"
    )
    mixes = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))) for _ in range(300)]
    words = ["the", "of", "memory", "fleet", "agent", "run", "token", "'s", "'re", "I'd"]
    phrases = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(100)]
    return fixed + mixes + phrases


def build(path: Path, encoding: Any) -> bool:
    """Write the ranks of ``encoding`` (a loaded quicktok ``o200k_base``) to ``path`` and
    check a counter over them against it; True when the file is in place and passed. A file
    that fails keeps only that verdict, so no process spends the 0.5 s on it again until a
    version changes. Any process may call it: each writes its own temporary file and renames
    it into place."""
    if _unicode_version() > TOKENIZER_UNICODE:
        return False
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute(
                "CREATE TABLE ranks (piece BLOB PRIMARY KEY, rank INTEGER NOT NULL) WITHOUT ROWID"
            )
            db.execute("BEGIN")
            db.executemany("INSERT INTO ranks VALUES (?, ?)", _ordinary_tokens(encoding))
            db.execute("INSERT INTO meta VALUES ('versions', ?)", (_versions(),))
            db.execute("INSERT INTO meta VALUES ('check', 'passed')")
            db.execute("COMMIT")
        finally:
            db.close()
        counter = open_counter(tmp)
        if counter is None:
            return False
        try:
            wrong = [
                t
                for t in check_corpus()
                if counter.count(t) not in (None, int(encoding.count(encodable(t))))
            ]
        finally:
            counter.close()
        if wrong:
            log.warning(
                "token ranks not used: %d of the check texts counted differently", len(wrong)
            )
            with contextlib.closing(sqlite3.connect(tmp, isolation_level=None)) as db:
                db.execute("DROP TABLE ranks")
                db.execute("UPDATE meta SET value = 'failed' WHERE key = 'check'")
                db.execute("VACUUM")
        os.replace(tmp, path)
        return not wrong
    except (OSError, sqlite3.Error, ImportError) as exc:
        log.warning("token ranks not written to %s: %s", path, exc)
        return False
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
