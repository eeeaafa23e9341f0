"""Benchmark: the redactor on 64 KB of hostile text.

Every string fleetmem stores passes :func:`fleetmem.core.redact.redact`, so its worst case is
a latency floor for every write. The inputs target the known weak spots of regex redactors:
long runs of a rule's prefix, unterminated constructs, dense matches, a single very long
token, and mixed Unicode with invisible characters. All inputs are deterministic.

The baseline is the nearest physical reference: one plain ``re.sub`` of a trivial pattern
(``\\s+`` -> ``" "``) over the same text, i.e. a single linear regex pass.
"""

from __future__ import annotations

import json
import math
import random
import re
import statistics
import string
import time
from collections.abc import Callable
from typing import Any

from fleetmem.core.redact import redact

SIZE = 64 * 1024
REPEATS = 30
QUICK_REPEATS = 10
_BASELINE_RE = re.compile(r"\s+")


def _fill(unit: str, size: int = SIZE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _mixed_unicode(size: int = SIZE) -> str:
    """Multi-byte characters, invisibles, controls and separators, ``size`` bytes of UTF-8."""
    rng = random.Random(42)
    alphabet = "aé漢字🙂 =:-_\"'\\\n\u200b\u200d\u202e\u2066\ufeff\x00\x1b"
    chars: list[str] = []
    used = 0
    while True:
        char = rng.choice(alphabet)
        used += len(char.encode("utf-8"))
        if used > size:
            return "".join(chars)
        chars.append(char)


def _dense_secrets(size: int = SIZE) -> str:
    rng = random.Random(7)
    alnum = string.ascii_letters + string.digits

    def body(k: int) -> str:
        return "".join(rng.choices(alnum, k=k))

    parts: list[str] = []
    while sum(map(len, parts)) < size:
        parts += [
            f"ghp_{body(36)}",
            f"AKIA{body(16).upper()}",
            f'password="{body(12)}"',
            f"https://u:{body(10)}@h.example/x",
            f"Authorization: Bearer {body(40)}",
            f"eyJ{body(20)}.eyJ{body(30)}.{body(43)}",
            f"--api-key {body(24)}",
            f"sk-proj-{body(48)}",
            "just some ordinary prose between the secrets.",
        ]
    return "\n".join(parts)[:size]


def cases() -> dict[str, str]:
    """The hostile inputs, by name. Each is 64 KB except the megabyte token."""
    return {
        "run_of_a": "a" * SIZE,
        "run_of_ghp_prefix": _fill("ghp_"),
        "run_of_equals": "=" * SIZE,
        "begin_private_key_without_end": _fill("-----BEGIN PRIVATE KEY-----\n"),
        "scheme_without_host": _fill("https://"),
        "run_of_eyJ_segments": _fill("eyJaaaaaaaaaa."),
        "unterminated_quoted_values": _fill('password="'),
        "dense_assignments": _fill("password=a "),
        "cli_like_words": _fill("-token "),
        "userinfo_at_signs": "://a:" + "@" * (SIZE - 5),
        "mixed_unicode_invisibles": _mixed_unicode(),
        "dense_real_secrets": _dense_secrets(),
        "single_64kb_token": "sk-" + _fill("A1b2", SIZE - 3),
        "single_1mb_token": "ghp_" + _fill("a1B2", 1 << 20),
    }


def _measure(fn: Callable[[str], object], text: str, repeats: int = REPEATS) -> dict[str, float]:
    fn(text)  # warm up: compiled patterns, allocator
    samples: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(text)
        samples.append((time.perf_counter() - start) * 1000.0)
    ordered = sorted(samples)
    p95_index = max(0, math.ceil(0.95 * len(ordered)) - 1)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[p95_index], 3),
        "max_ms": round(ordered[-1], 3),
    }


def _baseline(text: str) -> str:
    return _BASELINE_RE.sub(" ", text)


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """Time redact() and the one-pass baseline on every hostile case (``quick``:
    :data:`QUICK_REPEATS` times each; ``tiny``: twice each)."""
    repeats = 2 if tiny else QUICK_REPEATS if quick else REPEATS
    redactor_rows: list[dict[str, Any]] = []
    baseline_rows: list[dict[str, Any]] = []
    for name, text in cases().items():
        size = len(text.encode("utf-8", "surrogatepass"))
        redactor_rows.append({"case": name, "bytes": size, **_measure(redact, text, repeats)})
        baseline_rows.append({"case": name, "bytes": size, **_measure(_baseline, text, repeats)})
    return {
        "name": "redactor_64kb_hostile",
        "repeats": repeats,
        "cases": redactor_rows,
        "baseline": {
            "what": "one re.sub(r'\\s+', ' ', text) over the same text: a single linear pass",
            "cases": baseline_rows,
        },
    }


def summarize(result: dict[str, Any]) -> str:
    """One line per case: the redactor's p50/max and its p50 against the one-pass baseline."""
    baseline = {row["case"]: row for row in result["baseline"]["cases"]}
    lines = []
    for row in result["cases"]:
        base = baseline[row["case"]]["p50_ms"]
        ratio = row["p50_ms"] / base if base else float("inf")
        lines.append(
            f"{row['case']:<32} {row['bytes']:>8} B  p50 {row['p50_ms']:7.2f} ms"
            f"  max {row['max_ms']:7.2f} ms  ({ratio:4.1f}x one re.sub pass)"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
