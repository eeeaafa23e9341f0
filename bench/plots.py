"""PNG plots from the benchmark results: latency against corpus size, recall@k on LoCoMo.

    python -m bench.plots                 # from bench/results/*.json into docs/benchmarks/
    python -m bench.plots --mode quick    # from *-quick.json, into *-quick.png
    python -m bench.plots --results DIR   # another results directory (plots go beside it)

Only the JSON is read, never a benchmark module, so a plot always shows what the results
files say. Missing files, sizes or rows are left out of a plot (a plot with nothing to show
says so in its middle) rather than failing: the benchmarks evolve separately.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display, no GUI toolkit

import matplotlib.pyplot as plt  # after use("Agg"): the backend is chosen first
from matplotlib.axes import Axes

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DOCS_IMAGES = ROOT / "docs" / "benchmarks"
SUFFIX = {"full": "", "quick": "-quick", "tiny": "-tiny"}
_RECALL_AT = re.compile(r"recall@(\d+)$")


def load(directory: Path, name: str, mode: str) -> dict[str, Any] | None:
    """The results of benchmark ``name`` in ``mode``, or None when absent or skipped."""
    path = directory / f"{name}{SUFFIX[mode]}.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return None if data.get("skipped") else data


def _dig(data: dict[str, Any] | None, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def latency_series(directory: Path, mode: str) -> dict[str, list[tuple[int, float]]]:
    """Label -> [(episodes, milliseconds)] for every line of the latency plot."""
    series: dict[str, list[tuple[int, float]]] = {}

    def add(label: str, size: str, value: Any) -> None:
        if isinstance(value, (int, float)):
            series.setdefault(label, []).append((int(size), float(value)))

    scale = load(directory, "recall_scale", mode)
    for size, row in (_dig(scale, "sizes") or {}).items():
        add("recall end to end, p50", size, _dig(row, "recall", "p50_ms"))
        add("recall end to end, p95", size, _dig(row, "recall", "p95_ms"))
        add("numpy brute force, p50", size, _dig(row, "numpy_bruteforce", "p50_ms"))
        add("bare FTS5, p50", size, _dig(row, "fts5_bare", "p50_ms"))
    mcp = load(directory, "mcp_recall", mode)
    for size, row in (_dig(mcp, "sizes") or {}).items():
        add("MCP recall tool (stdio), p50", size, _dig(row, "mcp_stdio", "p50_ms"))
        add("MCP recall tool (stdio), p95", size, _dig(row, "mcp_stdio", "p95_ms"))
    return {label: sorted(points) for label, points in series.items()}


def recall_curves(directory: Path, mode: str) -> dict[str, list[tuple[int, float]]]:
    """LoCoMo row -> [(k, recall@k)] over the ks its results hold (categories 1-4)."""
    locomo = load(directory, "locomo", mode)
    curves: dict[str, list[tuple[int, float]]] = {}
    for row, figures in (_dig(locomo, "rows") or {}).items():
        points = []
        for key, value in (figures or {}).items():
            match = _RECALL_AT.match(key)
            if match and isinstance(value, (int, float)):
                points.append((int(match.group(1)), float(value)))
        if points:
            curves[row] = sorted(points)
    return curves


def _empty(ax: Axes, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _lines(ax: Axes, series: dict[str, list[tuple[int, float]]]) -> None:
    for label, points in series.items():
        xs, ys = zip(*points, strict=True)
        style = "--" if "p95" in label else "-"
        ax.plot(xs, ys, style, marker="o", label=label)


def plot_latency(directory: Path, mode: str, out: Path) -> Path:
    series = latency_series(directory, mode)
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    if series:
        _lines(ax, series)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("episodes in the store")
        ax.set_ylabel("milliseconds (log)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    else:
        _empty(ax, f"no recall_scale or mcp_recall results ({mode}) in {directory}")
    ax.set_title(f"Recall latency against corpus size ({mode} run)")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def plot_recall_at_k(directory: Path, mode: str, out: Path) -> Path:
    curves = recall_curves(directory, mode)
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    if curves:
        _lines(ax, curves)
        ax.axhline(0.80, linestyle=":", color="grey", label="issue 3 target for recall@10")
        ks = sorted({k for points in curves.values() for k, _ in points})
        ax.set_xticks(ks)
        ax.set_ylim(0, 1)
        ax.set_xlabel("k (turns returned)")
        ax.set_ylabel("turn-level evidence recall@k, categories 1-4")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    else:
        _empty(ax, f"no LoCoMo results ({mode}) in {directory}")
    ax.set_title(f"LoCoMo retrieval: recall@k ({mode} run)")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def output_dir(directory: Path) -> Path:
    """docs/benchmarks for the project's own results, else beside the results read."""
    return DOCS_IMAGES if directory.resolve() == RESULTS.resolve() else directory


def render(directory: Path = RESULTS, mode: str = "full") -> Iterable[Path]:
    """Write both plots for ``mode``; returns their paths."""
    out = output_dir(directory)
    out.mkdir(parents=True, exist_ok=True)
    suffix = SUFFIX[mode]
    return [
        plot_latency(directory, mode, out / f"latency-vs-size{suffix}.png"),
        plot_recall_at_k(directory, mode, out / f"recall-at-k{suffix}.png"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.plots", description=__doc__)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--mode", choices=tuple(SUFFIX), default="full")
    args = parser.parse_args(argv)
    for path in render(args.results, args.mode):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
