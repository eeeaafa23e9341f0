"""Agents a query names: "what did reviewer-bot find in billing?", "what did Fahim Khan fix?".

A question that names an agent asks about that agent's runs. Every one of its episodes holds
its name, so as a search word the name finds nothing in particular; recall instead takes it
out of the words it searches with and favours the named agent's episodes.

Agent names are identifiers (``fahim-khan``), but people write them as they say them: with a
space ("Fahim Khan") or by the first name alone ("Fahim"). A name therefore has three written
forms: the identifier, its display form (separators read as spaces) and, for a name of more
than one part, its first part. The first part counts only when it is capitalised in the query
and the name is a person's rather than a role's (``review-bot`` has none: "Review" is a
word) and when no other known agent starts the same way (two Fahims make "Fahim" ambiguous,
and an ambiguous mention names nobody).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: A name must be at least this long to count: one letter is an initial or a typo.
MIN_NAME = 2
#: A first name shorter than this ("Al", "CI") is too often a word or an abbreviation.
MIN_FIRST_NAME = 3
_PARTS = re.compile(r"[-_.]+")
#: Last parts that make a name a role, not a person: "Review" and "Build" are words, and
#: ``review-bot`` or ``build-agent`` have no first name.
_ROLES = frozenset(
    (
        "bot",
        "agent",
        "ai",
        "ci",
        "cli",
        "fixer",
        "runner",
        "worker",
        "reviewer",
        "assistant",
        "helper",
        "daemon",
        "service",
        "checker",
        "linter",
        "tester",
    )
)


def _pattern(written: str, *, case_sensitive: bool = False) -> re.Pattern[str]:
    # Word characters and hyphens around the name would make it part of a longer word
    # ("codex" in "codex-mini"); a possessive "'s" goes with the name. Spaces inside a
    # display form match any run of whitespace.
    body = r"\s+".join(re.escape(part) for part in written.split(" "))
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile(rf"(?<![\w-]){body}(?:['\u2019]s)?(?![\w-])", flags)


def _first_name(name: str) -> str | None:
    parts = [p for p in _PARTS.split(name) if p]
    if len(parts) < 2 or len(parts[0]) < MIN_FIRST_NAME or not parts[0].isalpha():
        return None
    if parts[-1].lower() in _ROLES:
        return None
    return parts[0]


def written_forms(name: str, known: Iterable[str] = ()) -> list[tuple[str, bool]]:
    """How ``name`` may be written in a query: (text, needs a capital first letter).

    The identifier and its display form match in any case; the first name only capitalised,
    and only when it is not the first part of another agent in ``known`` nor another agent's
    whole name.
    """
    forms: list[tuple[str, bool]] = [(name, False)]
    display = " ".join(p for p in _PARTS.split(name) if p)
    if display and display.lower() != name.lower():
        forms.append((display, False))
    first = _first_name(name)
    if first is not None:
        others = [k for k in known if k != name]
        clash = any(
            (_first_name(k) or "").lower() == first.lower() or k.lower() == first.lower()
            for k in others
        )
        if not clash:
            forms.append((first[0].upper() + first[1:], True))
    return forms


def _mentions(query: str, name: str, known: Iterable[str]) -> bool:
    return any(
        _pattern(written, case_sensitive=capital).search(query)
        for written, capital in written_forms(name, known)
    )


def named_agents(query: str, known: Iterable[str]) -> frozenset[str]:
    """The ``known`` agent names that ``query`` mentions: as whole words in any case, in
    their display form ("Fahim Khan"), or by a capitalised, unambiguous first name."""
    names = [n for n in dict.fromkeys(known) if len(n) >= MIN_NAME]
    return frozenset(name for name in names if _mentions(query, name, names))


def without_names(query: str, names: Iterable[str], known: Iterable[str] = ()) -> str:
    """``query`` with every written form of ``names`` (and its possessive) blanked out.

    Longer forms go first: a name may end where another goes on after a dot ("bot" and
    "bot.v2"), and the longer one must be blanked whole. ``known`` decides which first names
    are unambiguous, as in :func:`named_agents`.
    """
    everyone = list(dict.fromkeys([*known, *names]))
    forms = [form for name in names for form in written_forms(name, everyone)]
    out = query
    for written, capital in sorted(forms, key=lambda f: (-len(f[0]), f[0])):
        out = _pattern(written, case_sensitive=capital).sub(" ", out)
    return " ".join(out.split())
