"""Briefings and recall answers: capped, sectioned wrapper documents (pure).

Both take plain item lists, already ordered by their section's own ranking, and a nonce;
neither reads a store or a clock, so the same inputs always give the same bytes.

Briefing (seed 000 REQ-14): sections collisions, recent_runs, facts, episodes, in that order,
each with an item cap and a share of ``max_chars``. Sections fill in order; an item that does
not fit its section's share, the character cap or the 4,096-byte cap is dropped whole, never
cut, and the section ends with how many it left out and a pointer to recall. A briefing
outside a repository, or with nothing in any section, is the empty string. Episodes come as
briefs and are shown in their short form (:mod:`fleetmem.core.episode_brief`), at the
largest text size that shows the most of them.

Recall (REQ-12): sections facts, episodes, recent_runs, never interleaved or re-scored; at
most 16 KiB, dropping from the end of episodes, then recent runs, then facts, with the count
in the document's ``truncated`` attribute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Final

from fleetmem.core.durations import format_duration
from fleetmem.core.episode_brief import TEXT_BUDGETS, EpisodeBrief, shared_labels
from fleetmem.core.wrapper import (
    Attrs,
    Document,
    Item,
    Section,
    Value,
    attrs,
    clean_attrs,
    document_close,
    document_open,
    sanitize_item,
    sanitized_item_block,
    section_close,
    section_open,
)

MIN_MAX_CHARS: Final = 500
MAX_MAX_CHARS: Final = 4000
DEFAULT_MAX_CHARS: Final = 2000
MAX_BRIEFING_BYTES: Final = 4096
RECALL_MAX_BYTES: Final = 16 * 1024
# Items beyond this per section are never looked at; it bounds the omitted count's width.
_MAX_CONSIDERED: Final = 999


@dataclass(frozen=True, slots=True)
class SectionRule:
    """A briefing section: its name, item cap and share of ``max_chars`` in percent."""

    name: str
    max_items: int
    share_percent: int


BRIEFING_RULES: Final = (
    SectionRule("collisions", 10, 25),
    SectionRule("recent_runs", 5, 25),
    SectionRule("facts", 8, 35),
    SectionRule("episodes", 3, 25),
)
RECALL_ORDER: Final = ("facts", "episodes", "recent_runs")
_MAX_ITEMS: Final = {rule.name: rule.max_items for rule in BRIEFING_RULES}


# --------------------------------------------------------------------------- items


def iso(ts: float) -> str:
    """UNIX seconds as an RFC 3339 UTC time to the second, e.g. ``2026-11-28T09:31:47Z``."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fact_item(
    *,
    fact_id: str,
    text: str,
    scope: str,
    status: str | None = None,
    confidence: float | None = None,
    agent: str | None = None,
    run_id: str | None = None,
    created_at: float | None = None,
    untrusted: bool = True,
) -> Item:
    """A fact; ``status`` is e.g. ``live`` or ``suspect`` (suspect ones are marked so)."""
    return Item(
        kind="fact",
        text=text,
        provenance=attrs(
            id=fact_id,
            scope=scope,
            status=status,
            confidence=confidence,
            agent=agent,
            run=run_id,
            created=None if created_at is None else iso(created_at),
        ),
        untrusted=untrusted,
    )


def episode_item(
    *,
    episode_id: str,
    provider: str,
    text: str,
    run_id: str,
    agent: str,
    adapter: str,
    model: str | None,
    repo: str,
    branch: str | None,
    outcome: str,
    started_at: float,
) -> Item:
    """A recalled episode as recall shows it: the provider's text, every label from
    fleetmem's episode row. Briefings use the short form instead
    (:class:`fleetmem.core.episode_brief.EpisodeBrief`)."""
    return Item(
        kind="episode",
        text=text,
        provenance=attrs(
            id=episode_id,
            run=run_id,
            agent=agent,
            adapter=adapter,
            model=model,
            repo=repo,
            branch=branch,
            outcome=outcome,
            started=iso(started_at),
            provider=provider,
        ),
        untrusted=True,
    )


