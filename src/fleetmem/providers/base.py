"""The episode-provider contract as fleetmem's memory code sees it.

A provider stores and ranks episodes and nothing else. It returns its own ids when it
records; fleetmem indexes each id under the episode's scope and, on recall, trusts only
that index: a provider can return less than it should, never more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

#: Contract bounds (seed 000 REQ-3).
MAX_QUERY_CHARS = 512
MAX_LIMIT = 20
MAX_PATHS = 20
MAX_ITEM_TEXT = 2000
MAX_ITEM_ID = 128
MAX_RECORD_IDS = 32


@dataclass(frozen=True, slots=True)
class ProviderItem:
    id: str
    text: str
    score: float | None = None


@dataclass(frozen=True, slots=True)
class ProviderRecall:
    items: tuple[ProviderItem, ...]
    #: "embeddings_unavailable" when a hybrid provider fell back to text ranking.
    degraded: str | None = None
    #: Items the provider returned that broke the contract's bounds and were left out here
    #: (counted by the memory service as dropped ``invalid``).
    invalid: int = 0


class EpisodeProvider(Protocol):
    """The four operations of the contract (``memory_contract`` is the provider's name here)."""

    @property
    def name(self) -> str: ...

    def record(
        self,
        episode_id: str,
        scope: str,
        trust_class: str,
        episode: Mapping[str, Any],
        text: str,
    ) -> list[str]: ...

    def recall(
        self, query: str, scopes: Sequence[str], limit: int, paths: Sequence[str]
    ) -> ProviderRecall: ...

    def forget(self, provider_id: str) -> bool: ...
