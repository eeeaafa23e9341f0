"""Wall time of each Claude Code hook event, as Claude Code waits for it: a real
``fleetmem hook claude-code EVENT`` subprocess fed the event's payload, over a small git
repository and a store holding one fact.

One session is opened (SessionStart), then each event is timed ``--runs`` times:

* ``PostToolUse bash``: a command (the hot path: noted without opening the store);
* ``PostToolUse edit again``: an edit of a file heartbeated moments ago (the same);
* ``PostToolUse edit new``: an edit of a new file (opens the store to heartbeat presence);
* ``PostToolUseFailure bash``: a failed command (the hot path);
* ``UserPromptSubmit``: an ordinary prompt (opens the store for its relevant facts);
* ``UserPromptSubmit capture``: a prompt asking to remember something.

Reports p50/p95/max per event and the load average before and after (the figures depend on
the machine's load). No daemon is involved: the hooks never talk to one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.bench_hooks import _env, _git

FLEETMEM = str(Path(sys.executable).with_name("fleetmem"))
RUNS = 10


def _hook(event: str, payload: dict[str, Any], env: dict[str, str], cwd: Path) -> float:
    began = time.perf_counter()
    subprocess.run(
        [FLEETMEM, "hook", "claude-code", event],
        input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=cwd,
        timeout=120, check=False,
    )  # fmt: skip
    return time.perf_counter() - began


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "p50_ms": round(statistics.median(ordered) * 1000),
        "p95_ms": round(p95 * 1000),
        "max_ms": round(ordered[-1] * 1000),
    }


def run(runs: int = RUNS) -> dict[str, Any]:
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="fleetmem-bench-hook-events-") as tmp:
        base = Path(tmp)
        home, repo = base / "home", base / "repo"
        home.mkdir()
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main")
        (repo / "app.py").write_text("VALUE = 1\n", encoding="utf-8")
        (home / "fleetmem.toml").write_text(
            '[model_api]\nembedding_model = ""\n[agent.claude-code]\n', encoding="utf-8"
        )
        env = _env(home, base)
        sid = str(uuid.uuid4())
        common = {"session_id": sid, "cwd": str(repo), "transcript_path": "/nonexistent"}
        # On a loaded machine a SessionStart may run out of its budget before the run is
        # open; the hot paths need the open session, so try again (counted in the result).
        starts = 0
        while starts < 5 and not list((home / "hooks" / "claude-code").glob("*.json")):
            _hook("SessionStart", {**common, "hook_event_name": "SessionStart"}, env, repo)
            starts += 1

        def tool(event: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
            return {**common, "hook_event_name": event, "tool_name": name, "tool_input": tool_input}

        app_py = str(repo / "app.py")
        _hook("PostToolUse", tool("PostToolUse", "Edit", {"file_path": app_py}), env, repo)
        cases: dict[str, list[float]] = {}
        for i in range(runs):
            for name, event, payload in (
                ("PostToolUse bash", "PostToolUse", tool("PostToolUse", "Bash", {"command": "ls"})),
                (
                    "PostToolUse edit again",
                    "PostToolUse",
                    tool("PostToolUse", "Edit", {"file_path": app_py}),
                ),
                (
                    "PostToolUse edit new",
                    "PostToolUse",
                    tool("PostToolUse", "Write", {"file_path": str(repo / f"new{i}.py")}),
                ),
                (
                    "PostToolUseFailure bash",
                    "PostToolUseFailure",
                    tool("PostToolUseFailure", "Bash", {"command": "pytest -q"}),
                ),
                (
                    "UserPromptSubmit",
                    "UserPromptSubmit",
                    {**common, "hook_event_name": "UserPromptSubmit", "prompt": "fix the bug"},
                ),
                (
                    "UserPromptSubmit capture",
                    "UserPromptSubmit",
                    {
                        **common,
                        "hook_event_name": "UserPromptSubmit",
                        "prompt": f"remember that release {i} ships on Tuesdays",
                    },
                ),
            ):
                cases.setdefault(name, []).append(_hook(event, payload, env, repo))
    return {
        "runs": runs,
        "session_start_attempts": starts,
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
        "events": {name: _summary(times) for name, times in cases.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    print(json.dumps(run(parser.parse_args().runs), indent=1))


if __name__ == "__main__":
    main()
