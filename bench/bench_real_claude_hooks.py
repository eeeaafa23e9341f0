"""Hook wall time inside a real Claude Code session (issue 18's measure).

The real ``claude`` CLI (``.venv/node``, the version ``make test`` installs) runs print-mode
sessions one after another in a small git repository, with ``fleetmem install claude-code`` in
its settings and the model replaced by the stand-in Messages API on 127.0.0.1
(``tests/integrations/fixtures/anthropic_standin.py``). The stand-in's script makes the
session call the Bash tool ``--calls`` times (``true``, and every fifth one ``false``, so
PostToolUseFailure runs too) and then end; the prompt asks to remember something, so
UserPromptSubmit captures a fact.

Each installed hook command is wrapped by a small timer that runs it exactly as Claude Code
would (``/bin/sh -c COMMAND``, the payload on stdin, the answer on stdout) and appends its
wall time to a log: the figure is what the session waits on each hook, without the timer's own
start. Run twice, with no daemon and with ``fleetmem serve`` up on the same home. Writes
``bench/results/real-claude-hooks.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.integrations.fixtures.anthropic_standin import serving

from bench.bench_hook_events import (
    FLEETMEM,
    TARGETS_MS,
    _start_daemon,
    _summary,
    _wait_for_detached,
    session_home,
)
from bench.bench_hooks import _env
from bench.common import compile_sources, machine

ROOT = Path(__file__).resolve().parents[1]
CLAUDE = ROOT / ".venv" / "node" / "node_modules" / ".bin" / "claude"
OUT = Path(__file__).parent / "results" / "real-claude-hooks.json"
CALLS = 30
SESSIONS = 3
TIMER = """\
import json, subprocess, sys, time
log, event, command = sys.argv[1], sys.argv[2], sys.argv[3]
payload = sys.stdin.buffer.read()
began = time.perf_counter()
done = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True)
elapsed = time.perf_counter() - began
sys.stdout.buffer.write(done.stdout)
sys.stderr.buffer.write(done.stderr)
with open(log, "a") as fh:
    fh.write(json.dumps({"event": event, "s": elapsed, "rc": done.returncode}) + "\\n")
sys.exit(done.returncode)
"""


def _wrap_hooks(settings: Path, timer: Path, log: Path) -> int:
    """Wrap every fleetmem hook command of ``settings`` in the timer; how many were."""
    data = json.loads(settings.read_text(encoding="utf-8"))
    wrapped = 0
    for event, groups in data.get("hooks", {}).items():
        for group in groups:
            for hook in group.get("hooks", []):
                command = hook["command"]
                if " hook claude-code " not in command:
                    continue
                hook["command"] = " ".join(
                    json.dumps(part) for part in (sys.executable, str(timer), str(log), event)
                ) + " " + json.dumps(command)  # fmt: skip
                wrapped += 1
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return wrapped


def _script(calls: int) -> list[Any]:
    steps: list[Any] = []
    for n in range(calls):
        command = "false" if n % 5 == 4 else "true"
        steps.append({"tool": "Bash", "input": {"command": command, "description": f"step {n}"}})
    steps.append("done.")
    return steps


def _mode(calls: int, with_daemon: bool, sessions: int) -> dict[str, Any]:
    """``sessions`` sessions one after the other on one home (and one daemon): the first
    finds everything cold (a daemon just started), the later ones as a working day does."""
    with tempfile.TemporaryDirectory(prefix="fleetmem-bench-real-claude-") as tmp:
        base = Path(tmp)
        home, repo = session_home(base, "git@github.com:acme/api.git")
        env = _env(home, base)
        subprocess.run([FLEETMEM, "install", "claude-code"], env=env, check=True,
                       capture_output=True, timeout=120)  # fmt: skip
        timer = base / "timer.py"
        timer.write_text(TIMER, encoding="utf-8")
        settings = base / ".claude" / "settings.json"
        original = settings.read_text(encoding="utf-8")
        daemon = _start_daemon(home, env) if with_daemon else None
        try:
            runs = []
            for n in range(sessions):
                # A session starts once the previous one's detached recorder (no daemon: a
                # `fleetmem jobs` process) is done, as the next session of a working day does;
                # back to back, the two share the machine and SessionStart waits 0.2 s more.
                _wait_for_detached(home)
                log = base / f"hooks-{n}.jsonl"
                settings.write_text(original, encoding="utf-8")
                wrapped = _wrap_hooks(settings, timer, log)
                runs.append(_session(calls, repo, env, log, wrapped))
        finally:
            if daemon is not None:
                daemon.terminate()
                daemon.wait(30)
        facts = subprocess.run([FLEETMEM, "facts", "list", "--json"], env=env, check=True,
                               capture_output=True, text=True, timeout=120)  # fmt: skip
    return {"fact_captured": "Fridays" in facts.stdout, "sessions": runs}


def _session(
    calls: int, repo: Path, env: dict[str, str], log: Path, wrapped: int
) -> dict[str, Any]:
    with serving(_script(calls)) as (standin, url):
        began = time.perf_counter()
        proc = subprocess.run(
            [str(CLAUDE), "-p", "remember that billing never deploys on Fridays",
             "--output-format", "json", "--allowedTools", "Bash"],
            cwd=repo, capture_output=True, text=True, timeout=900, check=False,
            env={**env, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-standin",
                 "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
        )  # fmt: skip
        session_s = time.perf_counter() - began
        requests = len(standin.model_requests)
    if proc.returncode != 0:
        raise RuntimeError(f"claude exited {proc.returncode}: {proc.stderr[-2000:]}")
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    events: dict[str, list[float]] = {}
    for row in rows:
        events.setdefault(row["event"], []).append(row["s"])
    figures = {}
    for name, times in sorted(events.items()):
        summary = _summary(times)
        target = TARGETS_MS.get(name)
        met = None if target is None else summary["p95_ms"] <= target
        figures[name] = {"count": len(times), **summary, "target_ms": target, "met": met}
    return {
        "hooks_wrapped": wrapped,
        "model_requests": requests,
        "session_s": round(session_s, 1),
        "hook_s_total": round(sum(r["s"] for r in rows), 1),
        "hooks_failed": sum(1 for r in rows if r["rc"] != 0),
        "events": figures,
    }


def run(calls: int = CALLS, sessions: int = SESSIONS) -> dict[str, Any]:
    compile_sources()
    if not CLAUDE.exists():
        raise RuntimeError(f"{CLAUDE} is missing: `make .venv/.test-tools` installs it")
    load_before = os.getloadavg()
    modes = {mode: _mode(calls, mode == "daemon", sessions) for mode in ("own_process", "daemon")}
    return {
        "claude_cli": _version(),
        "tool_calls": calls,
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
        "modes": modes,
    }


def _version() -> str:
    done = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True, timeout=60)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    args = parser.parse_args()
    result = run(args.calls, args.sessions)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    result["machine"] = machine()  # date, commit and load, for the report's source list
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
