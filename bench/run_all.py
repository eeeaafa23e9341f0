"""Run fleetmem's benchmarks: every ``bench/bench_*.py`` module that exposes ``run()``.

    python -m bench.run_all                      # everything (what `make bench` runs)
    python -m bench.run_all --only recall_scale  # one or more, comma-separated
    python -m bench.run_all --quick              # smaller sizes where a module supports it
    python -m bench.run_all --tiny               # a few dozen items each, into a temp dir
    python -m bench.run_all --list

A module's name is its file name without ``bench_`` (``bench_locomo.py`` is ``locomo``).
``run()`` returns a JSON-ready dict; ``--quick`` is passed as ``run(quick=True)`` and
``--tiny`` as ``run(tiny=True)`` to modules whose ``run`` takes that keyword (in tiny mode a
module without it is skipped: running it in full would defeat the point). A module whose
``DATA`` file is absent (LoCoMo outside this machine) is skipped with a note in its result.
Each result is written to ``bench/results/<name>.json`` (``<name>-quick.json`` for a quick run,
so a quick run never overwrites full figures; ``--tiny`` writes ``<name>-tiny.json`` into a
temporary directory, or ``--results-dir``, and never into bench/results) with a ``machine``
block, and a summary is printed: the module's own ``summarize(result) -> str`` when it has
one, otherwise its top-level figures. Each benchmark's header shows its place in the run and
each ends with its elapsed seconds; ``run_all<suffix>.json`` records every benchmark's
seconds, their sum, the whole run's wall time and the machine's load before and after.
Populated stores are shared between modules for the length of the run (:mod:`bench.harness`).
At the end, the plots (:mod:`bench.plots`) and the targets table (:mod:`bench.report`) are
generated from the results just written.

Benchmarks are never tests: nothing here runs under pytest, and no figure is asserted.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import harness
from bench.common import (
    RESULTS,
    RESULTS_ENV,
    machine,
    machine_line,
    prepare_query_copy,
    results_dir,
    write_result,
)

BENCH_DIR = Path(__file__).resolve().parent
PREFIX = "bench_"
MODES = ("full", "quick", "tiny")
SUFFIX = {"full": "", "quick": "-quick", "tiny": "-tiny"}


def available() -> list[str]:
    """Names of the benchmark modules on disk, sorted."""
    return sorted(p.stem[len(PREFIX) :] for p in BENCH_DIR.glob(f"{PREFIX}*.py"))


def _runner(module: ModuleType) -> Callable[..., Any] | None:
    fn = getattr(module, "run", None)
    return fn if callable(fn) else None


def _takes(fn: Callable[..., Any], keyword: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    param = params.get(keyword)
    return param is not None and param.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def missing_data(module: ModuleType) -> Path | None:
    """The module's ``DATA`` file when it declares one that is not on this machine."""
    data = getattr(module, "DATA", None)
    if isinstance(data, Path) and not data.exists():
        return data
    return None


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


def _call(fn: Callable[..., Any], mode: str) -> tuple[str, Any]:
    """(the mode the module really ran in, its result); raises what ``run()`` raises."""
    if mode != "full" and _takes(fn, mode):
        return mode, fn(**{mode: True})
    if mode == "quick":
        print("   (run() takes no quick flag: running it in full)", flush=True)
    return "full", fn()


