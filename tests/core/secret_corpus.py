"""A generated corpus of realistic secrets, fresh random values on every call.

Each :class:`SecretFormat` makes one kind of secret the way it appears in the wild: a vendor
token in a log line or a JSON body, a password in a DSN, a key in a YAML block scalar, a
token base64-wrapped or split across lines. Values come from :class:`random.SystemRandom`
(never a fixed seed, never a real key), shaped after each vendor's published format: prefix,
alphabet, length. Token formats are placed into a randomly chosen surrounding text (log line,
shell command, JSON, YAML, Python, Markdown) whose own words name no secret, so the token's
shape alone has to give it away; context formats bring their own surroundings.

The list is deliberately broader than the redactor's named rules: several formats (Mistral,
Cohere, Datadog, Okta, Cloudflare tokens, a session secret, a token as URL user) have no rule
of their own and must be caught by the generic ones.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

_rng = random.SystemRandom()

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


def rand(k: int, alphabet: str = ALNUM) -> str:
    """``k`` random characters; mixed-alphabet values hold a digit and both cases, as real
    keys of that alphabet practically always do."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(k))
        checks = [(DIGITS, 1), (LOWER, 1), (UPPER, 1)]
        if k < 12 or all(
            any(c in group for c in value) or not any(c in group for c in alphabet)
            for group, _ in checks
        ):
            return value


def password(k: int = 0) -> str:
    """A human-chosen-looking but random password: letters, digits and a few symbols."""
    k = k or _rng.randint(10, 20)
    return rand(k - 2, ALNUM) + _rng.choice("!#%^*") + _rng.choice(DIGITS)


def user() -> str:
    return _rng.choice(["app", "deploy", "svc_ci", "admin", "backup", "ana", "bob"]) + str(
        _rng.randint(1, 99)
    )


def host() -> str:
    return (
        _rng.choice(["db", "cache", "mq", "api", "git"]) + f"-{_rng.randint(1, 9)}.internal.example"
    )


def prefixed(prefix: str, k: int, alphabet: str = ALNUM) -> Callable[[], str]:
    """A maker of ``prefix`` followed by ``k`` random characters of ``alphabet``."""
    return lambda: prefix + rand(k, alphabet)


def b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode()


def pem(kind: str, lines: int = 6) -> tuple[str, list[str]]:
    body = [rand(64, B64) for _ in range(lines)] + [rand(_rng.randint(8, 60), B64) + "=="]
    return f"-----BEGIN {kind}-----\n" + "\n".join(body) + f"\n-----END {kind}-----", body


# A sample: the text to redact, and the substrings (secret values, as they are written in the
# text: encoded, escaped or in pieces) that must not survive.
Sample = tuple[str, list[str]]


@dataclass(frozen=True)
class SecretFormat:
    """One kind of secret: its family, and a maker of fresh samples."""

    name: str
    family: str
    make: Callable[[], Sample]


# --- surroundings for a bare token ----------------------------------------------------------

_CONTEXTS: tuple[Callable[[str], str], ...] = (
    lambda t: (
        f"2026-12-01T18:02:{_rng.randint(10, 59)}Z INFO worker[{_rng.randint(100, 999)}]: "
        f"retrying upload with {t} after HTTP 503"
    ),
    lambda t: f"$ deployctl push --target prod --with {t} ./dist",
    lambda t: json.dumps({"event": "ci.step", "data": {"value": t}, "attempt": 3}),
    lambda t: f"steps:\n  - run: publish\n    with: {t}\n  - run: notify\n",
    lambda t: f"Rotated it today; the new one is `{t}` (the old one is revoked).",
    lambda t: f'client = Client("{t}", timeout=30)\nclient.ping()',
    lambda t: f"[2026-12-01 18:02:11,402] DEBUG request headers sent with {t}; status=200",
)


def _token(make: Callable[[], str]) -> Callable[[], Sample]:
    def sample() -> Sample:
        token = make()
        return _rng.choice(_CONTEXTS)(token), [token]

    return sample


def _ctx(make: Callable[[str], str], value: Callable[[], str]) -> Callable[[], Sample]:
    def sample() -> Sample:
        secret = value()
        return make(secret), [secret]

    return sample


FORMATS: list[SecretFormat] = []


def _add(name: str, family: str, make: Callable[[], Sample]) -> None:
    FORMATS.append(SecretFormat(name, family, make))


def _tok(name: str, family: str, make: Callable[[], str]) -> None:
    _add(name, family, _token(make))


def formats() -> list[SecretFormat]:
    """Every format, in definition order (the format modules register on first import)."""
    from tests.core import secret_formats_forms, secret_formats_vendors  # noqa: F401

    return list(FORMATS)


def families() -> dict[str, list[str]]:
    """Format names by family."""
    out: dict[str, list[str]] = {}
    for fmt in formats():
        out.setdefault(fmt.family, []).append(fmt.name)
    return out
