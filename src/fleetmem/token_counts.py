"""Token counts remembered across processes, so a short-lived command need not load the BPE.

Loading ``o200k_base`` costs about 0.8 s of CPU per process on this project's reference
machine, and every command that shows or enforces a budget needs counts: ``fleetmem files
...``, the load meter, the Claude Code SessionStart hook, ``fleetmem run``. Most of those
counts are of texts counted before (the stored revisions of context files, the marker lines),
so the count of each text is kept in a small SQLite file under the home, keyed by a hash of
the text and the encoding. A count found there is exact by construction; a text not found is
counted by the real tokenizer, loaded on first need, and remembered.

A text not counted before is counted from the encoding's ranks on disk
(:mod:`fleetmem.token_ranks`) while the tokenizer is not loaded in this process, so a hook
counting a session's new scope line costs milliseconds, not a 0.45 s load; the first
process that loads the tokenizer for a count writes that file.

The cache is an optimisation and never a source of failure: a missing, locked, corrupt or
read-only file means counting with the tokenizer, as if there were no cache. Token ids
(``encode``) and bytes (``decode_bytes``), needed only to cut an over-budget text, always
come from the tokenizer.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

from fleetmem import token_ranks
from fleetmem.token_ranks import RankCounter
from fleetmem.tokenize import ENCODING, Tokenizer, get_tokenizer, loaded

log = logging.getLogger(__name__)

#: Where the counts live, under the home.
CACHE_FILE = Path("cache") / "token-counts.sqlite3"
#: Rows kept on disk; the oldest go once this many more have been added (about 6 MB).
MAX_ROWS = 100_000
#: Counts kept in memory by a long-lived process (the daemon counts the same texts again).
MEMORY_ROWS = 4096
#: How long a writer waits for another process's transaction before counting without it.
BUSY_MS = 200
#: The longest text counted from the ranks file rather than by loading the tokenizer: about
#: 0.15 s of counting cold, a third of the load (64 KB counts in 35 ms).
RANKS_MAX_CHARS = 256 * 1024


def _key(text: str) -> bytes:
    # The encoding is part of the key, so a change of encoding never reads an old count.
    digest = hashlib.blake2b(ENCODING.encode("ascii"), digest_size=20)
    digest.update(b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.digest()


class CachedTokenizer:
    """A :class:`~fleetmem.tokenize.Tokenizer` whose counts are remembered in ``path``.

    Thread-safe. A count not known is taken from the ranks file at ``ranks`` (when given and
    usable) while the process-wide tokenizer is not loaded; otherwise the real tokenizer (by
    default the process-wide one) is fetched by ``load``, as it is when ids are asked for.
    """

    name: str = ENCODING

    def __init__(
        self,
        path: Path,
        load: Callable[[], Tokenizer] = get_tokenizer,
        *,
        ranks: Path | None = None,
    ) -> None:
        self.path = path
        self._load = load
        self._lock = threading.Lock()
        self._memory: OrderedDict[bytes, int] = OrderedDict()
        self._db: sqlite3.Connection | None = None
        self._db_failed = False
        self._added = 0
        self._ranks_path = ranks
        self._ranks: RankCounter | None = None
        self._ranks_tried = False
        self._ranks_written = False

    # ---- the tokenizer, loaded on first need ----------------------------------------
    def _tokenizer(self) -> Tokenizer:
        # Fetched for each count, never kept: the process-wide one may be released when idle.
        return self._load()

    def encode(self, text: str) -> list[int]:
        return self._tokenizer().encode(text)

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        return self._tokenizer().decode_bytes(tokens)

    def count(self, text: str) -> int:
        """Number of tokens of ``text``, exactly as :meth:`Tokenizer.count` gives it."""
        # Short texts too: a marker line counted by the tokenizer here would make the next
        # process load it for that line alone.
        key = _key(text)
        with self._lock:
            known = self._memory.get(key)
            if known is None:
                known = self._read(key)
            if known is not None:
                self._remember(key, known)
                return known
        counter = self._rank_counter()
        tokens = None
        if counter is not None and len(text) <= RANKS_MAX_CHARS and not loaded():
            tokens = counter.count(text)
        if tokens is None:
            tokenizer = self._tokenizer()
            tokens = tokenizer.count(text)
            if counter is None:
                self._write_ranks(tokenizer)
        with self._lock:
            self._remember(key, tokens)
            self._write(key, tokens)
        return tokens

    # ---- the ranks file -------------------------------------------------------------
    def _rank_counter(self) -> RankCounter | None:
        with self._lock:
            if not self._ranks_tried and self._ranks_path is not None:
                self._ranks_tried = True
                self._ranks = token_ranks.open_counter(self._ranks_path)
            return self._ranks

    def _write_ranks(self, tokenizer: Tokenizer) -> None:
        """Once per process, with the tokenizer loaded anyway: put the ranks file in place
        (about 0.5 s, once per home and tokenizer version) so later processes count
        without loading it."""
        with self._lock:
            if self._ranks_path is None or self._ranks_written:
                return
            self._ranks_written = True
        token_ranks.ensure(self._ranks_path, lambda: tokenizer.encoding)
        counter = token_ranks.open_counter(self._ranks_path)  # None: its counts failed
        with self._lock:
            self._ranks = counter

    # ---- memory ---------------------------------------------------------------------
    def _remember(self, key: bytes, tokens: int) -> None:
        self._memory[key] = tokens
        self._memory.move_to_end(key)
        if len(self._memory) > MEMORY_ROWS:
            self._memory.popitem(last=False)

    # ---- disk (called with the lock held) -------------------------------------------
    def _connection(self) -> sqlite3.Connection | None:
        if self._db is not None or self._db_failed:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS counts (key BLOB PRIMARY KEY, tokens INTEGER NOT NULL)"
            )
        except (OSError, sqlite3.Error) as exc:
            self._give_up(exc)
            return None
        self._db = db
        return db

    def _read(self, key: bytes) -> int | None:
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute("SELECT tokens FROM counts WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._give_up(exc)
            return None
        if row is None or not isinstance(row[0], int) or row[0] < 0:
            return None
        return int(row[0])

    def _write(self, key: bytes, tokens: int) -> None:
        db = self._connection()
        if db is None:
            return
        try:
            db.execute("INSERT OR REPLACE INTO counts (key, tokens) VALUES (?, ?)", (key, tokens))
            self._added += 1
            if self._added % 1000 == 0:
                db.execute(
                    "DELETE FROM counts WHERE rowid <= (SELECT MAX(rowid) FROM counts) - ?",
                    (MAX_ROWS,),
                )
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                return  # another process is writing: this count is simply not kept
            self._give_up(exc)

    def _give_up(self, exc: BaseException) -> None:
        """Count without the file from now on in this process, and say so once."""
        log.warning("token count cache %s unusable, counting without it: %s", self.path, exc)
        self._db_failed = True
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            if self._ranks is not None:
                self._ranks.close()
                self._ranks = None
