"""`fleetmem runs ...` and `fleetmem presence` as real subprocesses over one home."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLE, write_config
from tests.surfaces.cli_helpers import FLEETMEM, env_for, run_cli, run_json

API = "github.com/acme/api"


@pytest.fixture
def home(home: Path) -> Path:
    write_config(home, '[model_api]\nembedding_model = ""\n')
    return home


def with_token(home: Path, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FLEETMEM, *args],
        capture_output=True,
        text=True,
        env=env_for(home, FLEETMEM_RUN_TOKEN=token),
        timeout=120,
    )


def test_open_touch_presence_ingest_list_show(home: Path, git_repo: Any) -> None:
    root: Path = git_repo("api", remote="git@github.com:acme/api.git", branch="fix/flaky-ledger")
    opened = run_json(
        home,
        "runs",
        "open",
        "api-fixer",
        "--workdir",
        str(root),
        "--adapter",
        "claude-code",
        "--run-id",
        "run-2026-11-28-0042",
    )
    assert (opened["run_id"], opened["repo"], opened["branch"]) == (
        "run-2026-11-28-0042",
        API,
        "fix/flaky-ledger",
    )
    token = opened["token"]
    other = run_json(home, "runs", "open", "codex", "--repo", API, "--branch", "fix/flaky-ledger")

    touched = with_token(
        home, token, "runs", "touch", str(root / "billing" / "ledger.py"), "--json"
    )
    assert touched.returncode == 0, touched.stderr
    assert json.loads(touched.stdout)["files"] == ["billing/ledger.py"]
    beat = run_json(home, "runs", "heartbeat", "--token", other["token"], "--files", "a.py")
    assert beat["state"] == "live" and beat["files"] == ["a.py"]

    presence = run_json(home, "presence", "--repo", API)
    assert sorted(r["agent"] for r in presence["runs"]) == ["api-fixer", "codex"]
    text = run_cli(home, "presence").stdout
    assert text.splitlines()[0] == API and "  fix/flaky-ledger" in text and "api-fixer" in text

    ingested = run_json(home, "runs", "ingest", str(EXAMPLE))
    assert ingested["status"] == "recorded"
    listed = run_json(home, "runs", "list", "--repo", API)
    states = {r["run_id"]: r["state"] for r in listed}
    assert states == {"run-2026-11-28-0042": "recorded", other["run_id"]: "live"}
    assert [r["agent"] for r in run_json(home, "presence")["runs"]] == ["codex"]

    shown = run_json(home, "runs", "show", "run-2026-11-28-0042")
    assert shown["live"]["state"] == "closed" and shown["live"]["close_reason"] == "record"
    assert shown["record"]["outcome"] == "failed" and shown["record"]["duration_ms"] == 1_064_000
    assert shown["sessions"][0]["edits"][0] == "billing/ledger.py"
    assert (
        "record   failed (verify_failed)"
        in run_cli(home, "runs", "show", "run-2026-11-28-0042").stdout
    )

    closed = with_token(home, token, "runs", "heartbeat")
    assert closed.returncode == 4 and "closed" in closed.stderr


def test_the_text_output_prints_the_token_for_the_environment(home: Path) -> None:
    out = run_cli(home, "runs", "open", "api-fixer", "--repo", API).stdout.splitlines()
    assert out[0].startswith("run run-") and out[0].endswith(f"(api-fixer, {API})")
    assert out[1].startswith("FLEETMEM_RUN_TOKEN=fmr_")
    token = out[1].split("=", 1)[1]
    done = with_token(home, token, "runs", "touch", "src/app.py")
    assert done.returncode == 0 and "files edited: src/app.py" in done.stdout


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (("runs", "open", "Bad Agent", "--repo", API), 2, "agent"),
        (("runs", "open", "api-fixer", "--repo", "https://x/y"), 2, "repo"),
        (("runs", "heartbeat", "--token", "fmr_unknown"), 4, "unknown run token"),
        (("runs", "heartbeat"), 4, "no run token"),
        (("runs", "show", "nope"), 3, "unknown run"),
        (("runs", "list", "--limit", "0"), 2, "limit"),
    ],
)
def test_errors_have_exit_codes_and_name_the_problem(
    home: Path, args: tuple[str, ...], code: int, needle: str
) -> None:
    proc = run_cli(home, *args, check=False)
    assert proc.returncode == code, proc.stderr
    assert needle in proc.stderr


def test_runs_ingest_still_works_from_stdin(home: Path) -> None:
    proc = run_cli(home, "runs", "ingest", "-", stdin=EXAMPLE.read_bytes())
    assert "recorded" in proc.stdout


def test_presence_without_runs(home: Path) -> None:
    assert run_cli(home, "presence").stdout.strip() == "no live runs"
    assert run_cli(home, "runs", "list").stdout.strip() == "no runs"
