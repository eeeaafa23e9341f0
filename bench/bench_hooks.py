"""How long Claude Code waits for fleetmem's SessionStart hook, with a healthy and a dead provider.

Claude Code waits for the whole ``fleetmem hook claude-code SessionStart`` process: Python's
start, fleetmem's imports, opening the store, the run, the briefing (and its episode provider)
and the exit. This measures exactly that, as wall time of a real subprocess fed a SessionStart
payload, for a fresh session each time, with ``memory_briefing = true``, one fact and a small
git repository, under four providers:

* ``healthy``: the built-in provider (its in-process MCP session is cold in every hook);
* ``exits``: an upstream whose command exits at once (``/bin/false``);
* ``closed_port``: an upstream on a closed port (``http://127.0.0.1:9/mcp``);
* ``never_answers``: an upstream that starts and never says a word.

``provider_timeout`` is the default unless ``PROVIDER_TIMEOUT`` is set. Each case reports the
median, min and max over its runs, and whether every answer carried the briefing (and, with
a dead provider, an episodes section marked ``provider_unavailable``). Figures depend on the
machine's load: the result records ``os.getloadavg()`` before and after.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

FLEETMEM = str(Path(sys.executable).with_name("fleetmem"))
CASES: dict[str, str | None] = {
    "healthy": None,
    "exits": 'command = "/bin/false"\n',
    "closed_port": 'url = "http://127.0.0.1:9/mcp"\n',
    "never_answers": f'command = "{sys.executable}"\n'
    'args = ["-c", "import time; time.sleep(60)"]\n',
}
RUNS = 5
#: ``--quick``: one run per case (the dead-provider cases are dominated by their timeouts).
QUICK_RUNS = 1
#: ``--tiny``: a healthy and a dead provider, neither of which waits for a timeout.
TINY_CASES = ("healthy", "exits")
#: Set to a duration ("2s") to measure with a provider_timeout other than the default.
PROVIDER_TIMEOUT: str | None = None


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, timeout=30)


def _template(base: Path) -> Path:
    """A home holding one fact and a small git repository, made once and copied per case
    (``fleetmem facts add`` is a whole process start: once is enough)."""
    home, repo = base / "home", base / "repo"
    home.mkdir(parents=True)
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "remote", "add", "origin", "git@github.com:acme/api.git")
    (repo / "app.py").write_text("VALUE = 1\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "i")
    _write_config(home, None)
    subprocess.run(
        [FLEETMEM, "facts", "add", "Run the tests with -p no:cacheprovider."],
        env=_env(home, base), check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return base


def _write_config(home: Path, upstream: str | None) -> None:
    config = '[model_api]\nembedding_model = ""\n[agent.claude-code]\nmemory_briefing = true\n'
    if PROVIDER_TIMEOUT:
        config += f'[memory.episodes]\nprovider_timeout = "{PROVIDER_TIMEOUT}"\n'
    if upstream is not None:
        config += f'[mcp.dead]\n{upstream}[memory]\nprovider = "dead"\n'
    (home / "fleetmem.toml").write_text(config, encoding="utf-8")


def _env(home: Path, base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
    # The bench's own user cache, not one under the throwaway HOME: compiled dataclass
    # methods and patterns live there (bench.common.warm_user_caches), as for a real user.
    env.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
    env.update({"FLEETMEM_HOME": str(home), "HOME": str(base), "HF_HUB_OFFLINE": "1"})
    return env


def _setup(base: Path, upstream: str | None, template: Path) -> tuple[Path, Path, dict[str, str]]:
    """A copy of the template in ``base``, configured with ``upstream`` as the provider."""
    shutil.copytree(template, base, dirs_exist_ok=True)
    home, repo = base / "home", base / "repo"
    _write_config(home, upstream)
    return home, repo, _env(home, base)


def _one(repo: Path, env: dict[str, str]) -> tuple[float, str]:
    payload = {
        "session_id": str(uuid.uuid4()),
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(repo),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    began = time.perf_counter()
    proc = subprocess.run(
        [FLEETMEM, "hook", "claude-code", "SessionStart"],
        input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=repo,
        timeout=120, check=False,
    )  # fmt: skip
    took = time.perf_counter() - began
    context = ""
    if proc.stdout:
        context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    return took, context


def _case(name: str, upstream: str | None, runs: int, template: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"fleetmem-bench-hooks-{name}-") as tmp:
        _home, repo, env = _setup(Path(tmp), upstream, template)
        times, briefed, degraded = [], 0, 0
        for _ in range(runs):
            took, context = _one(repo, env)
            times.append(took)
            briefed += "no:cacheprovider" in context
            degraded += "provider_unavailable" in context
    return {
        "runs": runs,
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "briefed": briefed,
        "marked_provider_unavailable": degraded,
    }


def _close_case(name: str, upstream: str | None, runs: int, template: Path) -> dict[str, Any]:
    """Wall time of ``fleetmem run`` for an agent that exits at once (``/bin/echo``, no
    briefing): start-up plus the close, where a hung provider used to hold the exit."""
    with tempfile.TemporaryDirectory(prefix=f"fleetmem-bench-close-{name}-") as tmp:
        home, repo, env = _setup(Path(tmp), upstream, template)
        with (home / "fleetmem.toml").open("a", encoding="utf-8") as fh:
            fh.write('[agent.quick]\nadapter = "command"\ncommand = "/bin/echo"\nprompt = "hi"\n')
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            subprocess.run(
                [FLEETMEM, "run", "quick"], cwd=repo, env=env, capture_output=True,
                timeout=120, check=False,
            )  # fmt: skip
            times.append(time.perf_counter() - began)
    return {
        "runs": runs,
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
    }


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """Time SessionStart hooks per provider case, and ``fleetmem run``'s close with a healthy
    and a hung provider; :data:`RUNS` runs each (:data:`QUICK_RUNS` when quick: every case
    still runs). ``tiny`` (the test suite's run): one run of the cases in :data:`TINY_CASES`,
    which are not bound by a provider timeout."""
    runs = QUICK_RUNS if quick or tiny else RUNS
    hooks = {n: CASES[n] for n in TINY_CASES} if tiny else CASES
    closing = ("healthy",) if tiny else ("healthy", "never_answers")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="fleetmem-bench-hooks-template-") as tmp:
        template = _template(Path(tmp) / "base")
        cases = {name: _case(name, upstream, runs, template) for name, upstream in hooks.items()}
        closes = {name: _close_case(name, CASES[name], runs, template) for name in closing}
    return {
        "provider_timeout": PROVIDER_TIMEOUT or "default",
        "runs": runs,
        "cases": cases,
        "run_close": closes,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


def summarize(result: dict[str, Any]) -> str:
    lines = [f"  SessionStart hook wall time (provider_timeout {result['provider_timeout']}):"]
    for name, case in result["cases"].items():
        lines.append(
            f"    {name:14s} median {case['median_s']:.2f} s (min {case['min_s']:.2f}, max "
            f"{case['max_s']:.2f}; briefed {case['briefed']}/{case['runs']}, marked "
            f"provider_unavailable {case['marked_provider_unavailable']})"
        )
    lines.append("  `fleetmem run` of an agent that exits at once (start-up + close):")
    for name, case in result["run_close"].items():
        lines.append(
            f"    {name:14s} median {case['median_s']:.2f} s (min {case['min_s']:.2f}, max "
            f"{case['max_s']:.2f})"
        )
    lines.append(
        f"    load average before {result['loadavg_before']}, after {result['loadavg_after']}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarize(run(quick="--quick" in sys.argv)))
