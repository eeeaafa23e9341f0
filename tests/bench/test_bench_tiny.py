"""The benchmark harness on tiny inputs, so the benchmarks never rot.

``python -m bench.run_all --tiny`` runs as a real subprocess, every benchmark module on a few
dozen items, into a temporary results directory. No figure is asserted (speed is measured
only in bench/, never in tests): the tests check that every benchmark ran, that each result
carries its machine block and the keys the docs and the report read, that the plots and the
targets table were generated, and that bench/results/ was not touched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from bench import harness, plots, report, run_all

ROOT = Path(__file__).resolve().parents[2]

#: Each benchmark and the paths (dotted; ``*`` = every key at that level) its tiny result
#: must hold: what docs/benchmarks.md, the report and the plots read.
EXPECTED: dict[str, tuple[str, ...]] = {
    "daemon": (
        "after_start.vmrss",
        "after_warm_recalls.vmrss",
        "after_measured_recalls.vmrss",
        "after_ingest.vmrss",
        "recall_http.p95_ms",
        "ingest_http.p95_ms",
        "healthz.p50_ms",
        "reference.vectors_mib",
        "reference.store_files_mib",
    ),
    "facts": (
        "list_first_page.fleetmem.p95_ms",
        "list_first_page.bare_sql.p95_ms",
        "search.fleetmem.p95_ms",
        "search.embed_query_alone.p95_ms",
        "accuracy_labelled_set.top3",
    ),
    "hooks": ("cases.*.median_s", "cases.*.briefed", "run_close.healthy.median_s"),
    "load_report": ("load_report.p95_ms", "baseline_encode.p95_ms", "service_meter.p95_ms"),
    "mcp_recall": (
        "sizes.*.mcp_stdio.p95_ms",
        "sizes.*.mcp_in_process.p95_ms",
        "sizes.*.bare_index.p95_ms",
        "sizes.*.embed_query.p95_ms",
        "sizes.*.briefing_compute_no_provider.p99_ms",
        "sizes.*.briefing_served.p95_ms",
        "sizes.*.briefing_profile.top",
        "populate.*.records",
    ),
    "provider_path": ("modes.text.*.service_mcp.p95_ms", "modes.text.*.direct_index.p95_ms"),
    "recall_scale": (
        "sizes.*.recall.p95_ms",
        "sizes.*.recall.p99_ms",
        "sizes.*.numpy_bruteforce.p50_ms",
        "sizes.*.fts5_bare.p50_ms",
        "sizes.*.rss_mib.after_warm_recall",
        "sizes.*.write_path_ms.p50_ms",
        "ingest.records_per_s",
    ),
    "redact": (
        "cases",
        "baseline.cases",
        "catch.sample_rate",
        "catch.worst_sample_rate",
        "false_positives.rate",
        "worst_64kb.p95_ms",
        "worst_64kb.cpu_p95_ms",
        "old_rules.catch.sample_rate",
        "old_rules.worst_64kb_cpu_p95_ms",
    ),
    "web": ("web_page.p95_ms", "api_page.p95_ms", "healthz.p95_ms", "service_list.p95_ms"),
}
LOCOMO_KEYS = (
    "rows.bm25.recall@10",
    "rows.fleetmem-default.latency_ms.p95",
    "rows.fleetmem-default.per_conversation_recall@10.conv-0",
    "held_out.held_out_recall@10",
    "held_out.chosen.conv-1",
)
MACHINE_KEYS = ("cpu", "cores", "cores_usable", "python", "sqlite", "date", "loadavg_1m")


def _paths(data: Any, dotted: str) -> list[Any]:
    """Every value at ``dotted`` (``*`` fans out over a dict); raises KeyError naming the
    missing part."""
    values = [data]
    for part in dotted.split("."):
        nxt: list[Any] = []
        for value in values:
            if not isinstance(value, dict):
                raise KeyError(f"{dotted}: {part!r} under a {type(value).__name__}")
            if part == "*":
                if not value:
                    raise KeyError(f"{dotted}: nothing under '*'")
                nxt.extend(value.values())
            elif part in value:
                nxt.append(value[part])
            else:
                raise KeyError(f"{dotted}: no {part!r} (have {sorted(value)[:12]})")
        values = nxt
    return values


@pytest.fixture(scope="module")
def tiny_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("bench-tiny")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
    env["HF_HUB_OFFLINE"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run_all", "--tiny", "--results-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard on a busy machine, not a figure
        check=False,
    )
    return proc, out


def _result(out: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / f"{name}-tiny.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_benchmark_runs_in_tiny_mode(tiny_run: tuple[Any, Path]) -> None:
    proc, out = tiny_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for name in (*EXPECTED, "locomo"):
        assert (out / f"{name}-tiny.json").is_file(), f"{name} wrote no result:\n{proc.stdout}"


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_result_has_machine_block_and_expected_keys(tiny_run: tuple[Any, Path], name: str) -> None:
    _, out = tiny_run
    data = _result(out, name)
    assert data["benchmark"] == name
    assert data["mode"] == "tiny"
    for key in MACHINE_KEYS:
        assert key in data["machine"], f"{name}: machine block lacks {key}"
    for dotted in EXPECTED[name]:
        values = _paths(data, dotted)
        assert all(v is not None for v in values), f"{name}: {dotted} is null"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_locomo_runs_on_a_slice_or_is_skipped_with_a_note(tiny_run: tuple[Any, Path]) -> None:
    from bench.bench_locomo import DATA

    _, out = tiny_run
    data = _result(out, "locomo")
    assert "machine" in data
    if DATA.exists():
        assert data["conversations"] == 2
        assert data["turns"] == 2 * harness.TINY_TURNS
        for dotted in LOCOMO_KEYS:
            _paths(data, dotted)
        n = data["rows"]["bm25"]["n"] + data["rows"]["bm25"]["per_category"].get("5", {}).get(
            "n", 0
        )
        assert 0 < n <= 2 * harness.TINY_QUESTIONS
        # The held-out check's point at the defaults is the default row, asked again.
        default = data["rows"]["fleetmem-default"]["recall@10"]
        assert data["held_out"]["default_recall@10"] == default
    else:
        assert str(DATA) in data["skipped"]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_plots_and_report_are_generated_beside_the_results(tiny_run: tuple[Any, Path]) -> None:
    _, out = tiny_run
    for stem in ("latency-vs-size-tiny.png", "recall-at-k-tiny.png"):
        assert (out / stem).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", stem
    table = (out / "report-tiny.md").read_text(encoding="utf-8")
    assert "| issue | figure | measured |" in table
    # Each issue with a speed target has its row, read from the tiny results.
    for needle in (
        "briefing computation without the provider",
        "recall through the MCP tool (stdio)",
        "facts list first page p95",
        "load report of a 64 KB file",
        "daemon resident memory",
        "mem0 paper",
        "redactor catch rate",
        "redactor false positives",
        "redactor, worst 64 KB hostile case p95",
    ):
        assert needle in table, needle
    assert "daemon-tiny.json" in table
    # The project's results and docs are untouched by a tiny run.
    assert not list(plots.RESULTS.glob("*-tiny.*"))
    assert not list(plots.DOCS_IMAGES.glob("*-tiny.png"))


def test_tiny_results_are_refused_in_the_projects_results_directory() -> None:
    proc = subprocess.run(
        [*(sys.executable, "-m", "bench.run_all", "--tiny"), "--results-dir", str(plots.RESULTS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert "--results-dir" in proc.stderr and "tiny results never go into" in proc.stderr


def test_a_module_whose_data_file_is_absent_is_named_as_missing(tmp_path: Path) -> None:
    module = types.ModuleType("bench_example")
    module.DATA = tmp_path / "absent.json"  # type: ignore[attr-defined]
    assert run_all.missing_data(module) == tmp_path / "absent.json"
    (tmp_path / "absent.json").write_text("[]", encoding="utf-8")
    assert run_all.missing_data(module) is None
    assert run_all.missing_data(types.ModuleType("bench_without_data")) is None


def test_report_says_not_measured_for_missing_results(tmp_path: Path) -> None:
    path = report.render(tmp_path, "quick")
    table = path.read_text(encoding="utf-8")
    assert path == tmp_path / "report-quick.md"
    assert "| met |" not in table
    assert "not measured" in table


def test_report_shows_the_upkeep_only_for_stores_it_changed() -> None:
    timed = {"p50_ms": 4.3, "p95_ms": 6.7}
    populate = {
        "100000": {
            "compaction": {
                "segments_before": 23,
                "segments_after": 1,
                "steps": 99,
                "seconds": 2.0,
                "text_channel_before": {"p50_ms": 7.4, "p95_ms": 14.3},
                "text_channel_after": timed,
            }
        },
        "1000": {"compaction": {"segments_before": 2, "segments_after": 2, "steps": 0}},
        "500": {"records": 500},  # a result from before the upkeep existed
    }
    (row,) = report.upkeep_rows(populate)
    assert "100,000 episodes" in row.what and "23 segments merged into 1 in 2.0 s" in row.what
    assert row.figure == "4.3 ms / 6.7 ms"
    assert row.reference == "same queries before the upkeep 7.4 ms / 14.3 ms"


def test_report_replaces_only_the_marked_block() -> None:
    doc = f"# Title\n\nprose before\n\n{report.BEGIN}\nold table\n{report.END}\n\nprose after\n"
    new = report.replace_block(doc, "new table")
    assert new == (
        f"# Title\n\nprose before\n\n{report.BEGIN}\nnew table\n{report.END}\n\nprose after\n"
    )
    appended = report.replace_block("# Title\n", "table")
    assert appended == f"# Title\n\n{report.BEGIN}\ntable\n{report.END}\n"


def test_plots_are_drawn_even_when_no_results_exist(tmp_path: Path) -> None:
    made = list(plots.render(tmp_path, "quick"))
    assert [p.name for p in made] == ["latency-vs-size-quick.png", "recall-at-k-quick.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in made)
    assert plots.latency_series(tmp_path, "quick") == {}


def test_shared_store_is_built_once_and_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(harness.STORES_ENV, str(tmp_path / "stores"))
    builds: list[Path] = []

    def build(home: Path) -> dict[str, Any]:
        builds.append(home)
        home.mkdir(parents=True)
        (home / "fleetmem.db").write_bytes(b"rows")
        return {"records": 7}

    first = harness.shared_episode_store(tmp_path / "a", 7, 3, build)
    second = harness.shared_episode_store(tmp_path / "b", 7, 3, build)
    assert builds == [tmp_path / "a"]
    assert first["reused"] is False and second["reused"] is True
    assert (tmp_path / "b" / "fleetmem.db").read_bytes() == b"rows"
    harness.shared_episode_store(tmp_path / "c", 7, 4, build)  # other vectors: another store
    assert builds == [tmp_path / "a", tmp_path / "c"]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_run_records_every_benchmarks_own_seconds(tiny_run: tuple[Any, Path]) -> None:
    _, out = tiny_run
    timings = json.loads((out / f"{run_all.TIMINGS}-tiny.json").read_text(encoding="utf-8"))
    ran = timings["benchmarks"]
    assert {*EXPECTED, "locomo"} <= set(ran)
    for name in (*EXPECTED, "locomo"):
        entry = ran[name]
        assert entry["ok"] is True, name
        assert entry["elapsed_s"] >= 0, name
        assert entry["result"] == f"{name}-tiny.json"
        result = _result(out, name)
        if "skipped" not in result:  # LoCoMo away from this machine
            assert entry["elapsed_s"] == result["elapsed_s"], name
    total = round(sum(e["elapsed_s"] for e in ran.values()), 1)
    assert timings["sum_elapsed_s"] == pytest.approx(total, abs=0.01)
    assert timings["wall_s"] >= timings["sum_elapsed_s"] - 0.5
    assert len(timings["loadavg_before"]) == 3 and len(timings["loadavg_after"]) == 3
    table = (out / "report-tiny.md").read_text(encoding="utf-8")
    assert "| benchmark | seconds | CPU seconds | load (1 min) at its start |" in table
    for name, entry in ran.items():
        assert entry["cpu_s"] >= 0, name
        assert f"| {name} | {entry['elapsed_s']:.1f} | {entry['cpu_s']:.1f} |" in table, name
    assert timings["sum_cpu_s"] == pytest.approx(sum(e["cpu_s"] for e in ran.values()), abs=0.01)
    assert f"| **sum** | {sum(e['elapsed_s'] for e in ran.values()):.1f} |" in table


def test_a_quick_run_never_overwrites_full_results_even_without_a_quick_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = types.ModuleType("bench.bench_fullonly")
    calls: list[str] = []

    def run() -> dict[str, Any]:
        calls.append("full")
        return {"figure": 1}

    module.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench.bench_fullonly", module)
    monkeypatch.setenv("FLEETMEM_BENCH_RESULTS", str(tmp_path))
    ok, _, path = run_all.run_one("fullonly", mode="quick")
    assert ok and calls == ["full"]
    assert path == tmp_path / "fullonly-quick.json"
    assert not (tmp_path / "fullonly.json").exists()
    assert json.loads(path.read_text(encoding="utf-8"))["mode"] == "full"


def test_embedded_vectors_are_kept_for_the_rest_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    vectors = [rng.standard_normal(4).astype(np.float32) for _ in range(5)]
    monkeypatch.delenv(harness.STORES_ENV, raising=False)
    harness.save_vectors(vectors, "local:m")  # no run directory: nothing kept
    assert harness.load_vectors([], 5, "local:m") == 0

    # The variable may name a directory that does not exist yet: the first save makes it.
    monkeypatch.setenv(harness.STORES_ENV, str(tmp_path / "new" / "stores"))
    harness.save_vectors(vectors[:3], "local:m")
    harness.save_vectors(vectors, "local:m")
    harness.save_vectors(vectors[:2], "local:m")  # shorter: the longer cache stays
    real = [vectors[0]]
    assert harness.load_vectors(real, 4, "local:m") == 3
    assert len(real) == 4
    assert all(np.array_equal(a, b) for a, b in zip(real, vectors[:4], strict=True))
    assert harness.load_vectors(real, 4, "local:m") == 0  # already long enough
    assert harness.load_vectors([], 4, "other:model") == 0  # another model's vectors: none


def test_quick_recall_scale_measures_the_shared_quick_stores() -> None:
    from bench import bench_recall_scale

    quick = bench_recall_scale.plan(quick=True, tiny=False)
    full = bench_recall_scale.plan(quick=False, tiny=False)
    assert quick.sizes == harness.QUICK_SIZES
    assert quick.real_vectors == harness.QUICK_REAL_VECTORS
    assert 0 < quick.separate_ingest < quick.sizes[0]
    assert quick.queries < full.queries and quick.writes < full.writes
    assert full.sizes == bench_recall_scale.SIZES and full.separate_ingest == 0


def test_an_only_run_updates_its_own_entries_and_keeps_the_whole_runs_timings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLEETMEM_BENCH_RESULTS", str(tmp_path))
    whole = [("a", True, 100.0, tmp_path / "a.json"), ("b", True, 50.0, tmp_path / "b.json")]
    run_all.write_timings("full", whole, 151.0, (1.0, 1.0, 1.0), {"a": 90.0, "b": 40.0})
    # A later `--only b` replaces b's entry; the whole run's wall time and loads stay.
    again = [("b", True, 20.0, tmp_path / "b.json")]
    path = run_all.write_timings("full", again, 20.0, (3.0, 3.0, 3.0), {"b": 19.0}, partial=True)
    timings = json.loads(path.read_text(encoding="utf-8"))
    assert timings["benchmarks"]["a"]["elapsed_s"] == 100.0
    assert timings["benchmarks"]["b"] == {
        "ok": True,
        "elapsed_s": 20.0,
        "cpu_s": 19.0,
        "result": "b.json",
    }
    assert (timings["sum_elapsed_s"], timings["sum_cpu_s"]) == (120.0, 109.0)
    assert timings["wall_s"] == 151.0 and timings["loadavg_before"] == [1.0, 1.0, 1.0]
    assert timings["rerun"] == ["b"] and timings["benchmark"] == "run_all"
    # With no whole-run file yet, an --only run writes its own.
    fresh = tmp_path / "fresh"
    monkeypatch.setenv("FLEETMEM_BENCH_RESULTS", str(fresh))
    path = run_all.write_timings("full", again, 20.0, (3.0, 3.0, 3.0), {"b": 19.0}, partial=True)
    assert json.loads(path.read_text(encoding="utf-8"))["wall_s"] == 20.0
