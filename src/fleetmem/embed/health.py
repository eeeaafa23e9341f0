"""What the active embedder can do right now, in words an operator can act on.

``status``, ``doctor``, ``/healthz`` and the web UI all describe the embedder through
:func:`describe_embedder`, so they never disagree about whether search is hybrid (words and
meaning) or word-only, and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fleetmem.embed.base import Embedder

EmbedderState = Literal["ok", "degraded", "off", "unchecked"]
SearchMode = Literal["hybrid", "word-only"]

#: The fix printed when vectors are off by configuration.
TURN_ON = 'set [model_api] embedding_model = "local:minilm" in fleetmem.toml'


@dataclass(frozen=True, slots=True)
class EmbedderHealth:
    """One embedder's state.

    ``state`` is ``ok`` (it loaded and embeds), ``degraded`` (configured but unusable:
    ``reason`` says why, ``fix`` what to run), ``off`` (no embedder configured) or
    ``unchecked`` (a remote model, first tried on first use).
    """

    model: str | None
    state: EmbedderState
    reason: str | None = None
    fix: str | None = None
    #: What search queries are embedded with, when that differs by machine (the offline
    #: model: its int8 copy, or the shipped model until the copy is made).
    queries: str | None = None

    @property
    def search(self) -> SearchMode:
        """``word-only`` whenever no query can be embedded right now."""
        return "word-only" if self.state in ("degraded", "off") else "hybrid"

    def sentence(self) -> str:
        """One plain line, e.g. ``word-only search: ...; pip install ...``."""
        if self.state == "ok":
            line = f"{self.model}: words and meaning (hybrid search)"
            return f"{line}; queries by {self.queries}" if self.queries else line
        if self.state == "unchecked":
            return f"{self.model}: remote model, checked on first use"
        parts = [f"word-only search: {self.reason}"]
        if self.fix:
            parts.append(self.fix)
        return "; ".join(parts)

    def as_dict(self) -> dict[str, str | None]:
        """JSON-ready, the shape ``status``, ``/healthz`` and ``doctor --json`` share."""
        return {
            "model": self.model,
            "state": self.state,
            "search": self.search,
            "reason": self.reason,
            "fix": self.fix,
            "queries": self.queries,
            "summary": self.sentence(),
        }


def describe_embedder(embedder: Embedder | None, *, probe: bool = True) -> EmbedderHealth:
    """The health of ``embedder`` (``None`` means vectors are off by configuration).

    An embedder with a ``health(probe=...)`` method (the built-in offline one) answers for
    itself; with ``probe`` it loads its files if it has not yet, so a missing package shows
    before the first recall. Any other embedder (a remote API) is ``unchecked``.
    """
    if embedder is None:
        return EmbedderHealth(
            model=None,
            state="off",
            reason="no embedding model is configured ([model_api] embedding_model is empty)",
            fix=TURN_ON,
        )
    health = getattr(embedder, "health", None)
    if callable(health):
        answer = health(probe=probe)
        if isinstance(answer, EmbedderHealth):
            return answer
    return EmbedderHealth(model=embedder.model_id, state="unchecked")