def run_one(
    name: str, *, mode: str = "full", position: str = ""
) -> tuple[bool, float, Path | None]:
    """Import, run, write and summarise one benchmark; (ok, seconds, results path)."""
    started = time.perf_counter()
    print(f"== {name}{f' ({position})' if position else ''}", flush=True)
    harness.progress(f"{name}: starting ({mode})")
    try:
        module = importlib.import_module(f"bench.{PREFIX}{name}")
    except Exception:
        traceback.print_exc()
        return False, time.perf_counter() - started, None
    fn = _runner(module)
    if fn is None:
        print(f"   skipped: bench/{PREFIX}{name}.py has no run()", flush=True)
        return True, 0.0, None
    info = machine()
    absent = missing_data(module)
    if mode == "tiny" and not _takes(fn, "tiny"):
        print(f"   skipped: bench/{PREFIX}{name}.py has no tiny mode", flush=True)
        return True, 0.0, None
    if absent is not None:
        note = f"skipped: its data file {absent} is not on this machine"
        print(f"   {note}", flush=True)
        figures: dict[str, Any] = {"mode": mode, "quick": mode == "quick", "skipped": note}
        path = write_result(name, figures, info, suffix=SUFFIX[mode])
        return True, time.perf_counter() - started, path
    try:
        ran, result = _call(fn, mode)
    except Exception:
        traceback.print_exc()
        return False, time.perf_counter() - started, None
    elapsed = time.perf_counter() - started
    if not isinstance(result, dict):
        print(f"   run() returned {type(result).__name__}, not a dict", file=sys.stderr)
        return False, elapsed, None
    figures = {"mode": ran, "quick": ran == "quick", "elapsed_s": round(elapsed, 1), **result}
    # Under the requested mode's name even when the module ran in full: a quick run must
    # never overwrite the full run's figures.
    path = write_result(name, figures, info, suffix=SUFFIX[mode])
    body = {"benchmark": name, "machine": info, **figures}
    print(summary_of(module, body), flush=True)
    shown = path.relative_to(BENCH_DIR.parent) if path.is_relative_to(BENCH_DIR.parent) else path
    print(f"   -> {shown} ({elapsed:.0f} s)", flush=True)
    harness.progress(f"{name}: done in {elapsed:.0f} s")
    return True, elapsed, path


TIMINGS = "run_all"


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have been waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def write_timings(
    mode: str,
    outcomes: list[tuple[str, bool, float, Path | None]],
    wall_s: float,
    load_before: tuple[float, float, float],
    cpu_s: dict[str, float] | None = None,
    *,
    partial: bool = False,
) -> Path:
    """``run_all<suffix>.json``: each benchmark's own seconds, their sum and the whole run's
    wall time, with the machine's load before and after (other work on the machine shows
    up in the wall time; the report reads this file). ``cpu_s``: the CPU seconds each one
    used, its finished child processes included: unlike wall time, hardly stretched by
    other work on a shared machine, so runs under different loads can be compared.

    ``partial`` (an ``--only`` run): the benchmarks that ran replace their own entries in
    the existing file, whose whole-run wall time and loads stay those of the run that wrote
    it; ``rerun`` lists what was replaced since. Without an existing file, a partial run
    writes its own."""
    cpu_s = cpu_s or {}
    benchmarks = {
        name: {
            "ok": ok,
            "elapsed_s": round(seconds, 1),
            "cpu_s": round(cpu_s[name], 1) if name in cpu_s else None,
            "result": path.name if path else None,
        }
        for name, ok, seconds, path in outcomes
        if path is not None or not ok  # a module skipped for having no run() took no time
    }
    existing = results_dir() / f"{TIMINGS}{SUFFIX[mode]}.json"
    if partial and existing.is_file():
        whole = json.loads(existing.read_text(encoding="utf-8"))
        merged = {**whole.get("benchmarks", {}), **benchmarks}
        rerun = sorted({*whole.get("rerun", []), *benchmarks})
        whole.pop("benchmark", None)
        whole.update(
            benchmarks=merged,
            sum_elapsed_s=round(sum(b["elapsed_s"] for b in merged.values()), 1),
            sum_cpu_s=round(sum(b["cpu_s"] or 0.0 for b in merged.values()), 1),
            rerun=rerun,
        )
        machine_block = whole.pop("machine", None)
        return write_result(TIMINGS, whole, machine_block, suffix=SUFFIX[mode])
    body = {
        "mode": mode,
        "benchmarks": benchmarks,
        "sum_elapsed_s": round(sum(b["elapsed_s"] for b in benchmarks.values()), 1),
        "sum_cpu_s": round(sum(b["cpu_s"] or 0.0 for b in benchmarks.values()), 1),
        "wall_s": round(wall_s, 1),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }
    return write_result(TIMINGS, body, suffix=SUFFIX[mode])


