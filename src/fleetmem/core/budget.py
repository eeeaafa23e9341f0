"""Token budgets: counting, truncation and load reports (pure).

A *load report* answers "how much of this reaches the agent": the text's tokens, its budget,
the tokens actually delivered, a state (``under`` below 90 % of the budget, ``near`` from 90 %
to 100 %, ``over`` above), and, when over, the exact region that is skipped as character and
line ranges. The same function produces the delivered text that a run's context carries, so the
meter and the run agree to the token (FR-50).

Accounting when a text is over its budget: it takes its whole budget (``used == budget``) and
``skipped_tokens`` is how far over it is (``tokens - budget``: trim that many and the whole
text reaches the agent), so the seed's 4,100-token Notes file against 1,500 reads "1,500 /
1,500 · 2,600 skipped" (S6). What the agent receives, the head and tail in whole lines and
the marker line between them, is never more than the budget; ``delivered_tokens`` is its
exact count, and the marker's own tokens are part of it. Under budget, ``used``,
``delivered_tokens`` and ``tokens`` are the same.

Two shapes of material, two rules (FR-43):

* **Authored** text (a context file, a notebook) keeps its head and tail and drops the middle:
  the first 70 % of the room left after the marker line from the top, the last 30 % from the
  bottom, and one marker line between them. Cuts fall on line boundaries: the head is whole
  lines from the top, the tail whole lines from the bottom, and room one side cannot use goes
  to the other. Only when the first or last line alone is longer than its share is the cut
  made inside a line, on a token boundary (moved back to a character boundary when a token
  ends inside a character).
* **Feeds** (recent runs, recent activity, facts in rank order) keep whole entries from the top,
  newest (or best) first, and drop older entries whole, with one marker line at the end.

Tokens come from a :class:`TokenCodec` passed in (``fleetmem.tokenize`` in production), so this
module stays free of I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = [
    "AUTHORED_MARKER",
    "FAIR_FLOOR_SHARE",
    "FEED_MARKER",
    "HEAD_SHARE",
    "NEAR_FROM",
    "LoadReport",
    "SkippedRegion",
    "State",
    "TokenCodec",
    "percent_of",
    "render_marked",
    "skipped_caption",
    "split_budget",
    "state_of",
    "truncate_authored",
    "truncate_feed",
]

State = Literal["under", "near", "over"]
Shape = Literal["authored", "feed"]

#: From this share of the budget on, a meter reads ``near``.
NEAR_FROM = 0.9
#: Share of an authored text's room kept from the top; the rest comes from the bottom.
HEAD_SHARE = 0.7

#: The one line an agent sees where the middle of an authored file was cut.
AUTHORED_MARKER = "[… skipped: the middle of this file does not fit its token budget …]"
#: The line an agent sees after the last feed entry that fit.
FEED_MARKER = "[… older entries not shown: they do not fit the token budget …]"

#: Labels of the marked block in previews and in "ask an agent" attachments (FR-42, FR-55).
SKIPPED_LABEL = "Skipped — the agent never sees this"
SKIPPED_END = "end of skipped region"

# A few rounds always suffice in practice (a re-encoded cut differs from the sliced token
# count by a token or two at the joins); the bound keeps a pathological text from looping.
_MAX_ROUNDS = 8


class TokenCodec(Protocol):
    """What the budget code needs from a tokenizer."""

    def encode(self, text: str) -> Sequence[int]: ...

    def count(self, text: str) -> int: ...

    def decode_bytes(self, tokens: Sequence[int]) -> bytes: ...


@dataclass(frozen=True, slots=True)
class SkippedRegion:
    """The part of the original text that is not delivered.

    ``char_start``/``char_end`` index the text as a Python string (code points), end exclusive;
    ``line_start``/``line_end`` are the 1-based lines the region touches, inclusive.
    """

    char_start: int
    char_end: int
    line_start: int
    line_end: int

    @property
    def chars(self) -> int:
        return self.char_end - self.char_start


@dataclass(frozen=True, slots=True)
class LoadReport:
    """How much of one text reaches the agent, and exactly what does."""

    tokens: int
    budget: int
    used: int
    skipped_tokens: int
    skipped: SkippedRegion | None
    delivered: str
    shape: Shape = "authored"
    #: The exact token count of ``delivered`` (``-1``: the same as ``used``).
    delivered_count: int = -1

    @property
    def delivered_tokens(self) -> int:
        """Tokens of the text the agent receives (marker included), at most ``budget``."""
        return self.used if self.delivered_count < 0 else self.delivered_count

    @property
    def percent(self) -> float:
        return percent_of(self.tokens, self.budget)

    @property
    def state(self) -> State:
        return state_of(self.tokens, self.budget)

    @property
    def truncated(self) -> bool:
        return self.skipped is not None


def percent_of(tokens: int, budget: int) -> float:
    """``tokens`` as a percentage of ``budget``, one decimal (a zero budget counts as one)."""
    return round(tokens * 100.0 / max(budget, 1), 1)


def state_of(tokens: int, budget: int) -> State:
    """``over`` above the budget, ``near`` from 90 % of it, ``under`` below."""
    if tokens > budget:
        return "over"
    if budget > 0 and tokens >= NEAR_FROM * budget:
        return "near"
    return "under"


def _region(text: str, start: int, end: int) -> SkippedRegion:
    line_start = text.count("\n", 0, start) + 1
    line_end = text.count("\n", 0, max(end - 1, start)) + 1
    return SkippedRegion(start, end, line_start, line_end)


# ---------------------------------------------------------------------------------------------
# Authored text: head and tail
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Cut:
    delivered: str
    used: int
    head_chars: int
    tail_start: int
    kept_tokens: int


def truncate_authored(
    text: str, budget: int, codec: TokenCodec, *, marker: str = AUTHORED_MARKER
) -> LoadReport:
    """Fit ``text`` into ``budget`` tokens by keeping its head and tail (FR-43).

    Under budget the text is delivered whole. Over it, the delivered text is the head, the
    marker on a line of its own, and the tail, cut on line boundaries, and its exact token
    count never exceeds ``budget``. A budget too small for the marker delivers nothing.
    """
    budget = max(budget, 0)
    total = codec.count(text)
    if total <= budget:
        return LoadReport(total, budget, total, 0, None, text)
    cut = _cut_on_lines(text, budget, codec, marker)
    if cut is None:
        cut = _truncate_by_tokens(text, budget, codec, marker=marker)
    if not cut.delivered:
        return LoadReport(total, budget, 0, total, _region(text, 0, len(text)), "")
    return LoadReport(
        total, budget, budget, total - budget, cut.skipped, cut.delivered, "authored", cut.used
    )


def _cut_on_lines(text: str, budget: int, codec: TokenCodec, marker: str) -> LoadReport | None:
    """The head and tail in whole lines, or None when the first and last lines together do
    not fit the room (then only a cut inside a line delivers anything of that end)."""
    lines = text.splitlines(keepends=True)
    room = budget - codec.count(f"\n{marker}\n")
    if room <= 0 or len(lines) < 2:
        return None
    head_room = int(room * HEAD_SHARE)
    head = _lines_that_fit(lines, head_room, codec, from_top=True)
    if head == 0 and _count(lines[:1], codec) + _count(lines[-1:], codec) <= room:
        head = 1  # a first line longer than the head's share still arrives whole if it can
    tail = _lines_that_fit(lines[head:], room - _count(lines[:head], codec), codec, from_top=False)
    if tail == 0:
        # The head's share left too little for the last line: keep the last line whole and
        # give the head what remains, so both ends still arrive as whole lines.
        head = _lines_that_fit(lines[:-1], room - _count(lines[-1:], codec), codec, from_top=True)
        tail = _lines_that_fit(
            lines[head:], room - _count(lines[:head], codec), codec, from_top=False
        )
    # What the tail could not use goes back to the head.
    head = _lines_that_fit(
        lines[: len(lines) - tail],
        room - _count(lines[len(lines) - tail :], codec),
        codec,
        from_top=True,
    )
    if head == 0 or tail == 0:
        return None
    while head > 0:
        head_text = "".join(lines[:head])
        tail_text = "".join(lines[len(lines) - tail :])
        joined = head_text if head_text.endswith("\n") else head_text + "\n"
        delivered = f"{joined}{marker}\n{tail_text}"
        used = codec.count(delivered)
        if used <= budget:
            region = _region(text, len(head_text), len(text) - len(tail_text))
            return LoadReport(0, budget, used, 0, region, delivered)
        head -= 1  # the joins cost a token or two more than the parts: give up a line
    return None


def _count(lines: Sequence[str], codec: TokenCodec) -> int:
    return codec.count("".join(lines)) if lines else 0


def _lines_that_fit(lines: Sequence[str], room: int, codec: TokenCodec, *, from_top: bool) -> int:
    """How many whole lines from the top (or bottom) of ``lines`` fit ``room`` tokens."""
    low, high = 0, len(lines)
    while low < high:
        mid = (low + high + 1) // 2
        part = lines[:mid] if from_top else lines[len(lines) - mid :]
        if _count(part, codec) <= room:
            low = mid
        else:
            high = mid - 1
    return low


def _truncate_by_tokens(
    text: str, budget: int, codec: TokenCodec, *, marker: str = AUTHORED_MARKER
) -> LoadReport:
    """The cut on token boundaries, for a text whose end lines are longer than their share:
    ``used`` is the exact token count of ``delivered`` and ``skipped`` the region cut."""
    tokens = codec.encode(text)
    total = len(tokens)
    budget = max(budget, 0)
    if total <= budget:
        return LoadReport(total, budget, total, 0, None, text)
    room = budget - codec.count(f"\n{marker}\n")
    if room <= 0:
        return LoadReport(total, budget, 0, total, _region(text, 0, len(text)), "")
    raw = text.encode("utf-8")
    head = int(room * HEAD_SHARE)
    tail = room - head
    best: _Cut | None = None
    for _ in range(_MAX_ROUNDS):
        cut = _cut(text, raw, tokens, head, tail, codec, marker)
        if cut.used > budget:
            if best is not None:
                break  # growing overshot: keep the best cut that fit
            excess = cut.used - budget
            shrink_head = min(head, max(1, round(excess * HEAD_SHARE)))
            head -= shrink_head
            tail = max(0, tail - (excess - shrink_head))
            continue
        best = cut
        if cut.used == budget or head + tail + (budget - cut.used) >= total:
            break
        head += budget - cut.used  # the joins cost fewer tokens than reserved: use them
    if best is None:
        best = _cut(text, raw, tokens, 0, 0, codec, marker)
        if best.used > budget:
            return LoadReport(total, budget, 0, total, _region(text, 0, len(text)), "")
    region = _region(text, best.head_chars, best.tail_start)
    return LoadReport(total, budget, best.used, total - best.kept_tokens, region, best.delivered)


def _cut(
    text: str,
    raw: bytes,
    tokens: Sequence[int],
    head: int,
    tail: int,
    codec: TokenCodec,
    marker: str,
) -> _Cut:
    total = len(tokens)
    head_bytes = len(codec.decode_bytes(tokens[:head])) if head else 0
    tail_bytes = len(codec.decode_bytes(tokens[total - tail :])) if tail else 0
    # A token may end inside a multi-byte character: "ignore" drops the partial character, so
    # the head ends before it and the tail starts after it.
    head_text = raw[:head_bytes].decode("utf-8", "ignore")
    tail_text = raw[len(raw) - tail_bytes :].decode("utf-8", "ignore")
    kept_head = _whole_tokens(
        tokens[:head], head_bytes - len(head_text.encode("utf-8")), codec, from_left=False
    )
    kept_tail = _whole_tokens(
        tokens[total - tail :] if tail else (),
        tail_bytes - len(tail_text.encode("utf-8")),
        codec,
        from_left=True,
    )
    parts = [head_text]
    if head_text and not head_text.endswith("\n"):
        parts.append("\n")
    parts.append(marker)
    if tail_text:
        parts.append("\n")
        parts.append(tail_text)
    delivered = "".join(parts)
    return _Cut(
        delivered=delivered,
        used=codec.count(delivered),
        head_chars=len(head_text),
        tail_start=len(text) - len(tail_text),
        kept_tokens=kept_head + kept_tail,
    )


def _whole_tokens(
    tokens: Sequence[int], dropped_bytes: int, codec: TokenCodec, *, from_left: bool
) -> int:
    """How many of ``tokens`` survive when ``dropped_bytes`` are cut off one end of them.

    Only the bytes of one partial character (at most three) are ever dropped, so this decodes
    at most three single tokens.
    """
    count = len(tokens)
    dropped = 0
    while dropped_bytes > 0 and count > 0:
        index = dropped if from_left else len(tokens) - 1 - dropped
        dropped_bytes -= len(codec.decode_bytes(tokens[index : index + 1]))
        dropped += 1
        count -= 1
    return count


# ---------------------------------------------------------------------------------------------
# Feeds: newest first
# ---------------------------------------------------------------------------------------------


def truncate_feed(
    entries: Sequence[str], budget: int, codec: TokenCodec, *, marker: str = FEED_MARKER
) -> LoadReport:
    """Keep whole entries from the top (newest or best first) within ``budget`` tokens.

    Entries are joined with newlines. When they do not all fit, the kept entries are followed
    by the marker on its own line; an entry is never cut in half (FR-21, FR-43).
    """
    budget = max(budget, 0)
    text = "\n".join(entries)
    total = codec.count(text)
    if total <= budget:
        return LoadReport(total, budget, total, 0, None, text, "feed")
    room = budget - codec.count(f"\n{marker}")
    low, high = 0, len(entries)
    while low < high:  # the largest prefix of whole entries that fits the room
        mid = (low + high + 1) // 2
        if codec.count("\n".join(entries[:mid])) <= room:
            low = mid
        else:
            high = mid - 1
    kept = low
    while True:
        delivered = "\n".join([*entries[:kept], marker])
        used = codec.count(delivered)
        if used <= budget or kept == 0:
            break
        kept -= 1
    if used > budget:
        delivered, used = "", 0
    head = "\n".join(entries[:kept])
    start = len(head) + 1 if kept else 0
    region = _region(text, start, len(text))
    skipped = total - codec.count(head)
    return LoadReport(total, budget, used, skipped, region, delivered, "feed")


# ---------------------------------------------------------------------------------------------
# Sharing one budget
# ---------------------------------------------------------------------------------------------


#: Each of ``n`` files sharing a budget is sure of at least this share of an equal split:
#: a short file is never cut to nothing because a long one shares its budget.
FAIR_FLOOR_SHARE = 0.5


def split_budget(lengths: Sequence[int], total: int) -> list[int]:
    """Allotments of ``total`` tokens among parts of the given lengths (FR-29).

    When the lengths fit, each part may use its whole length. Otherwise each part gets its
    whole length when that is within the fair floor (half an equal share,
    :data:`FAIR_FLOOR_SHARE`) or within its proportional share of what is left, at least the
    fair floor otherwise, and the rest is split in proportion to the lengths of the parts still
    over, by largest remainder (ties to the earlier part), so the allotments add up to exactly
    ``total``.
    """
    if any(length < 0 for length in lengths) or total < 0:
        raise ValueError("lengths and total must not be negative")
    if sum(lengths) <= total:
        return list(lengths)
    floor = int(total * FAIR_FLOOR_SHARE / len(lengths))
    shares = [0] * len(lengths)
    open_parts = list(range(len(lengths)))
    left = total
    while open_parts:
        whole = sum(lengths[i] for i in open_parts)
        fits = [i for i in open_parts if lengths[i] <= max(floor, left * lengths[i] / whole)]
        settled = fits or [i for i in open_parts if left * lengths[i] / whole < floor]
        if not settled:
            break
        for i in settled:
            shares[i] = lengths[i] if fits else floor
            left -= shares[i]
        open_parts = [i for i in open_parts if i not in settled]
    if open_parts:
        whole = sum(lengths[i] for i in open_parts)
        for i in open_parts:
            shares[i] = left * lengths[i] // whole
        rest = left - sum(shares[i] for i in open_parts)
        by_remainder = sorted(open_parts, key=lambda i: (-(left * lengths[i] % whole), i))
        for i in by_remainder[:rest]:
            shares[i] += 1
    return shares


# ---------------------------------------------------------------------------------------------
# Marking the skipped region for people
# ---------------------------------------------------------------------------------------------


def skipped_caption(report: LoadReport) -> str:
    """``10,412 characters (2,600 tokens), lines 41–318``: the size of the skipped region."""
    region = report.skipped
    if region is None:
        return ""
    lines = (
        f"line {region.line_start}"
        if region.line_start == region.line_end
        else f"lines {region.line_start}–{region.line_end}"
    )
    return f"{region.chars:,} characters ({report.skipped_tokens:,} tokens), {lines}"


def render_marked(text: str, report: LoadReport) -> str:
    """``text`` whole, with the skipped region fenced in place by two labelled lines.

    The preview (FR-42) and the "ask an agent to update this" attachment (FR-55) both use this,
    so the region is marked the same way in both. Under budget the text comes back unchanged.
    """
    region = report.skipped
    if region is None:
        return text
    head, middle, tail = (
        text[: region.char_start],
        text[region.char_start : region.char_end],
        text[region.char_end :],
    )
    begin = f"▒▒▒ {SKIPPED_LABEL} · {skipped_caption(report)} ▒▒▒"
    end = f"▒▒▒ {SKIPPED_END} ▒▒▒"
    parts = [head]
    if head and not head.endswith("\n"):
        parts.append("\n")
    parts.extend([begin, "\n", middle])
    if middle and not middle.endswith("\n"):
        parts.append("\n")
    parts.append(end)
    if tail:
        parts.extend(["\n", tail])
    elif text.endswith("\n"):
        parts.append("\n")
    return "".join(parts)
