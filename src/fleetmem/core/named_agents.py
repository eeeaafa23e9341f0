"""Agents a query names: "what did reviewer-bot find in billing?".

A question that names an agent asks about that agent's runs. Every one of its episodes holds
its name, so as a search word the name finds nothing in particular; recall instead takes it
out of the words it searches with and favours the named agent's episodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: A name must be at least this long to count: one letter is an initial or a typo.
MIN_NAME = 2


def _pattern(name: str) -> re.Pattern[str]:
    # Word characters and hyphens around the name would make it part of a longer word
    # ("codex" in "codex-mini"); a possessive "'s" goes with the name.
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?:['\u2019]s)?(?![\w-])", re.IGNORECASE)


def named_agents(query: str, known: Iterable[str]) -> frozenset[str]:
    """The ``known`` agent names that ``query`` mentions as whole words, ignoring case."""
    return frozenset(
        name for name in known if len(name) >= MIN_NAME and _pattern(name).search(query)
    )


def without_names(query: str, names: Iterable[str]) -> str:
    """``query`` with every mention of ``names`` (and its possessive) blanked out.

    Longer names go first: a name may end where another goes on after a dot ("bot" and
    "bot.v2"), and the longer one must be blanked whole.
    """
    out = query
    for name in sorted(names, key=lambda n: (-len(n), n)):
        out = _pattern(name).sub(" ", out)
    return " ".join(out.split())