def recent_run_item(
    *,
    run_id: str,
    agent: str,
    adapter: str,
    outcome: str,
    reason: str,
    ended_at: float,
    duration_ms: int,
    branch: str | None = None,
    pull_request: str | None = None,
) -> Item:
    """A closed run; its pull request URL (harness-supplied text) is the fenced text."""
    return Item(
        kind="run",
        text=f"pull request {pull_request}" if pull_request else "",
        provenance=attrs(
            run=run_id,
            agent=agent,
            adapter=adapter,
            branch=branch,
            outcome=outcome,
            reason=reason,
            ended=iso(ended_at),
            duration=format_duration(max(0, duration_ms) / 1000),
        ),
    )


def collision_item(
    *,
    run_id: str,
    agent: str,
    branch: str | None,
    strength: str,
    last_seen: float,
    files: Sequence[str],
    overlap: Sequence[str],
    max_files: int = 10,
) -> Item:
    """Another live run on the repository; ``strength`` is ``files``, ``branch`` or ``repository``.

    The paths it reported are agent-supplied, so they are the fenced text.
    """
    shared = sorted(set(overlap))
    others = sorted(set(files) - set(shared))
    parts = []
    if shared:
        parts.append("editing your files: " + _listing(shared, max_files))
    if others:
        parts.append(("also edited: " if shared else "edited: ") + _listing(others, max_files))
    return Item(
        kind="run",
        text="; ".join(parts) if parts else "no edits reported yet",
        provenance=attrs(
            run=run_id,
            agent=agent,
            branch=branch,
            collision=strength,
            seen=iso(last_seen),
        ),
    )


def _listing(paths: Sequence[str], limit: int) -> str:
    shown = ", ".join(paths[:limit])
    return shown if len(paths) <= limit else f"{shown} (+{len(paths) - limit} more)"


# --------------------------------------------------------------------------- briefing


@dataclass(frozen=True, slots=True)
class BriefingInputs:
    """Everything a briefing is made of, each list in its section's ranking order.

    Episodes come as briefs (their short form is made here, at the size that fits); the
    other sections as ready items.
    """

    repo: str | None
    branch: str | None = None
    collisions: Sequence[Item] = ()
    recent_runs: Sequence[Item] = ()
    facts: Sequence[Item] = ()
    episodes: Sequence[EpisodeBrief] = ()
    episodes_provider: str | None = None
    episodes_degraded: str | None = None


@dataclass(frozen=True, slots=True)
class Composed:
    """A composed briefing or recall answer; ``text`` is empty for an empty briefing."""

    text: str
    document: Document | None
    nonce: str | None
    shown: Mapping[str, int] = field(default_factory=dict)
    omitted: Mapping[str, int] = field(default_factory=dict)
    truncated: int = 0
    degraded: str | None = None

    @property
    def empty(self) -> bool:
        return not self.text

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def size_bytes(self) -> int:
        return len(self.text.encode("utf-8"))

    def ids(self, section: str, key: str = "id") -> tuple[str, ...]:
        """The ``key`` provenance values of the items shown in ``section`` (e.g. fact ids)."""
        found = self.document.section(section) if self.document else None
        if found is None:
            return ()
        return tuple(str(v) for item in found.items if (v := item.get(key)) is not None)


def check_max_chars(max_chars: int) -> int:
    """``max_chars`` if it is an integer from 500 to 4,000, else ValueError."""
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise ValueError("briefing_max_chars must be an integer")
    if not MIN_MAX_CHARS <= max_chars <= MAX_MAX_CHARS:
        raise ValueError(f"briefing_max_chars must be between {MIN_MAX_CHARS} and {MAX_MAX_CHARS}")
    return max_chars


def _size(text: str) -> tuple[int, int]:
    return len(text), len(text.encode("utf-8"))


