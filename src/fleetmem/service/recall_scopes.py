"""Recall over any number of scopes, on a provider contract that takes two per call.

``memory_recall`` accepts at most :data:`PROVIDER_MAX_SCOPES` scopes (the contract's schema
says so, and an upstream provider may refuse more). An operator asking across every
repository has dozens, so the service checks the list once, splits it into groups the
contract allows, asks the provider once per group and merges the answers. A caller's
mistake (a scope that is not ``project:<repo>``, too many scopes) is raised here, naming the
argument, before any provider call: it can never reach a provider, fail there and count
against that provider's circuit breaker for every other caller.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fleetmem.core.scope import parse_scope
from fleetmem.errors import InvalidInput
from fleetmem.providers.base import ProviderItem

#: The ``scope`` array of the provider contract's ``memory_recall`` holds at most this many.
PROVIDER_MAX_SCOPES = 2
#: Scopes one recall may name: every repository of a large fleet, with room to spare; the
#: bound keeps one call's fan-out (one provider call per two scopes) finite.
MAX_RECALL_SCOPES = 2000


def check_scopes(scopes: object) -> list[str]:
    """The recall's scopes, each a valid ``project:<repo>`` scope, without repeats, in order.

    Raises :class:`InvalidInput` naming ``scopes`` for anything else: a bare string (a
    common slip for a one-item list), a non-string item, a workspace or agent scope
    (episodes live only in project scopes), a malformed repository key, too many scopes.
    """
    if isinstance(scopes, str | bytes) or not isinstance(scopes, Sequence):
        raise InvalidInput("scopes", scopes, "must be a list of project:<repo> scopes")
    if len(scopes) > MAX_RECALL_SCOPES:
        raise InvalidInput(
            "scopes", f"{len(scopes)} scopes", f"at most {MAX_RECALL_SCOPES} are allowed"
        )
    out: dict[str, None] = {}
    for item in scopes:
        if not isinstance(item, str):
            raise InvalidInput("scopes", item, "every scope must be a string")
        try:
            # A project scope's repository key is checked as the scope is built.
            parsed = parse_scope(item)
            if parsed.kind != "project":
                raise InvalidInput(
                    "scopes", item, "episodes are kept only in project:<repo> scopes"
                )
        except InvalidInput as exc:
            if exc.field == "scopes":
                raise
            raise InvalidInput("scopes", item, exc.reason) from exc
        out[item] = None
    return list(out)


def groups(scopes: Sequence[str], size: int = PROVIDER_MAX_SCOPES) -> list[list[str]]:
    """``scopes`` in consecutive groups of at most ``size`` (the provider calls to make)."""
    if size < 1:
        raise ValueError("size must be >= 1")
    return [list(scopes[i : i + size]) for i in range(0, len(scopes), size)]


def merge(answers: Sequence[Sequence[ProviderItem]], limit: int) -> list[ProviderItem]:
    """One ranking from the answers of several provider calls, at most ``limit`` items.

    When every item carries a score, the scores decide (the built-in provider's fused scores
    are on one scale whatever the scopes: see :mod:`fleetmem.core.ranking`); ties keep the
    earlier call's item first. When some do not (a provider need not score), the answers are
    interleaved by position: each call's first item, then each call's second, and so on.
    An id seen twice keeps its first place.
    """
    if len(answers) == 1:
        return _unique(answers[0])[:limit]
    flat = [item for answer in answers for item in answer]
    if flat and all(_scored(item) for item in flat):
        order = sorted(
            ((item, n) for n, item in enumerate(flat)),
            key=lambda pair: (-(pair[0].score or 0.0), pair[1]),
        )
        return _unique([item for item, _ in order])[:limit]
    longest = max((len(a) for a in answers), default=0)
    woven = [a[i] for i in range(longest) for a in answers if i < len(a)]
    return _unique(woven)[:limit]


def _scored(item: ProviderItem) -> bool:
    score = item.score
    return isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score)


def _unique(items: Sequence[ProviderItem]) -> list[ProviderItem]:
    """First occurrence of each id; items with a malformed id pass (the index drops them)."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.id if isinstance(item.id, str) else None
        if key is None or key not in seen:
            if key is not None:
                seen.add(key)
            out.append(item)
    return out