def _outputs(mode: str, directory: Path) -> tuple[bool, list[str]]:
    """Plots and the targets table from the results in ``directory``; (ok, lines)."""
    from bench import plots, report

    lines: list[str] = []
    ok = True
    try:
        for path in plots.render(directory, mode):
            lines.append(f"   plot   {path}")
    except Exception:
        traceback.print_exc()
        ok = False
    try:
        lines.append(f"   report {report.render(directory, mode)}")
    except Exception:
        traceback.print_exc()
        ok = False
    return ok, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run_all", description="Run fleetmem's benchmarks."
    )
    parser.add_argument("--only", help="comma-separated benchmark names (see --list)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes where supported")
    parser.add_argument(
        "--tiny", action="store_true", help="a few dozen items each, into a temporary directory"
    )
    parser.add_argument("--results-dir", type=Path, help="write results here, not bench/results")
    parser.add_argument(
        "--no-outputs", action="store_true", help="do not regenerate the plots and the report"
    )
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args(argv)

    names = available()
    if args.list:
        print("\n".join(names))
        return 0
    if args.quick and args.tiny:
        parser.error("choose one of --quick and --tiny")
    mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    if args.only:
        wanted = [n.strip().removeprefix(PREFIX) for n in args.only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            parser.error(f"unknown benchmark(s) {', '.join(unknown)}; have: {', '.join(names)}")
        names = list(dict.fromkeys(wanted))
    if not names:
        print("no benchmarks found in bench/", file=sys.stderr)
        return 1
    if mode != "tiny":
        # Queries as a daemon embeds them after its first minute: by the int8 copy.
        print(f"queries embedded by: {prepare_query_copy()}", file=sys.stderr)
    directory = args.results_dir
    if mode == "tiny" and directory is None:
        directory = Path(tempfile.mkdtemp(prefix="fleetmem-bench-tiny-"))
    if mode == "tiny" and directory.resolve() == RESULTS.resolve():
        parser.error(f"--results-dir {directory}: tiny results never go into {RESULTS}")
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        os.environ[RESULTS_ENV] = str(directory.resolve())

    print(machine_line(machine()), flush=True)
    stores = Path(tempfile.mkdtemp(prefix="fleetmem-bench-stores-"))
    os.environ.setdefault(harness.STORES_ENV, str(stores))
    os.environ.setdefault(harness.STARTED_ENV, str(time.time()))
    load_before = os.getloadavg()
    started = time.perf_counter()
    cpu: dict[str, float] = {}
    try:
        outcomes: list[tuple[str, bool, float, Path | None]] = []
        for i, name in enumerate(names, 1):
            cpu_before = cpu_seconds()
            outcomes.append((name, *run_one(name, mode=mode, position=f"{i}/{len(names)}")))
            cpu[name] = cpu_seconds() - cpu_before
    finally:
        shutil.rmtree(stores, ignore_errors=True)
    wall = time.perf_counter() - started
    timings = write_timings(mode, outcomes, wall, load_before, cpu, partial=bool(args.only))
    outputs_ok, lines = (True, []) if args.no_outputs else _outputs(mode, results_dir())
    print("\n== summary")
    for name, ok, seconds, path in outcomes:
        where = path.name if path else "-"
        used = f"{cpu[name]:>7.1f} s CPU" if name in cpu else ""
        print(f"   {name:<16} {'ok' if ok else 'FAILED':<6} {seconds:>7.1f} s {used}  {where}")
    print(
        f"   {'benchmarks':<16} {'':<6} {sum(s for _, _, s, _ in outcomes):>7.1f} s"
        f" {sum(cpu.values()):>7.1f} s CPU"
        f"  (whole run {wall:.1f} s, load {load_before[0]:.2f} -> {os.getloadavg()[0]:.2f})"
    )
    print(f"   timings {timings}")
    print("\n".join(lines))
    print(f"   results in {results_dir()}/")
    return 0 if outputs_ok and all(ok for _, ok, _, _ in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