def _shell_variants(inputs: BriefingInputs, shared: Attrs) -> list[tuple[Attrs, Attrs, Attrs]]:
    """Document and episodes-section attributes, and the default labels the section gives
    its items, fullest first, for when space is very short.

    The episodes section carries the ``repo`` and ``provider`` its items share, and the
    ``shared`` default labels (agent, adapter, model, branch) of its candidates; without
    ``repo`` it shows no episode, since its items would lose their repository.
    """
    # Labels outside the safe character set are withheld here already, so the document
    # composed is the one parse() reads back.
    doc_full = clean_attrs(attrs(repo=inputs.repo, branch=inputs.branch))
    doc_repo = clean_attrs(attrs(repo=inputs.repo))
    ep_plain = clean_attrs(attrs(repo=inputs.repo, provider=inputs.episodes_provider))
    ep_degraded = clean_attrs(attrs(degraded=inputs.episodes_degraded))
    ep_full = (*ep_plain, *shared, *ep_degraded)
    return [
        (doc_full, ep_full, shared),
        (doc_repo, ep_full, shared),
        ((), ep_full, shared),
        ((), (*ep_plain, *ep_degraded), ()),
        ((), ep_degraded, ()),
        ((), (), ()),
    ]


@dataclass(slots=True)
class _Room:
    """What the document has used so far, against its character and byte caps."""

    chars: int
    nbytes: int
    max_chars: int
    max_bytes: int = MAX_BRIEFING_BYTES

    def fill(self, items: Sequence[Item], nonce: str, share: int) -> tuple[list[Item], list[str]]:
        """The items that fit ``share`` and the caps, in order, each whole; the rest skipped.

        Takes the room they use. Items must already be sanitised.
        """
        kept: list[Item] = []
        blocks: list[str] = []
        section_used = 0
        for item in items:
            block = sanitized_item_block(item, nonce)
            size_c, size_b = _size(block)
            if (
                section_used + size_c > share
                or self.chars + size_c > self.max_chars
                or self.nbytes + size_b > self.max_bytes
            ):
                continue  # dropped whole; counted in the section's omitted line
            kept.append(item)
            blocks.append(block)
            section_used += size_c
            self.chars, self.nbytes = self.chars + size_c, self.nbytes + size_b
        return kept, blocks


def compose_briefing(inputs: BriefingInputs, *, max_chars: int, nonce: str) -> Composed:
    """The briefing document for ``inputs`` (see the module docstring for the rules).

    Episodes carry their ``adapter`` and ``model`` unless that shows fewer of them: runs of
    several agents in one repository rarely share those labels, so each item would carry its
    own, and a default-size briefing would then show one episode where it could show two.
    Which one is used depends only on the inputs, so the document stays deterministic.

    Raises :class:`fence.NonceCollision` when the nonce occurs in any item; draw another.
    """
    full = _compose(inputs, max_chars=max_chars, nonce=nonce)
    wanted = min(len(inputs.episodes), _MAX_ITEMS["episodes"])
    if full.shown.get("episodes", 0) >= wanted:
        return full
    lean = replace(inputs, episodes=[replace(b, adapter=None, model=None) for b in inputs.episodes])
    shorter = _compose(lean, max_chars=max_chars, nonce=nonce)
    more = shorter.shown.get("episodes", 0) > full.shown.get("episodes", 0)
    return shorter if more else full


