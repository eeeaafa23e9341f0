"""A change measured against the code before it, in one session, on one machine.

    python -m bench.ab --base 4ea548c --only mcp_recall --rounds 2

Figures on a shared two-core machine move with its load by more than most changes to the
code measured (the same benchmark read 28.6 and 37.9 ms at p95 an hour apart, same code).
A change is therefore read against a baseline measured beside it: this runs the named
benchmarks from a git worktree of ``--base`` and from the working tree in turn (base,
current, base, current, ...), each run into a results directory of its own
(``run_all --results-dir ... --no-outputs``: nothing in bench/results or docs is written),
and prints every latency row of the results both ways, round by round, with the mean
difference. ``$FLEETMEM_BENCH_STORES`` is passed on, so populated stores are reused.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT

#: The two figures each row shows.
FIGURES = ("p50_ms", "p95_ms")


def latency_rows(result: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, float, float]]:
    """Every (path, p50, p95) in a result: the dicts holding both figures, by their path of
    keys (``sizes/10000/mcp_stdio``), in the result's order."""
    for key, value in result.items():
        path = f"{prefix}/{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            if all(isinstance(value.get(f), (int, float)) for f in FIGURES):
                yield path, float(value[FIGURES[0]]), float(value[FIGURES[1]])
            else:
                yield from latency_rows(value, path)


def table(base: Sequence[Mapping[str, Any]], current: Sequence[Mapping[str, Any]]) -> list[str]:
    """A markdown table: each latency row, p50 / p95 of every base run, of every current run,
    and the current runs' mean less the base runs' mean (rows missing from a run are left
    out; no table without runs on both sides)."""
    if not base or not current:
        return []
    before = [{p: (a, b) for p, a, b in latency_rows(r)} for r in base]
    after = [{p: (a, b) for p, a, b in latency_rows(r)} for r in current]
    paths = [p for p in before[0] if all(p in run for run in [*before, *after])]
    lines = [
        "| row | base, p50 / p95 ms | current, p50 / p95 ms | mean change, p50 / p95 |",
        "|---|---|---|---|",
    ]
    for path in paths:
        shown = [
            ", ".join(f"{r[path][0]:.1f} / {r[path][1]:.1f}" for r in side)
            for side in (before, after)
        ]
        change = [
            statistics.fmean(r[path][i] for r in after)
            - statistics.fmean(r[path][i] for r in before)
            for i in (0, 1)
        ]
        lines.append(f"| {path} | {shown[0]} | {shown[1]} | {change[0]:+.1f} / {change[1]:+.1f} |")
    return lines


def _run(tree: Path, only: str, out: Path, mode: Sequence[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}"}
    env.pop("FLEETMEM_BENCH_RESULTS", None)
    subprocess.run(
        [sys.executable, "-m", "bench.run_all", "--only", only, "--results-dir", str(out),
         "--no-outputs", *mode],
        cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    found = sorted(out.glob(f"{only}*.json"))
    if not found:
        raise SystemExit(f"bench.ab: {only} wrote no result into {out}")
    data: dict[str, Any] = json.loads(found[0].read_text(encoding="utf-8"))
    return data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the git revision measured as the baseline")
    parser.add_argument("--only", required=True, help="one benchmark, as run_all names it")
    parser.add_argument("--rounds", type=int, default=2, help="base and current runs each")
    parser.add_argument("--quick", action="store_true", help="run_all --quick")
    args = parser.parse_args(argv)
    from bench.run_all import available

    if args.only not in available():
        parser.error(f"--only {args.only!r}: not a benchmark (python -m bench.run_all --list)")
    if not 1 <= args.rounds <= 20:
        parser.error(f"--rounds {args.rounds}: must be 1 to 20")
    rev = subprocess.run(
        ["git", "rev-parse", "--verify", f"{args.base}^{{commit}}"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if rev.returncode != 0:
        parser.error(f"--base {args.base!r}: not a commit of this repository")
    mode = ["--quick"] if args.quick else []
    with tempfile.TemporaryDirectory(prefix="fleetmem-ab-") as tmp:
        work = Path(tmp)
        base_tree = work / "base"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(base_tree), rev.stdout.strip()],
            cwd=ROOT, check=True,
        )  # fmt: skip
        try:
            base: list[dict[str, Any]] = []
            current: list[dict[str, Any]] = []
            for n in range(args.rounds):
                for side, tree, into in (("base", base_tree, base), ("current", ROOT, current)):
                    print(f"round {n + 1}/{args.rounds}: {side}", file=sys.stderr, flush=True)
                    into.append(_run(tree, args.only, work / f"{side}-{n}", mode))
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, check=False
            )
    print(f"{args.only}: base {args.base}, current working tree, {args.rounds} rounds alternated")
    print("\n".join(table(base, current)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
