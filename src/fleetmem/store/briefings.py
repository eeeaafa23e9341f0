"""What the agent-facing memory needs from persistence: each run's stored briefing.

A run's briefing is computed once and served unchanged (seed 000 REQ-15); storing it lets
every server process (the daemon's ``/mcp``, each ``fleetmem mcp`` started by an agent)
serve the same document. Times are UNIX seconds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class StoredBriefing:
    """A run's briefing as served. ``text`` is empty for an empty briefing.

    ``origin`` says what computed it (``read``: its first read, ``spawn``: before the run
    started, ``refresh``: the run asked again); ``version`` counts computations, from 1.
    """

    run_id: str
    agent: str
    repo: str | None
    branch: str | None
    text: str
    fact_ids: tuple[str, ...]
    degraded: str | None
    origin: str
    computed_at: float
    version: int


class RunBriefingStore(Protocol):
    def get_run_briefing(self, run_id: str) -> StoredBriefing | None: ...

    def add_run_briefing(self, row: StoredBriefing) -> StoredBriefing:
        """Store ``row`` unless the run already has a briefing; return the stored one (the
        first writer wins, so two processes computing at once serve the same document)."""
        ...

    def replace_run_briefing(self, row: StoredBriefing) -> StoredBriefing:
        """Store ``row`` in place of the run's briefing (a refresh); ``version`` is set to
        one more than the stored one's."""
        ...

    def delete_run_briefings_before(self, computed_before: float) -> int: ...

    # The lease under which one process computes a run's briefing (store/leases.py).
    def claim_lease(
        self, name: str, holder: str, *, now: float, hold_s: float, every_s: float = 0.0
    ) -> bool: ...
    def release_lease(
        self, name: str, holder: str, *, done_at: float | None = None, forget: bool = False
    ) -> None: ...


def encode_ids(ids: Sequence[str]) -> str:
    return json.dumps(list(ids))


def decode_ids(raw: str) -> tuple[str, ...]:
    value = json.loads(raw)
    return tuple(str(v) for v in value) if isinstance(value, list) else ()