def _compose(inputs: BriefingInputs, *, max_chars: int, nonce: str) -> Composed:
    check_max_chars(max_chars)
    given: dict[str, list[Item]] = {
        "collisions": _shown_sanitized("collisions", inputs.collisions),
        "recent_runs": _shown_sanitized("recent_runs", inputs.recent_runs),
        "facts": _shown_sanitized("facts", inputs.facts),
    }
    briefs = list(inputs.episodes[:_MAX_CONSIDERED])
    if inputs.repo is None or not (briefs or any(given.values())):
        return Composed(text="", document=None, nonce=None, degraded=inputs.episodes_degraded)
    counts = {name: len(items) for name, items in given.items()}
    counts["episodes"] = len(briefs)
    # Only the first max_items episodes can be shown; their labels decide what is shared.
    candidates = [b.cleaned() for b in briefs[: _MAX_ITEMS["episodes"]]]
    shared = shared_labels(candidates)

    close = document_close(nonce)
    for variant in _shell_variants(inputs, shared):
        doc_attrs, episode_attrs, defaults = variant  # the last one tried is the one used
        shell = Document(kind="briefing", sections=(), attrs=doc_attrs)
        used_c, used_b = _size(document_open(shell, nonce) + close)
        for rule in BRIEFING_RULES:
            section_attrs = episode_attrs if rule.name == "episodes" else ()
            worst = _worst_shell(rule.name, section_attrs, counts[rule.name], nonce)
            used_c, used_b = used_c + worst[0], used_b + worst[1]
        if used_c <= max_chars and used_b <= MAX_BRIEFING_BYTES:
            break
    else:  # unreachable for max_chars >= 500; kept so the caps hold whatever the inputs
        raise ValueError("a briefing shell does not fit briefing_max_chars")

    room = _Room(chars=used_c, nbytes=used_b, max_chars=max_chars)
    sections: list[Section] = []
    parts = [document_open(shell, nonce)]
    for rule in BRIEFING_RULES:
        share = max_chars * rule.share_percent // 100
        if rule.name == "episodes":
            showable = candidates if "repo" in dict(episode_attrs) else []
            kept, blocks = _fill_episodes(showable, dict(defaults), room, nonce, share)
        else:
            kept, blocks = room.fill(given[rule.name][: rule.max_items], nonce, share)
        section = Section(
            name=rule.name,
            items=tuple(kept),
            attrs=episode_attrs if rule.name == "episodes" else (),
            omitted=counts[rule.name] - len(kept),
        )
        sections.append(section)
        parts.append(section_open(section, nonce))
        parts.extend(blocks)
        parts.append(section_close(section))
    parts.append(close)
    document = replace(shell, sections=tuple(sections))
    return Composed(
        text="".join(parts),
        document=document,
        nonce=nonce,
        shown={s.name: len(s.items) for s in sections},
        omitted={s.name: s.omitted for s in sections},
        degraded=inputs.episodes_degraded,
    )


def _fill_episodes(
    cleaned: Sequence[EpisodeBrief],
    defaults: Mapping[str, Value],
    room: _Room,
    nonce: str,
    share: int,
) -> tuple[list[Item], list[str]]:
    """The episodes section's items at the largest text size that shows the most of them.

    The smallest size (no text) shows the most episodes that can fit; a bisection over
    :data:`TEXT_BUDGETS` finds the largest size that still shows as many, so more episodes
    beat longer texts and room buys detail. Each size is tried on a copy of the room.
    Deterministic: it depends only on its arguments.
    """
    if not cleaned:
        return [], []

    def shown_at(index: int) -> list[Item]:
        items = [b.item(TEXT_BUDGETS[index], defaults) for b in cleaned]
        return replace(room).fill(items, nonce, share)[0]

    best = shown_at(0)
    if len(best) < len(cleaned):
        last = len(TEXT_BUDGETS) - 1
        most = len(smallest := shown_at(last))
        low, high, best = 0, last, smallest  # invariant: the size at `high` shows `most`
        while low < high:
            middle = (low + high) // 2
            tried = shown_at(middle)
            if len(tried) >= most:
                high, best = middle, tried
            else:
                low = middle + 1
    # Joining clean parts leaves the text clean, but the document must hold exactly what
    # the renderer would, so the winners are sanitised and fitted once more for real.
    return room.fill([sanitize_item(i) for i in best], nonce, share)


def _shown_sanitized(name: str, items: Sequence[Item]) -> list[Item]:
    """The items a section considers, the first ``max_items`` (the only ones that can be
    shown) sanitised. The rest are only counted in the omitted line, so sanitising them,
    ~100 facts counted by id in every briefing, would cost time and change nothing."""
    considered = list(items[:_MAX_CONSIDERED])
    cap = _MAX_ITEMS[name]
    return [sanitize_item(i) for i in considered[:cap]] + considered[cap:]


