"""``fleetmem provider check`` (seed 000 REQ-4) against real provider processes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fleetmem.service.bootstrap import App
from tests.conftest import write_config
from tests.providers.conftest import (
    SERVER_MEMORY,
    Calls,
    HttpProvider,
    config,
    stdio_upstream,
)
from tests.surfaces.cli_helpers import run_cli


def check(home: Path, *args: str) -> tuple[int, dict[str, Any]]:
    proc = run_cli(home, "provider", "check", "--json", *args, check=False)
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def outcomes(report: dict[str, Any]) -> list[str]:
    return [c["outcome"] for c in report["checks"]]


def test_builtin_passes_every_check(home: Path) -> None:
    write_config(home, config())
    code, report = check(home)
    assert code == 0 and report["provider"] == "builtin"
    assert outcomes(report) == ["pass"] * 7
    text = run_cli(home, "provider", "check").stdout
    assert "result: passed" in text and "FAIL" not in text


def test_reference_provider_passes_over_stdio(home: Path, calls: Calls) -> None:
    write_config(home, config(stdio_upstream("ref", "--calls-file", str(calls.path))))
    code, report = check(home, "--provider", "ref")
    assert code == 0, report
    assert outcomes(report) == ["pass"] * 7
    assert report["implementation"] == {"name": "fleetmem-reference-provider", "version": "1.0.0"}
    assert report["cleanup"] == {"recorded": 2, "forgotten": 2, "failed": 0}
    # Everything recorded was forgotten, and nothing was indexed by fleetmem.
    recorded = [d for _, t, d in calls.lines() if t == "memory_record_episode"]
    assert len(recorded) == 1 and recorded[0].startswith("ep_")
    assert len([t for t in calls.tools() if t == "memory_forget"]) == 3  # 2 ids + unknown id


def test_reference_provider_passes_over_streamable_http(
    home: Path, http_provider: Callable[..., HttpProvider]
) -> None:
    server = http_provider()
    write_config(home, config(f'[mcp.web]\nurl = "{server.url}"\n'))
    code, report = check(home, "--provider", "web")
    assert code == 0, report
    assert report["transport"] == "http" and outcomes(report) == ["pass"] * 7


def test_a_provider_that_ignores_scope_passes_with_a_warning(home: Path) -> None:
    write_config(home, config(stdio_upstream("wide", "--misbehave", "ignore-scope")))
    code, report = check(home, "--provider", "wide")
    assert code == 0
    assert outcomes(report) == ["pass", "pass", "pass", "pass", "warn", "pass", "pass"]


def test_a_provider_that_never_forgets_passes_with_a_warning(home: Path) -> None:
    write_config(home, config(stdio_upstream("sticky", "--misbehave", "never-forget")))
    code, report = check(home, "--provider", "sticky")
    assert code == 0
    assert report["checks"][5]["outcome"] == "warn"


def test_a_provider_without_memory_contract_fails_check_1_and_records_nothing(
    home: Path, calls: Calls
) -> None:
    write_config(
        home,
        config(
            stdio_upstream("nocon", "--misbehave", "no-contract", "--calls-file", str(calls.path))
        ),
    )
    code, report = check(home, "--provider", "nocon")
    assert code != 0
    assert outcomes(report) == ["fail"] + ["skip"] * 6
    assert calls.tools() == []


def test_an_unsupported_contract_fails_check_1(home: Path) -> None:
    write_config(home, config(stdio_upstream("v2", "--misbehave", "contract2")))
    code, report = check(home, "--provider", "v2")
    assert code != 0 and report["contract"] == 2
    assert report["checks"][0]["outcome"] == "fail"


def test_out_of_contract_responses_fail_check_7(home: Path) -> None:
    write_config(home, config(stdio_upstream("big", "--misbehave", "oversized")))
    code, report = check(home, "--provider", "big")
    assert code != 0
    assert outcomes(report) == ["pass"] * 6 + ["fail"]
    assert "maxLength" in report["checks"][6]["detail"]


def test_a_hanging_recall_fails_and_what_was_recorded_is_still_forgotten(
    home: Path, calls: Calls
) -> None:
    write_config(
        home,
        config(
            stdio_upstream(
                "slow",
                "--misbehave",
                "hang",
                "--calls-file",
                str(calls.path),
                extra='call_timeout = "500ms"\n',
            )
        ),
    )
    code, report = check(home, "--provider", "slow")
    assert code != 0
    assert outcomes(report)[:4] == ["pass", "pass", "pass", "fail"]
    assert report["cleanup"] == {"recorded": 2, "forgotten": 2, "failed": 0}
    recorded = {d for _, t, d in calls.lines() if t == "memory_record_episode"}
    assert len(recorded) == 1
    forgotten = {d for _, t, d in calls.lines() if t == "memory_forget"}
    assert len({d for d in forgotten if d.startswith("ref-")}) == 2


def test_a_provider_that_cannot_start_fails_check_1(home: Path) -> None:
    write_config(home, config('[mcp.ghost]\ncommand = "/nonexistent/provider"\n'))
    code, report = check(home, "--provider", "ghost")
    assert code != 0 and report["checks"][0]["outcome"] == "fail"


def test_naming_an_undeclared_provider_is_not_found(home: Path) -> None:
    write_config(home, config())
    proc = run_cli(home, "provider", "check", "--provider", "nope", check=False)
    assert proc.returncode == 3 and "nope" in proc.stderr and "[mcp.NAME]" in proc.stderr


@pytest.mark.skipif(not SERVER_MEMORY.exists(), reason="run `make install` for the npm server")
def test_a_third_party_server_without_the_contract_fails_check_1(
    home: Path, tmp_path: Path
) -> None:
    memory_file = tmp_path / "npm-memory.jsonl"
    write_config(
        home,
        config(
            f'[mcp.kg]\ncommand = "{SERVER_MEMORY}"\n'
            f'env = {{ MEMORY_FILE_PATH = "{memory_file}" }}\n'
        ),
    )
    code, report = check(home, "--provider", "kg")
    assert code != 0
    assert outcomes(report) == ["fail"] + ["skip"] * 6
    assert "memory_contract" in report["checks"][0]["detail"]
    # Nothing was recorded: the server's store was never written.
    assert not memory_file.exists() or memory_file.read_text().strip() == ""


def test_the_check_runs_in_process_too(make_app: Callable[..., App]) -> None:
    app = make_app(config(stdio_upstream("ref")))
    report = app.providers.check("ref")
    assert report.passed and [c.outcome for c in report.checks] == ["pass"] * 7
    assert report.transport == "stdio"
