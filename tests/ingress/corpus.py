"""Secrets for the boundary tests: fresh random values of formats the redactor catches.

Each :class:`Family` makes a :class:`Sample` from a ``random.Random``: the text to plant (a
token alone, or a URL carrying a password), the secret inside it, and the *telling fragments*
to search for afterwards (the random core of the secret and windows of it, so a secret that
was cut, case-folded by a full-text index or partly masked is still found).

The corpus is pluggable: set ``FLEETMEM_SECRET_CORPUS=module:attribute`` to an iterable of
objects with a ``name`` and a ``sample(rng)`` returning a :class:`Sample`, and those families
are tested too (the detector's wider corpus, once it exists, drops in this way).
"""

from __future__ import annotations

import importlib
import os
import random
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

_ALNUM = string.ascii_letters + string.digits
_B32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Sample:
    family: str
    text: str  # what is planted in a field
    secret: str  # the credential inside ``text``
    fragments: tuple[str, ...]  # what must not be found anywhere afterwards


class FamilyLike(Protocol):
    name: str

    def sample(self, rng: random.Random) -> Sample: ...


def _draw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def windows(core: str, width: int = 10) -> tuple[str, ...]:
    """``core`` itself and windows of it at its start, middle and end."""
    if len(core) <= width:
        return (core,)
    mid = (len(core) - width) // 2
    return (core, core[:width], core[mid : mid + width], core[-width:])


@dataclass(frozen=True)
class Family:
    name: str
    make: Callable[[random.Random], tuple[str, str, str]]  # text, secret, random core

    def sample(self, rng: random.Random) -> Sample:
        text, secret, core = self.make(rng)
        return Sample(self.name, text, secret, windows(core))


def _aws(rng: random.Random) -> tuple[str, str, str]:
    core = _draw(rng, _B32, 16)
    key = "AKIA" + core
    return key, key, core


def _github(rng: random.Random) -> tuple[str, str, str]:
    core = _draw(rng, _ALNUM, 36)
    key = "ghp_" + core
    return key, key, core


def _stripe(rng: random.Random) -> tuple[str, str, str]:
    core = _draw(rng, _ALNUM, 24)
    key = "sk_live_" + core
    return key, key, core


def _url_password(rng: random.Random) -> tuple[str, str, str]:
    password = _draw(rng, _ALNUM, 14)
    scheme = rng.choice(("postgres", "mysql", "redis", "https", "amqp"))
    user = rng.choice(("app", "deploy", "svc", "admin"))
    return (
        f"{scheme}://{user}:{password}@db{rng.randrange(100)}.internal:5432/x",
        password,
        password,
    )


FAMILIES: tuple[Family, ...] = (
    Family("aws_access_key_id", _aws),
    Family("github_pat", _github),
    Family("stripe_live_key", _stripe),
    Family("url_password", _url_password),
)


def families() -> list[FamilyLike]:
    """The built-in families plus any named by ``FLEETMEM_SECRET_CORPUS``."""
    found: list[FamilyLike] = list(FAMILIES)
    extra = os.environ.get("FLEETMEM_SECRET_CORPUS")
    if extra:
        module, _, attribute = extra.partition(":")
        loaded: Iterable[FamilyLike] = getattr(importlib.import_module(module), attribute)
        found.extend(loaded)
    return found


def samples(rng: random.Random) -> list[Sample]:
    """One fresh sample of every family."""
    return [family.sample(rng) for family in families()]