def _worst_shell(name: str, section_attrs: Attrs, given: int, nonce: str) -> tuple[int, int]:
    """The most a section's own lines can take: open, omitted line for all given, close."""
    if given == 0:
        return _size(section_open(Section(name=name, attrs=section_attrs), nonce))
    section = Section(name=name, attrs=section_attrs, omitted=given)
    return _size(section_open(section, nonce) + section_close(section))


# --------------------------------------------------------------------------- recall


def assemble_recall(
    *,
    facts: Sequence[Item],
    episodes: Sequence[Item],
    recent_runs: Sequence[Item],
    nonce: str,
    repo: str | None = None,
    provider: str | None = None,
    degraded: str | None = None,
    max_bytes: int = RECALL_MAX_BYTES,
) -> Composed:
    """A recall answer: facts, episodes and recent runs, at most ``max_bytes`` (16 KiB).

    Over the cap, items go from the end of episodes, then of recent runs, then of facts;
    ``truncated`` says how many. Raises :class:`fence.NonceCollision` like the renderer.
    """
    lists: dict[str, list[Item]] = {
        "facts": [sanitize_item(i) for i in facts],
        "episodes": [sanitize_item(i) for i in episodes],
        "recent_runs": [sanitize_item(i) for i in recent_runs],
    }
    blocks = {
        name: [sanitized_item_block(i, nonce) for i in items] for name, items in lists.items()
    }
    block_bytes = {name: [len(b.encode("utf-8")) for b in bs] for name, bs in blocks.items()}
    section_attrs: dict[str, Attrs] = {"episodes": clean_attrs(attrs(provider=provider))}
    close = document_close(nonce)

    def nbytes(text: str) -> int:
        return len(text.encode("utf-8"))

    def doc_attrs(truncated: int) -> Attrs:
        return clean_attrs(attrs(repo=repo, degraded=degraded, truncated=truncated))

    def open_size(truncated: int) -> int:
        return nbytes(
            document_open(Document(kind="recall", sections=(), attrs=doc_attrs(truncated)), nonce)
        )

    # A section's own lines: self-closing when empty, else its opening and closing lines.
    shells: dict[str, tuple[int, int]] = {}
    for name in RECALL_ORDER:
        empty = Section(name=name, attrs=section_attrs.get(name, ()))
        full = Section(name=name, items=(Item(kind="run", text=""),), attrs=empty.attrs)
        shells[name] = (
            nbytes(section_open(empty, nonce)),
            nbytes(section_open(full, nonce) + section_close(full)),
        )

    def size(truncated: int) -> int:
        total = open_size(truncated) + nbytes(close)
        for name in RECALL_ORDER:
            total += shells[name][1 if lists[name] else 0] + sum(block_bytes[name])
        return total

    truncated = 0
    drop_order = ("episodes", "recent_runs", "facts")
    while size(truncated) > max_bytes:
        victim = next((n for n in drop_order if lists[n]), None)
        if victim is None:
            break
        lists[victim].pop()
        blocks[victim].pop()
        block_bytes[victim].pop()
        truncated += 1

    sections = tuple(
        Section(name=name, items=tuple(lists[name]), attrs=section_attrs.get(name, ()))
        for name in RECALL_ORDER
    )
    doc = Document(kind="recall", sections=sections, attrs=doc_attrs(truncated))
    parts = [document_open(doc, nonce)]
    for section in doc.sections:
        parts.append(section_open(section, nonce))
        parts.extend(blocks[section.name])
        parts.append(section_close(section))
    parts.append(close)
    return Composed(
        text="".join(parts),
        document=doc,
        nonce=nonce,
        shown={name: len(lists[name]) for name in RECALL_ORDER},
        truncated=truncated,
        degraded=degraded,
    )
