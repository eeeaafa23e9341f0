"""A third-party client: the MCP Inspector's CLI (npm, installed by the Makefile) against
``fleetmem mcp``, listing the tools and calling ``recall``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import World, document, ids
from tests.surfaces.cli_helpers import FLEETMEM

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / ".venv" / "node" / "node_modules" / ".bin" / "mcp-inspector"


def inspector(world: World, tmp_path: Path, *method: str) -> Any:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the MCP Inspector cannot be installed here")
    assert INSPECTOR.exists(), f"{INSPECTOR} is missing: `make install` installs it"
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [
            str(INSPECTOR),
            "--cli",
            "-e",
            f"FLEETMEM_HOME={world.home}",
            "-e",
            f"FLEETMEM_RUN_TOKEN={world.me.token}",
            "-e",
            "HF_HUB_OFFLINE=1",
            FLEETMEM,
            "mcp",
            *method,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_inspector_lists_the_tools_and_calls_recall(world: World, tmp_path: Path) -> None:
    listed = inspector(world, tmp_path, "--method", "tools/list")
    names = [t["name"] for t in listed["tools"]]
    assert names == [
        "recall",
        "briefing",
        "remember",
        "vote_fact",
        "read_context_file",
        "note_project",
        "update_notes",
    ]
    recall = next(t for t in listed["tools"] if t["name"] == "recall")
    assert recall["inputSchema"]["properties"]["query"]["maxLength"] == 512

    called = inspector(
        world,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "recall",
        "--tool-arg",
        "query=settlement fixture",
    )
    assert called["isError"] is False
    [content] = called["content"]
    answer = content["text"]
    assert document(answer).kind == "recall"
    assert ids(answer, "facts") == [world.facts["fixture"]] and ids(answer, "episodes")
    # The call was attributed: the fact it was shown is recorded against the run.
    assert world.exposures("me") == [(world.facts["fixture"], "recall")]
