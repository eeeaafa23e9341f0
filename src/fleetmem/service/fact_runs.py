"""Facts and runs: the facts block, recall answers, exposure records and votes.

Every fact served to a run is an exposure, written before the answer leaves; when the
exposure cannot be written the fact is withheld from that answer. A run that was shown a
fact cannot corroborate it: its vote is stored and not counted (seed 000 REQ-17).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from fleetmem import metrics
from fleetmem.core.facts import (
    ACTIVE,
    BLOCK_MAX_RECALLED,
    INSTRUCTION,
    LIVE,
    PROPOSED,
    SERVABLE,
    STANCES,
    SUSPECT,
    SYSTEM,
    BlockItem,
    Tally,
    block_score,
    check_scope,
    clean_vote_reason,
    corroborated,
    fit_block,
    is_suspect,
    literal_terms,
    visible_scopes,
    vote_counts,
)
from fleetmem.core.labels import check_run_id
from fleetmem.core.scope import validate_agent_name, validate_repo_key
from fleetmem.errors import InvalidInput, UnknownFact
from fleetmem.service.fact_base import BACKFILL_BATCH, FactServiceBase, log
from fleetmem.service.fact_results import (
    BlockStatus,
    FactRecall,
    FactsBlock,
    RecalledFact,
    VoteResult,
    VoteSummary,
)
from fleetmem.service.fact_revisions import as_of, run_started_at
from fleetmem.service.records.facts import Fact, FactExposure, exposure_of, vote_of
from fleetmem.store.facts import ExposureRow, FactFilter, FactRow, VoteRow

SURFACES = ("briefing", "recall", "resource", "prompt")
MAX_RECALL_LIMIT = 20
_run_log = logging.getLogger("fleetmem.facts.runs")


@dataclass(frozen=True, slots=True)
class _Selection:
    pinned: tuple[BlockItem, ...]
    recalled: tuple[BlockItem, ...]
    degraded: str | None


def check_run(run_id: object, agent: object, repo: object) -> tuple[str, str, str | None]:
    """Validate the run a fact is served to or voted from."""
    run_id = check_run_id(run_id, "run_id")
    if not isinstance(agent, str):
        raise InvalidInput("agent", agent, "must be a string")
    validate_agent_name(agent)
    if repo is not None:
        if not isinstance(repo, str):
            raise InvalidInput("repo", repo, "must be a string")
        validate_repo_key(repo)
    return run_id, agent, repo


class RunFactsMixin(FactServiceBase):
    """The run-facing half of :class:`fleetmem.service.facts.FactService`."""

    # ---- the facts block ----------------------------------------------------------------
    def facts_block(
        self,
        *,
        run_id: str,
        agent: str,
        repo: str | None = None,
        query: str | None = None,
        surface: str = "briefing",
        call_id: str | None = None,
    ) -> FactsBlock | None:
        """The facts section of a run (seed 003 FR-19 to FR-24, seed 000 REQ-14).

        Pinned active facts of the run's scopes first, then at most 8 recalled active facts:
        by meaning of ``query`` (at or above the recall threshold) weighted by recency and
        confidence, or without a query by confidence, then recency, then id. Capped at 1,200
        tokens. ``None`` when the agent's recall is off (no block at all); a block whose
        status is not ``ok`` has no text, and the run proceeds without facts. Never raises
        for a store or model failure.
        """
        run_id, agent, repo = check_run(run_id, agent, repo)
        _check_surface(surface)
        if not self.settings.agent(agent).memory_recall:
            metrics.FACT_BLOCKS.labels(outcome="off").inc()
            return None
        timeout = self.settings.memory.facts.recall_timeout_s
        future = self._pool.submit(self._select, agent, repo, query)
        try:
            selection = future.result(timeout=timeout)
        except FutureTimeout:
            future.cancel()
            _run_log.warning(
                "facts.block_timeout run=%s agent=%s after=%gs", run_id, agent, timeout
            )
            metrics.FACT_BLOCKS.labels(outcome="timed_out").inc()
            return _empty_block("timed_out")
        except Exception as exc:  # a recall failure never fails a run
            _run_log.warning(
                "facts.block_failed run=%s agent=%s error=%s", run_id, agent, type(exc).__name__
            )
            metrics.FACT_BLOCKS.labels(outcome="failed").inc()
            return _empty_block("failed")
        fitted = fit_block(selection.pinned, selection.recalled, count_tokens=self.count_tokens)
        graded = [(item, "instruction") for item in fitted.items]
        if not self._expose(graded, run_id, agent, repo, surface, call_id):
            metrics.FACT_BLOCKS.labels(outcome="withheld").inc()
            return _empty_block("withheld", withheld=len(fitted.items))
        shown_pinned = sum(1 for item in fitted.items if item.pinned)
        outcome = "ok" if fitted.items else "empty"
        metrics.FACT_BLOCKS.labels(outcome=outcome).inc()
        return FactsBlock(
            status="ok",
            items=fitted.items,
            text=fitted.text,
            tokens=fitted.tokens,
            pinned=shown_pinned,
            recalled=len(fitted.items) - shown_pinned,
            dropped=fitted.dropped,
            nothing_matched=not selection.recalled,
            degraded=selection.degraded,
        )

    def _select(self, agent: str, repo: str | None, query: str | None) -> _Selection:
        """Pinned and recalled active facts of a run's scopes, reading only the rows that can
        make the block: the pinned ones, the voted ones, and the best of the rest."""
        scopes = visible_scopes(agent, repo)
        active = sorted(INSTRUCTION)
        pinned = self._pinned(scopes)
        tallies = self.store.fact_tallies(self.workspace)
        now = self.now()
        degraded = None
        if query is not None and query.strip():
            vector, degraded = self._query_vector(query.strip()[:2000])
            above = {} if vector is None else self._above(vector, self.thresholds().recall)
            candidates = list(self.store.fact_get_many(self.workspace, list(above)).values())
        else:
            above = {}
            # Unvoted facts rank by the prior of their confidence, then recency, then id; so
            # the voted ones plus the first few of the rest hold the whole top.
            voted = list(self.store.fact_get_many(self.workspace, list(tallies)).values())
            candidates = voted + self.store.fact_top_unvoted(
                self.workspace, active, scopes, exclude=list(tallies), limit=BLOCK_MAX_RECALLED
            )
        allowed = set(scopes)
        others = [
            r for r in candidates if r.status in INSTRUCTION and r.scope in allowed and not r.pinned
        ]
        conf = {
            r.id: self.confidence_of(r, tallies.get(r.id, (Tally(), Tally())))
            for r in [*pinned, *others]
        }
        scored: list[tuple[float, FactRow]] = []
        if query is not None and query.strip():
            for r in others:
                sim = self._current(above, r.id, r.content_hash)
                if sim is not None:
                    scored.append((block_score(sim, now - r.updated_at, conf[r.id]), r))
            scored.sort(key=lambda pair: (-pair[0], pair[1].id))
        else:
            others.sort(key=lambda r: (-conf[r.id], -r.updated_at, r.id))
            scored = [(conf[r.id], r) for r in others]
        recalled = scored[:BLOCK_MAX_RECALLED]
        return _Selection(
            pinned=tuple(block_item(r, conf[r.id], 1.0) for r in pinned),
            recalled=tuple(block_item(r, conf[r.id], s) for s, r in recalled),
            degraded=degraded,
        )

    # ---- recall answers -----------------------------------------------------------------
    def recall_for_run(
        self,
        query: str,
        *,
        run_id: str,
        agent: str,
        repo: str | None = None,
        limit: int = BLOCK_MAX_RECALLED,
        surface: str = "recall",
        call_id: str | None = None,
    ) -> FactRecall:
        """The facts section of a recall answer (seed 000 REQ-12): active, evidence and
        suspect facts in the run's scopes by meaning and words, each labelled instruction or
        data. Exposure is written first; facts whose exposure fails are withheld."""
        run_id, agent, repo = check_run(run_id, agent, repo)
        _check_surface(surface)
        if not isinstance(query, str) or not query.strip() or len(query) > 512:
            raise InvalidInput("query", query, "must be 1 to 512 characters")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput("limit", limit, "must be an integer between 1 and 20")
        scopes = visible_scopes(agent, repo)
        # A run in flight keeps the revisions it started with (service/fact_revisions.py).
        items, degraded = self.rank_servable(query, scopes=scopes, limit=limit, run_id=run_id)
        graded = [(block_item(i.fact, i.confidence, i.score), i.served_as) for i in items]
        if not self._expose(graded, run_id, agent, repo, surface, call_id):
            return FactRecall(items=(), degraded=degraded, withheld=len(items))
        return FactRecall(items=tuple(items), degraded=degraded)

    def rank_servable(
        self,
        query: str,
        *,
        scopes: Sequence[str],
        limit: int = BLOCK_MAX_RECALLED,
        run_id: str | None = None,
        by_meaning: bool = True,
    ) -> tuple[list[RecalledFact], str | None]:
        """Active, evidence and suspect facts of ``scopes`` matching ``query`` by meaning and
        by words, best first, each with its confidence and how it may be served; at most
        ``limit`` (1 to 20), and why the ranking was degraded (or None). For ``run_id``, a
        run in flight, each fact is ranked and returned at the revision the run opened with.
        ``by_meaning`` False: by words alone, without loading the embedder.

        Writes no exposure: for composers that fit facts into their own document and then
        record what they show with :meth:`serve_to_run`.
        """
        if not isinstance(query, str) or not query.strip() or len(query) > 512:
            raise InvalidInput("query", query, "must be 1 to 512 characters")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput("limit", limit, "must be an integer between 1 and 20")
        limit = min(limit, MAX_RECALL_LIMIT)
        scopes = [check_scope(scope) for scope in scopes]
        if not scopes:
            return [], None
        started = None if run_id is None else run_started_at(self.store, run_id)
        if by_meaning and self._pending():
            # Facts saved without a vector (a hook answering in its own process stores a
            # capture so) are embedded before they are ranked by meaning.
            self.backfill(BACKFILL_BATCH)
        hits, degraded = self._rank(
            query.strip(), sorted(SERVABLE), scopes, limit=limit, as_of=started,
            by_meaning=by_meaning,
        )  # fmt: skip
        hits = hits[:limit]
        tallies = self.store.fact_tallies(self.workspace) if hits else {}
        empty = (Tally(), Tally())
        items = [
            RecalledFact(
                fact=h.fact,
                score=h.score,
                confidence=self.confidence_of(h.fact, tallies.get(h.fact.id, empty)),
                served_as=_grade(h.fact),
                strength=h.strength,
            )
            for h in hits
        ]
        return items, degraded

    def facts_containing(
        self, words: Sequence[str], *, scopes: Sequence[str]
    ) -> dict[str, frozenset[str]]:
        """For each word, the ids of the active, evidence and suspect facts of ``scopes`` that
        contain it as fact search matches words (normalized, anywhere in the body); words
        that are stopwords or not one word are left out."""
        scopes = [check_scope(scope) for scope in scopes]
        normalized: dict[str, str] = {}
        for word in words:
            _, terms = literal_terms(word)
            if len(terms) == 1:  # else a stopword or a separator: no one word to look for
                normalized[word] = terms[0]
        found = self.store.fact_word_holders(
            self.workspace, sorted(SERVABLE), scopes, sorted(set(normalized.values()))
        )
        return {word: found[term] for word, term in normalized.items()}

    def _pinned(self, scopes: Sequence[str]) -> list[FactRow]:
        """The pinned active facts of ``scopes``, oldest pin first."""
        pinned = self.store.fact_list(
            self.workspace,
            FactFilter(statuses=tuple(sorted(INSTRUCTION)), scopes=tuple(scopes), pinned=True),
        )
        pinned.sort(key=lambda r: (r.pinned_at or 0.0, r.id))
        return pinned

    def pinned_for_run(self, *, agent: str, repo: str | None = None) -> tuple[BlockItem, ...]:
        """The pinned facts :meth:`select_for_run` puts first, read without ranking the rest."""
        validate_agent_name(agent)
        if repo is not None:
            validate_repo_key(repo)
        pinned = self._pinned(visible_scopes(agent, repo))
        if not pinned:
            return ()
        tallies = self.store.fact_tallies(self.workspace)
        return tuple(
            block_item(r, self.confidence_of(r, tallies.get(r.id, (Tally(), Tally()))), 1.0)
            for r in pinned
        )

    def select_for_run(
        self, *, agent: str, repo: str | None = None, query: str | None = None
    ) -> tuple[BlockItem, ...]:
        """What a run's facts block would hold, best first, before the token cap and without
        writing exposure: for operator previews, and for composers that fit the facts
        themselves and then call :meth:`serve_to_run` with the ids they show."""
        validate_agent_name(agent)
        if repo is not None:
            validate_repo_key(repo)
        selection = self._select(agent, repo, query)
        return selection.pinned + selection.recalled

    def serve_to_run(
        self,
        fact_ids: Sequence[str],
        *,
        run_id: str,
        agent: str,
        repo: str | None = None,
        surface: str = "briefing",
        call_id: str | None = None,
    ) -> tuple[str, ...]:
        """Record that ``fact_ids`` are being shown to a run, before they are shown.

        Returns the ids that may be shown: those still servable in the run's scopes (as
        instructions when active, else as data), or none at all when the exposure rows could
        not be written (the facts are then withheld from that answer).
        """
        run_id, agent, repo = check_run(run_id, agent, repo)
        _check_surface(surface)
        scopes = set(visible_scopes(agent, repo))
        rows = self.store.fact_get_many(self.workspace, list(fact_ids))
        servable = [
            rows[i]
            for i in dict.fromkeys(fact_ids)
            if i in rows and rows[i].status in SERVABLE and rows[i].scope in scopes
        ]
        # A run in flight is shown, and so recorded as shown, the revisions it opened with.
        started = run_started_at(self.store, run_id)
        if started is not None:
            servable = [as_of(self.store, row, started) for row in servable]
        graded = [(block_item(r, 0.0, 0.0), _grade(r)) for r in servable]
        ok = self._expose(graded, run_id, agent, repo, surface, call_id)
        return tuple(r.id for r in servable) if ok else ()

    def offered_to_run(self, run_id: str) -> list[FactExposure]:
        """Every fact served to ``run_id``, in order: the recall trace of a run."""
        return [exposure_of(e) for e in self.store.fact_exposures(self.workspace, run_id=run_id)]

    def _expose(
        self,
        items: Sequence[tuple[BlockItem, str]],
        run_id: str,
        agent: str,
        repo: str | None,
        surface: str,
        call_id: str | None,
    ) -> bool:
        """Write one exposure row per (item, grade) in one transaction; False (and nothing
        may be served) when that fails."""
        if not items:
            return True
        now = self.now()
        rows = [
            ExposureRow(
                workspace=self.workspace,
                run_id=run_id,
                fact_id=item.fact_id,
                revision=item.revision,
                surface=surface,
                served_as=grade,
                call_id=call_id,
                agent=agent,
                repo=repo,
                at=now,
            )
            for item, grade in items
        ]
        try:
            with self._write():
                self.store.fact_add_exposures(rows)
        except Exception as exc:  # any failure to record means the facts are not shown
            log.warning(
                "facts.exposure_failed run=%s surface=%s facts=%d error=%s",
                run_id,
                surface,
                len(items),
                type(exc).__name__,
            )
            metrics.FACTS_WITHHELD.labels(surface=surface).inc(len(items))
            return False
        for _, grade in items:
            metrics.FACTS_SERVED.labels(surface=surface, served_as=grade).inc()
        return True

    # ---- votes --------------------------------------------------------------------------
    def vote(
        self,
        *,
        run_id: str,
        agent: str,
        repo: str | None,
        fact_id: str,
        stance: str,
        reason: str | None = None,
    ) -> VoteResult:
        """Store a run's support or contradiction of a fact, with the voter's ``reason`` (what
        it checked; optional, at most 500 characters, refused when it holds a secret).

        It counts only when the run was never shown the fact, did not write it, and has not
        voted on it before. Counted votes may mark an active fact ``suspect`` or, with
        ``[memory.facts] promotion = "corroboration"``, promote a proposed one.
        """
        run_id, agent, repo = check_run(run_id, agent, repo)
        if stance not in STANCES:
            raise InvalidInput("stance", stance, "must be support or contradict")
        note = clean_vote_reason(reason)
        row = self._require(fact_id)
        if row.status not in LIVE or row.scope not in visible_scopes(agent, repo):
            # A fact the run may not see is as absent as one that never existed.
            raise UnknownFact(fact_id)
        with self._write():
            existing = self.store.fact_vote_get(self.workspace, fact_id, run_id)
            if existing is not None:
                metrics.FACT_VOTES.labels(stance=stance, reason="repeat").inc()
                return VoteResult(
                    vote_of(existing), duplicate=True, confidence=self.confidence_of(row)
                )
            authors = {p.run_id for p in self.store.fact_provenance(fact_id)} | {row.run_id}
            counted, why = vote_counts(
                exposed=self.store.fact_was_exposed(self.workspace, run_id, fact_id),
                author_run=run_id in authors,
                repeat=False,
            )
            vote = VoteRow(
                workspace=self.workspace,
                fact_id=fact_id,
                revision=row.revision,
                run_id=run_id,
                agent=agent,
                repo=repo,
                stance=stance,
                counted=counted,
                reason=why,
                at=self.now(),
                note=note,
            )
            self.store.fact_vote_add(vote)
            change = self._after_vote(row) if counted else None
        metrics.FACT_VOTES.labels(stance=stance, reason=why).inc()
        current = self._require(fact_id)
        return VoteResult(vote_of(vote), False, self.confidence_of(current), change)

    def _after_vote(self, row: FactRow) -> str | None:
        facts = self.settings.memory.facts
        support = self.store.fact_tally(self.workspace, row.id, row.revision, "support", 0.0)
        since = row.confirmed_at or 0.0
        against = self.store.fact_tally(self.workspace, row.id, row.revision, "contradict", since)
        if row.status == ACTIVE and is_suspect(support, against, facts.suspect_contradictions):
            after = self._save(row, status=SUSPECT)
            self._journal("suspect", SYSTEM, row, after)
            return f"{ACTIVE}->{SUSPECT}"
        if (
            row.status == PROPOSED
            and facts.promotion == "corroboration"
            and corroborated(
                support,
                against,
                min_runs=facts.corroboration_runs,
                min_agents=facts.corroboration_agents,
            )
        ):
            if not self._room_for_kept():
                log.info("facts.promotion_skipped fact=%s reason=memory_full", row.id)
                return None
            after = self._save(row, status=ACTIVE, updated_at=self.now())
            self._journal("promote", SYSTEM, row, after)
            return f"{PROPOSED}->{ACTIVE}"
        return None

    def votes(self, fact_id: str) -> VoteSummary:
        """Every vote on a fact, counted or not, with the tallies behind its confidence."""
        row = self._require(fact_id)
        support = self.store.fact_tally(self.workspace, row.id, row.revision, "support", 0.0)
        against = self.store.fact_tally(self.workspace, row.id, row.revision, "contradict", 0.0)
        return VoteSummary(
            votes=tuple(vote_of(v) for v in self.store.fact_votes(self.workspace, fact_id)),
            support=support,
            contradict=against,
            confidence=self.confidence_of(row, (support, against)),
        )


def _grade(row: FactRow | Fact) -> str:
    """How a fact may be served: as an instruction (active) or as data (evidence, suspect)."""
    return "instruction" if row.status in INSTRUCTION else "data"


def _check_surface(surface: str) -> None:
    if surface not in SURFACES:
        raise InvalidInput("surface", surface, "must be one of " + ", ".join(SURFACES))


def block_item(row: FactRow | Fact, conf: float, score: float) -> BlockItem:
    """``row`` as a facts-block entry with its confidence and relevance score."""
    return BlockItem(
        fact_id=row.id,
        revision=row.revision,
        kind=row.kind,
        scope=row.scope,
        body=row.body,
        pinned=row.pinned,
        score=round(score, 4),
        confidence=conf,
    )


def _empty_block(status: BlockStatus, withheld: int = 0) -> FactsBlock:
    return FactsBlock(
        status=status,
        items=(),
        text="",
        tokens=0,
        pinned=0,
        recalled=0,
        dropped=0,
        nothing_matched=False,
        withheld=withheld,
    )
