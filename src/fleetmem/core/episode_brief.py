"""The short form of an episode in a briefing, built by code from fleetmem's own episode row.

A recall answer carries the provider's full rendering of each episode (about a kilobyte).
A briefing cannot: its episodes section has a quarter of ``briefing_max_chars`` (500
characters by default), and items are dropped whole, so full renderings would almost never
fit. The provider still decides *which* episodes a briefing shows (and fleetmem's index still
decides which it may show); this module decides *how*: a header of provenance from the row
and a few short lines of what happened, made from the stored episode's fields, never from the
provider's text.

The text comes at several sizes (:data:`TEXT_BUDGETS`): the composer picks, for the whole
section, the largest size at which the most episodes fit. Everything here is pure and
deterministic: the same row and budget always give the same item.

Inside a briefing, ``repo`` and ``provider`` are the same for every episode, so they are
carried once by the episodes section. So are the ``agent``, ``adapter``, ``model`` and
``branch`` most of its episodes share (:func:`shared_labels`), as defaults: an item whose own
value differs keeps it, one without the label has the section's. Runs of one agent nearly
always share its adapter and model, so the section says them once and items pay nothing for
them. :func:`full_provenance` puts every label back in each item's provenance, in
:data:`FULL_PROVENANCE_ORDER` (recall's order).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final

from fleetmem.core.fence import sanitize
from fleetmem.core.wrapper import MARKER_NAMES, Item, Section, Value, attrs, is_safe_value

#: Text sizes tried for the section, largest first; 0 is the header alone (empty text).
TEXT_BUDGETS: Final = (320, 260, 210, 170, 140, 115, 95, 80, 65, 50, 38, 26, 14, 0)
#: A shortened "what happened" line shorter than this says too little to be worth its room.
MIN_WHAT_CHARS: Final = 30
#: The most files or failure classes a line names before "(+N more)".
MAX_LISTED: Final = 3
#: Reasons that add nothing to the outcome, so the text leaves them out.
_PLAIN_REASONS: Final = frozenset({"completed", "unknown"})
#: Labels an episodes section carries for its items (all but ``repo`` and ``provider`` as
#: defaults an item may override).
SECTION_KEYS: Final = ("repo", "provider", "agent", "adapter", "model", "branch")
#: The order of an episode's full provenance (then ``provider``), as in a recall answer.
FULL_PROVENANCE_ORDER: Final = (
    "id",
    "run",
    "agent",
    "adapter",
    "model",
    "repo",
    "branch",
    "outcome",
    "started",
)
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True, slots=True)
class EpisodeBrief:
    """What a briefing may say about one episode: labels from fleetmem's row, and the
    agent-written parts (``what``, ``files``, ``failures``, ``reason``) as fenced text."""

    episode_id: str
    run_id: str
    agent: str
    branch: str | None
    outcome: str
    started_at: float
    reason: str = ""
    what: str = ""
    files: tuple[str, ...] = ()
    failures: tuple[tuple[str, int], ...] = ()
    adapter: str | None = None
    model: str | None = None

    def cleaned(self) -> EpisodeBrief:
        """Every string sanitised once, so trying many sizes costs no more sanitising."""
        return replace(
            self,
            episode_id=_clean(self.episode_id),
            run_id=_clean(self.run_id),
            agent=_clean(self.agent),
            branch=None if self.branch is None else _clean(self.branch),
            outcome=_clean(self.outcome),
            reason=_clean(self.reason),
            what=_clean(self.what),
            files=tuple(_clean(f) for f in self.files),
            failures=tuple((_clean(c), n) for c, n in self.failures),
            adapter=None if self.adapter is None else _clean(self.adapter),
            model=None if self.model is None else _clean(self.model),
        )

    def item(self, budget: int, defaults: Mapping[str, Value] | None = None) -> Item:
        """The briefing item with a text of at most ``budget`` characters (before the
        renderer's sanitising, which only ever neutralises a marker look-alike), leaving out
        a label equal to its section's default for it."""
        defaults = defaults or {}
        return Item(
            kind="episode",
            text=brief_text(self, budget),
            provenance=attrs(
                id=self.episode_id,
                run=self.run_id,
                agent=None if defaults.get("agent") == self.agent else self.agent,
                adapter=None if defaults.get("adapter") == self.adapter else self.adapter,
                model=None if defaults.get("model") == self.model else self.model,
                branch=None if defaults.get("branch") == self.branch else self.branch,
                outcome=self.outcome,
                started=_iso(self.started_at),
            ),
            untrusted=True,
        )


def brief_from_episode(
    *,
    episode_id: str,
    run_id: str,
    agent: str,
    branch: str | None,
    outcome: str,
    started_at: float,
    body: Mapping[str, Any] | None,
    summary: str | None = None,
    adapter: str | None = None,
    model: str | None = None,
) -> EpisodeBrief:
    """The brief of a stored episode: labels from its row, the rest from its stored JSON.

    The summary (a model's, when one was made) says what happened; without one, the first
    sentence of the result excerpt does. Malformed fields are skipped, not trusted.
    """
    body = body or {}
    told = summary if isinstance(summary, str) and summary.strip() else body.get("summary")
    if isinstance(told, str) and told.strip():
        what = _one_line(told)
    else:
        excerpt = body.get("result_excerpt")
        what = first_sentence(excerpt) if isinstance(excerpt, str) else ""
    reason = body.get("reason")
    touched = body.get("files_touched")
    files = [f for f in touched if isinstance(f, str) and f] if isinstance(touched, list) else []
    return EpisodeBrief(
        episode_id=episode_id,
        run_id=run_id,
        agent=agent,
        branch=branch,
        outcome=outcome,
        started_at=started_at,
        reason=reason if isinstance(reason, str) else "",
        what=what,
        files=tuple(files),
        failures=_failures(body.get("verify_failures")),
        adapter=adapter,
        model=model,
    )


def _failures(raw: object) -> tuple[tuple[str, int], ...]:
    if not isinstance(raw, list):
        return ()
    out: list[tuple[str, int]] = []
    for entry in raw:
        if isinstance(entry, Mapping):
            cls, count = entry.get("error_class"), entry.get("count")
            if isinstance(cls, str) and cls and isinstance(count, int) and count > 0:
                out.append((cls, count))
    return tuple(out)


# --------------------------------------------------------------------------- text


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` on one line (all of it when it has no sentence end)."""
    flat = _one_line(text)
    found = _SENTENCE_END.search(flat)
    return flat[: found.start()] if found else flat


def brief_text(brief: EpisodeBrief, budget: int) -> str:
    """At most ``budget`` characters about what happened, the most telling parts first.

    Lines: the reason (unless it only repeats the outcome) and what happened, then the files
    touched, then the failing checks. Room is given in that order of importance: the reason,
    one file and one failure class; then what happened (shortened at a word, if need be);
    then more files and failure classes.
    """
    if budget <= 0:
        return ""
    reason = "" if brief.reason in _PLAIN_REASONS else brief.reason
    files = _Listing("files: ", brief.files)
    checks = _Listing("failed checks: ", [_count(c, n) for c, n in brief.failures])
    what = ""

    def text() -> str:
        head = ": ".join(p for p in (reason, what) if p)
        return "\n".join(p for p in (head, files.line(), checks.line()) if p)

    if len(text()) > budget:
        reason = ""
    for listing in (files, checks):
        listing.shown = min(1, len(listing.entries))
        if len(text()) > budget:
            listing.shown = 0
    if brief.what:
        room = budget - len(text()) - (2 if reason else 1 if text() else 0)
        what = _shorten(brief.what, room)
        if len(text()) > budget:  # cannot happen by the arithmetic above; the cap is the rule
            what = ""
    for listing in (files, checks):
        while listing.shown and listing.shown < min(len(listing.entries), MAX_LISTED):
            listing.shown += 1
            if len(text()) > budget:
                listing.shown -= 1
                break
    return text()


class _Listing:
    """A line naming the first ``shown`` entries and counting the rest."""

    def __init__(self, label: str, entries: Sequence[str]) -> None:
        self.label = label
        self.entries = entries
        self.shown = 0

    def line(self) -> str:
        if not self.shown:
            return ""
        more = len(self.entries) - self.shown
        listed = ", ".join(self.entries[: self.shown])
        return f"{self.label}{listed}" + (f" (+{more} more)" if more > 0 else "")


def _shorten(text: str, room: int) -> str:
    """``text`` if it fits ``room``, else cut after a whole word with an ellipsis, else
    nothing (when what is left would be shorter than :data:`MIN_WHAT_CHARS`)."""
    if len(text) <= room:
        return text
    cut = text[: max(0, room - 1)]
    if text[len(cut) : len(cut) + 1] != " ":  # the cut fell inside a word: drop that word
        cut = cut[: cut.rfind(" ") + 1]
    cut = cut.rstrip(" ,;:")
    return cut + "…" if len(cut) >= MIN_WHAT_CHARS else ""


def _count(cls: str, n: int) -> str:
    return cls if n == 1 else f"{cls} x{n}"


# --------------------------------------------------------------------------- provenance


def shared_labels(briefs: Sequence[EpisodeBrief]) -> tuple[tuple[str, Value], ...]:
    """The section's default ``agent``, ``adapter``, ``model`` and ``branch``: for each, the
    value most of ``briefs`` have (at least two of them, or the only one; a tie goes to the
    better-ranked episode). No default when any episode lacks the label (a run with no model
    recorded, one on no branch), since an item without the label would then read as having the
    default."""
    return attrs(
        agent=_most_common([b.agent for b in briefs]),
        adapter=_most_common([b.adapter for b in briefs]),
        model=_most_common([b.model for b in briefs]),
        branch=_most_common([b.branch for b in briefs]),
    )


def _most_common(values: Sequence[str | None]) -> str | None:
    if not values or any(v is None for v in values):
        return None
    counts = {v: values.count(v) for v in values}  # insertion order is ranking order
    value, count = max(counts.items(), key=lambda kv: kv[1])
    if value is None or not is_safe_value(value):
        return None  # a section header cannot carry it; each item's fenced text does
    return value if count >= 2 or len(values) == 1 else None


def full_provenance(section: Section, item: Item) -> tuple[tuple[str, Value], ...]:
    """An episode item's provenance with the labels its section carries for it
    (:data:`SECTION_KEYS`) put back, in :data:`FULL_PROVENANCE_ORDER` then ``provider``.
    The item's own value wins over the section's default; absent values stay absent."""
    shared = dict(section.attrs)
    merged: dict[str, Value] = {k: shared[k] for k in SECTION_KEYS if k in shared}
    merged.update(item.provenance)
    keys: tuple[str, ...] = (*FULL_PROVENANCE_ORDER, "provider")
    return tuple((k, merged[k]) for k in keys if k in merged)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clean(text: str) -> str:
    return sanitize(text, MARKER_NAMES)
