"""The literal half of fact search, over one workspace's normalized bodies held in memory.

A search must find every fact whose normalized body contains the query (``phrase``) or all of
its content words (``words``) — see :func:`fleetmem.core.facts.literal_matcher` — and count,
for the facts that matched by meaning, how many of the query's words they contain. Testing
2,000 bodies one by one in Python cost a millisecond a search; here the bodies are joined
into one string, so a term is located with C-speed ``str.find`` and mapped back to its fact
by bisection, and Python only touches the facts that term occurs in and the facts that
matched by meaning.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Iterable, Sequence
from typing import NamedTuple

from fleetmem.store.facts import SearchRow

#: Joins the bodies; normalized text never holds it (whitespace runs become one space), so no
#: term can match across two facts.
_SEPARATOR = "\n"


class IndexedFact(NamedTuple):
    """The few columns of a fact that search reads."""

    id: str
    norm: str
    content_hash: str
    created_at: float
    status: str
    scope: str


class FactTextIndex:
    """Every fact of one workspace, built once per change of the workspace's facts."""

    def __init__(self, facts: Iterable[IndexedFact]) -> None:
        self.facts: tuple[IndexedFact, ...] = tuple(facts)
        self._position = {fact.id: i for i, fact in enumerate(self.facts)}
        starts: list[int] = []
        offset = 0
        for fact in self.facts:
            starts.append(offset)
            offset += len(fact.norm) + len(_SEPARATOR)
        self._starts = starts
        self._text = _SEPARATOR.join(fact.norm for fact in self.facts)

    def containing(self, term: str) -> set[int]:
        """Positions of the facts whose normalized body contains ``term``."""
        if not term:
            return set(range(len(self.facts)))
        found: set[int] = set()
        starts, find = self._starts, self._text.find
        at = find(term)
        while at >= 0:
            i = bisect_right(starts, at) - 1
            found.add(i)
            # The rest of this fact cannot add anything: resume at the next one.
            at = find(term, starts[i + 1]) if i + 1 < len(starts) else -1
        return found

    def holders(
        self, words: Sequence[str], statuses: Collection[str], scopes: Collection[str] | None
    ) -> dict[str, frozenset[str]]:
        """For each of ``words`` (normalized), the ids of the facts of ``statuses`` and
        ``scopes`` whose normalized body contains it, as ``FactStore.fact_word_holders``
        defines them."""
        facts = self.facts
        out: dict[str, frozenset[str]] = {}
        for word in words:
            out[word] = frozenset(
                facts[i].id
                for i in self.containing(word)
                if facts[i].status in statuses and (scopes is None or facts[i].scope in scopes)
            )
        return out

    def search_rows(
        self,
        statuses: Collection[str],
        scopes: Collection[str] | None,
        *,
        ids: Sequence[str],
        phrase: str,
        words: Sequence[str],
        ids_if_worded: Sequence[str] = (),
    ) -> list[SearchRow]:
        """The candidates of one search, as ``FactStore.fact_search_rows`` defines them: facts
        among ``ids``, among ``ids_if_worded`` when they contain one of ``words``, or matching
        ``phrase`` / all ``words`` literally, each with how many of ``words`` it contains."""
        facts = self.facts
        by_phrase = self.containing(phrase) if phrase else set()
        # All words: locate the first, then test the others only where it occurs.
        by_words: set[int] = set()
        if words:
            by_words = self.containing(words[0])
            for word in words[1:]:
                by_words = {i for i in by_words if word in facts[i].norm}
        wanted = {self._position[i] for i in ids if i in self._position}
        worded = {self._position[i] for i in ids_if_worded if i in self._position}
        out: list[SearchRow] = []
        for i in sorted(by_phrase | by_words | wanted | worded):
            fact = facts[i]
            if fact.status not in statuses or (scopes is not None and fact.scope not in scopes):
                continue
            if i in by_phrase:
                literal: str | None = "phrase"
            elif i in by_words:
                literal = "words"
            else:
                literal = None
            norm = fact.norm
            found = len(words) if literal == "words" else sum(word in norm for word in words)
            if literal is None and i not in wanted and not found:
                continue
            out.append(SearchRow(fact.id, fact.content_hash, fact.created_at, literal, found))
        return out


class LiteralReadsMixin:
    """The literal reads of ``FactStore``, as both stores serve them: from a
    :class:`FactTextIndex` of the workspace that the store keeps (``_text_index``), rebuilt
    only after a fact changed."""

    def _text_index(self, workspace: str) -> FactTextIndex:
        raise NotImplementedError

    def fact_search_rows(
        self,
        workspace: str,
        statuses: Sequence[str],
        scopes: Sequence[str] | None,
        *,
        ids: Sequence[str],
        phrase: str,
        words: Sequence[str],
        ids_if_worded: Sequence[str] = (),
    ) -> list[SearchRow]:
        """Facts among ``ids``, among ``ids_if_worded`` when they contain one of ``words``, or
        matching ``phrase`` / all ``words`` literally; with how many of ``words`` each
        contains (substrings of the normalized body, as
        :func:`fleetmem.core.facts.literal_matcher` matches)."""
        return self._text_index(workspace).search_rows(
            frozenset(statuses),
            None if scopes is None else frozenset(scopes),
            ids=ids,
            phrase=phrase,
            words=words,
            ids_if_worded=ids_if_worded,
        )

    def fact_word_holders(
        self,
        workspace: str,
        statuses: Sequence[str],
        scopes: Sequence[str] | None,
        words: Sequence[str],
    ) -> dict[str, frozenset[str]]:
        """For each word, the facts containing it, over the same index as search."""
        return self._text_index(workspace).holders(
            words, frozenset(statuses), None if scopes is None else frozenset(scopes)
        )
