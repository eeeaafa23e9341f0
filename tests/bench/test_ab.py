"""bench.ab: the rows it reads from results, the table it prints, and the arguments it
refuses (the runs themselves are benchmarks, never tests)."""

from __future__ import annotations

import random

import pytest

from bench import ab


def _result(rng: random.Random) -> tuple[dict[str, object], dict[str, tuple[float, float]]]:
    """A result shaped like mcp_recall's, with fresh figures, and the rows it holds."""
    want: dict[str, tuple[float, float]] = {}
    sizes: dict[str, object] = {}
    for size in ("10000", "100000"):
        rows: dict[str, object] = {"queries": 200, "note": "not a row"}
        for name in ("mcp_stdio", "service", "embed_query"):
            p50 = round(rng.uniform(1, 30), 3)
            p95 = round(p50 + rng.uniform(0, 20), 3)
            rows[name] = {"n": 200, "p50_ms": p50, "p95_ms": p95, "max_ms": p95 + 1}
            want[f"sizes/{size}/{name}"] = (p50, p95)
        rows["half"] = {"p50_ms": 1.0}  # one figure only: not a row
        sizes[size] = rows
    return {"machine": {"load": 1.2}, "sizes": sizes}, want


def test_every_latency_row_is_read_by_its_path() -> None:
    rng = random.Random(random.SystemRandom().randrange(2**32))
    result, want = _result(rng)
    got = {path: (p50, p95) for path, p50, p95 in ab.latency_rows(result)}
    assert got == want


def test_the_table_shows_each_run_and_the_mean_change() -> None:
    rng = random.Random(random.SystemRandom().randrange(2**32))
    base = [_result(rng) for _ in range(2)]
    current = [_result(rng) for _ in range(2)]
    del current[1][0]["sizes"]["100000"]["service"]  # type: ignore[index]
    lines = ab.table([r for r, _ in base], [r for r, _ in current])
    assert lines[0].startswith("| row |") and len(lines) == 2 + 5  # the missing row is left out
    row = next(line for line in lines if line.startswith("| sizes/10000/mcp_stdio |"))
    path = "sizes/10000/mcp_stdio"
    before = [w[path] for _, w in base]
    after = [w[path] for _, w in current]
    for p50, p95 in [*before, *after]:
        assert f"{p50:.1f} / {p95:.1f}" in row
    change = [sum(a[i] for a in after) / 2 - sum(b[i] for b in before) / 2 for i in (0, 1)]
    assert row.endswith(f"| {change[0]:+.1f} / {change[1]:+.1f} |")
    assert ab.table([], []) == []


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--base", "HEAD", "--only", "no_such_bench"], "no_such_bench"),
        (["--base", "not-a-revision-anywhere", "--only", "facts"], "not-a-revision-anywhere"),
        (["--base", "HEAD", "--only", "facts", "--rounds", "0"], "--rounds 0"),
    ],
)
def test_bad_arguments_are_refused_by_name(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        ab.main(argv)
    assert exit_.value.code == 2
    assert named in capsys.readouterr().err
