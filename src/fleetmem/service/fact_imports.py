"""Bringing in what people already keep: statements from other tools' files become proposals.

Nothing imported is trusted on arrival. Every candidate a reader of
:mod:`fleetmem.core.memory_imports` finds is validated exactly as a fact written here would be
(secrets refused, size bounded, invisible characters removed) and stored as ``proposed``, so a
person accepts or rejects it in the review queue like any agent's proposal. Importing the same
file again proposes nothing twice: a candidate whose wording is already a live or rejected
fact in the scope is counted as a duplicate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleetmem import metrics
from fleetmem.core.facts import (
    LIVE,
    REJECTED,
    Actor,
    check_kind,
    check_scope,
    clean_body,
    normalize,
)
from fleetmem.core.memory_imports import Candidate
from fleetmem.errors import InvalidInput
from fleetmem.service.fact_base import FactServiceBase, local_user, log

#: Called as ``progress(done, total)`` while candidates are proposed.
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class ImportedFacts:
    """What an import of statements did, candidate by candidate."""

    proposed: list[str] = field(default_factory=list)
    duplicates: int = 0
    #: Candidates the review queue had no room for (the 200-proposal backlog was full).
    dropped: int = 0
    #: (line, reason) for each candidate refused: a secret, an oversized statement...
    refused: list[tuple[int, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "proposed": len(self.proposed),
            "fact_ids": self.proposed,
            "duplicates": self.duplicates,
            "dropped": self.dropped,
            "refused": [{"line": line, "reason": reason} for line, reason in self.refused],
        }


class FactImportsMixin(FactServiceBase):
    """Proposals from imported files (mixed into :class:`fleetmem.service.facts.FactService`)."""

    def propose_imported(
        self,
        candidates: Sequence[Candidate],
        *,
        origin_name: str,
        scope: str,
        kind: str = "note",
        actor: Actor | None = None,
        progress: Progress | None = None,
    ) -> ImportedFacts:
        """Propose each candidate for review; ``origin_name`` (a file name) is kept with it."""
        actor = actor or local_user()
        if actor.kind == "agent":
            raise InvalidInput("actor", actor.name, "agents propose facts one by one")
        result = ImportedFacts()
        conversation = f"import:{origin_name}"[:200]
        for done, candidate in enumerate(candidates, 1):
            try:
                # The checks every fact write makes: secrets, size, invisible characters.
                body = clean_body(candidate.body)
                kind_, scope_ = check_kind(kind), check_scope(scope)
            except InvalidInput as exc:
                result.refused.append((candidate.line, exc.reason))
            else:
                self._propose_one(body, kind_, scope_, actor, conversation, result)
            if progress is not None and (done % 50 == 0 or done == len(candidates)):
                progress(done, len(candidates))
        metrics.FACT_PROPOSALS.labels(outcome="proposed").inc(len(result.proposed))
        log.info(
            "facts.imported proposed=%d duplicates=%d dropped=%d refused=%d",
            len(result.proposed),
            result.duplicates,
            result.dropped,
            len(result.refused),
        )
        return result

    def _propose_one(
        self,
        body: str,
        kind: str,
        scope: str,
        actor: Actor,
        conversation: str,
        result: ImportedFacts,
    ) -> None:
        norm = normalize(body)
        live_or_rejected = sorted(LIVE | {REJECTED})
        if self.store.fact_find_norm(self.workspace, scope, norm, live_or_rejected):
            # Known already: skip the embedding (a re-import is mostly duplicates).
            result.duplicates += 1
            return
        vector = self._embed_one(body)
        with self._write():
            # Asked again inside the write: another writer may have added it meanwhile.
            if self.store.fact_find_norm(self.workspace, scope, norm, live_or_rejected):
                result.duplicates += 1
                return
            if not self._room_for_proposal() or not self._room_for_kept():
                result.dropped += 1
                return
            row = self._proposal_row(
                body,
                norm,
                kind,
                scope,
                origin=actor.origin,
                author=actor.name,
                run_id=None,
                conversation=conversation,
                source=None,
                idempotency_key=None,
                now=self.now(),
            )
            self._insert(row, actor, "import")
            self._link_vector(row, vector)
        result.proposed.append(row.id)
