"""Run fleetmem's benchmarks: every ``bench/bench_*.py`` module that exposes ``run()``.

    python -m bench.run_all                      # everything (what `make bench` runs)
    python -m bench.run_all --only recall_scale  # one or more, comma-separated
    python -m bench.run_all --quick              # smaller sizes where a module supports it
    python -m bench.run_all --list

A module's name is its file name without ``bench_`` (``bench_locomo.py`` is ``locomo``).
``run()`` returns a JSON-ready dict; ``--quick`` is passed as ``run(quick=True)`` to modules
whose ``run`` takes a ``quick`` keyword. Each result is written to
``bench/results/<name>.json`` (``<name>-quick.json`` for a quick run, so a quick run never
overwrites full figures) with a ``machine`` block, and a summary is printed: the module's own
``summarize(result) -> str`` when it has one, otherwise its top-level figures.

Benchmarks are never tests: nothing here runs under pytest, and no figure is asserted.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.common import RESULTS, machine, machine_line, write_result

BENCH_DIR = Path(__file__).resolve().parent
PREFIX = "bench_"


def available() -> list[str]:
    """Names of the benchmark modules on disk, sorted."""
    return sorted(p.stem[len(PREFIX) :] for p in BENCH_DIR.glob(f"{PREFIX}*.py"))


def _runner(module: ModuleType) -> Callable[..., Any] | None:
    fn = getattr(module, "run", None)
    return fn if callable(fn) else None


def _takes_quick(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    param = params.get("quick")
    return param is not None and param.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def _generic_summary(result: dict[str, Any], depth: int = 0, prefix: str = "") -> list[str]:
    """Scalars first, one nested level shown, long lists elided."""
    lines: list[str] = []
    for key, value in result.items():
        if key in ("machine", "benchmark"):
            continue
        label = f"{prefix}{key}"
        if isinstance(value, dict):
            if depth < 1:
                lines.extend(_generic_summary(value, depth + 1, f"{label}."))
            else:
                shown = ", ".join(
                    f"{k}={v}" for k, v in value.items() if isinstance(v, (int, float, str))
                )
                lines.append(f"  {label}: {shown[:160]}")
        elif isinstance(value, list):
            lines.append(f"  {label}: [{len(value)} items]")
        else:
            lines.append(f"  {label}: {value}")
    return lines


def summary_of(module: ModuleType, body: dict[str, Any]) -> str:
    summarize = getattr(module, "summarize", None)
    if callable(summarize):
        try:
            return str(summarize(body))
        except Exception as exc:  # a broken summary must not lose the written result
            return f"(summarize failed: {type(exc).__name__}: {exc})"
    return "\n".join(_generic_summary(body))


def run_one(name: str, *, quick: bool) -> tuple[bool, float, Path | None]:
    """Import, run, write and summarise one benchmark; (ok, seconds, results path)."""
    started = time.perf_counter()
    print(f"== {name}", flush=True)
    try:
        module = importlib.import_module(f"bench.{PREFIX}{name}")
    except Exception:
        traceback.print_exc()
        return False, time.perf_counter() - started, None
    fn = _runner(module)
    if fn is None:
        print(f"   skipped: bench/{PREFIX}{name}.py has no run()", flush=True)
        return True, 0.0, None
    pass_quick = quick and _takes_quick(fn)
    if quick and not pass_quick:
        print("   (run() takes no quick flag: running it in full)", flush=True)
    info = machine()
    try:
        result = fn(quick=True) if pass_quick else fn()
    except Exception:
        traceback.print_exc()
        return False, time.perf_counter() - started, None
    elapsed = time.perf_counter() - started
    if not isinstance(result, dict):
        print(f"   run() returned {type(result).__name__}, not a dict", file=sys.stderr)
        return False, elapsed, None
    figures = {"quick": pass_quick, "elapsed_s": round(elapsed, 1), **result}
    path = write_result(name, figures, info, suffix="-quick" if pass_quick else "")
    body = {"benchmark": name, "machine": info, **figures}
    print(summary_of(module, body), flush=True)
    print(f"   -> {path.relative_to(BENCH_DIR.parent)} ({elapsed:.0f} s)", flush=True)
    return True, elapsed, path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run_all", description="Run fleetmem's benchmarks."
    )
    parser.add_argument("--only", help="comma-separated benchmark names (see --list)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes where supported")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args(argv)

    names = available()
    if args.list:
        print("\n".join(names))
        return 0
    if args.only:
        wanted = [n.strip().removeprefix(PREFIX) for n in args.only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            parser.error(f"unknown benchmark(s) {', '.join(unknown)}; have: {', '.join(names)}")
        names = list(dict.fromkeys(wanted))
    if not names:
        print("no benchmarks found in bench/", file=sys.stderr)
        return 1

    print(machine_line(machine()), flush=True)
    outcomes = [(name, *run_one(name, quick=args.quick)) for name in names]
    print("\n== summary")
    for name, ok, seconds, path in outcomes:
        where = path.name if path else "-"
        print(f"   {name:<16} {'ok' if ok else 'FAILED':<6} {seconds:>7.0f} s  {where}")
    print(f"   results in {RESULTS.relative_to(BENCH_DIR.parent)}/")
    return 0 if all(ok for _, ok, _, _ in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
