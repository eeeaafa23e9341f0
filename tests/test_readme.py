"""The README's commands, run as written.

Every fenced ``sh`` block of README.md is listed here line for line, so the test fails when
the README gains, loses or changes a command without this file following. The quick start
runs for real from the repository root: ``make serve`` on a free port until its sign-in
link opens the web UI, then ``install claude-code``, a first fact and its recall, and the
episode walk-through. The install lines are run by tests/packaging; ``make test`` (which runs
this file) is checked with ``make -n`` for what it runs.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.packaging.test_install_paths import INSTALL_COMMANDS
from tests.surfaces.test_http import free_port

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)

SERVE = ("make serve",)
FIRST_STEPS = (
    ".venv/bin/fleetmem install claude-code",
    '.venv/bin/fleetmem facts add "The billing ledger tests need TZ=UTC to pass"'
    " --scope project:github.com/acme/api",
    '.venv/bin/fleetmem recall "ledger tests timezone" --repo github.com/acme/api',
)
EPISODES = (
    ".venv/bin/fleetmem runs ingest examples/run-record.json",
    ".venv/bin/fleetmem episodes",
    '.venv/bin/fleetmem recall "sporadic bookkeeping assertion varying by hour"'
    " --repo github.com/acme/api",
    ".venv/bin/fleetmem status",
)
TESTS = ("make test",)
#: The README's sh blocks, in order.
BLOCKS = (SERVE, FIRST_STEPS, EPISODES, INSTALL_COMMANDS, TESTS)

#: `make` without remaking the virtualenv: the tests run inside it already.
MAKE = ["make", "-o", ".venv/.installed", "-o", ".venv/.test-tools"]


def readme_blocks(language: str) -> list[tuple[str, ...]]:
    """The lines of each fenced block in ``language``, comments and blank lines dropped."""
    blocks = []
    for lang, body in FENCE.findall(README.read_text(encoding="utf-8")):
        if lang == language:
            lines = [ln.strip() for ln in body.splitlines()]
            blocks.append(tuple(ln for ln in lines if ln and not ln.startswith("#")))
    return blocks


def test_the_readme_commands_are_the_ones_tested_here() -> None:
    assert readme_blocks("sh") == list(BLOCKS)
    text = README.read_text(encoding="utf-8")
    assert "not built yet" not in text
    for needed in ("Python 3.11", "make", "git", "npm", "Chromium", "zsh", "fish"):
        assert needed in text.split("## Run the tests", 1)[1], needed
    # Every docs/ page exists, and every page is linked from the index.
    linked = set(re.findall(r"\]\((docs/[\w./-]+?\.md)", text))
    assert all((ROOT / page).exists() for page in linked), linked
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert pages <= linked, sorted(pages - linked)


@pytest.fixture
def user(tmp_path: Path) -> dict[str, str]:
    """A newcomer's environment: a fresh HOME and FLEETMEM_HOME, nothing else of ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETMEM_", "CLAUDE_"))}
    (tmp_path / "user").mkdir()
    (tmp_path / "fleetmem-home").mkdir()
    # The commands are the README's; only the recall deadlines are raised above their 2 s
    # defaults, since this suite shares two cores with parallel workers.
    (tmp_path / "fleetmem-home" / "fleetmem.toml").write_text(
        '[memory.episodes]\nprovider_timeout = "30s"\n[memory.facts]\nrecall_timeout = "10s"\n'
    )
    env.update(
        {
            "HOME": str(tmp_path / "user"),
            "FLEETMEM_HOME": str(tmp_path / "fleetmem-home"),
            "HF_HUB_OFFLINE": "1",
        }
    )
    return env


class MakeServe:
    """`make serve PORT=N` in its own process group, its stdout collected line by line."""

    def __init__(self, env: dict[str, str], port: int) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [*MAKE, "--no-print-directory", *SERVE[0].split()[1:], f"PORT={port}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout_s: float = 120) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if m := re.search(pattern, line):
                    return m
            if self.proc.poll() is not None and not self._reader.is_alive():
                break  # the daemon exited and every line it printed has been read
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in {self.lines}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._reader.join(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def served(user: dict[str, str]) -> Iterator[tuple[MakeServe, int]]:
    port = free_port()
    daemon = MakeServe(user, port)
    try:
        yield daemon, port
    finally:
        daemon.stop()


def _run(line: str, env: dict[str, str]) -> str:
    proc = subprocess.run(
        ["bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, f"{line}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    return proc.stdout


@pytest.mark.timeout(900)
def test_quick_start_as_written(served: tuple[MakeServe, int], user: dict[str, str]) -> None:
    daemon, port = served
    home = user["FLEETMEM_HOME"]
    first = daemon.wait_for(r"^fleetmem serving on (http://\S+) \(home (.+)\)$")
    assert first.groups() == (f"http://127.0.0.1:{port}", home)
    daemon.wait_for(r"^API control token: .+/control\.token \(send: Authorization: Bearer\)$")
    link = daemon.wait_for(r"^Sign in to the web UI: (http://\S+/login\?token=fml_\S+) ")[1]
    with httpx.Client(timeout=30, follow_redirects=True) as browser:
        page = browser.get(link)
        assert page.status_code == 200 and "fleetmem_session" in browser.cookies
        assert "<html" in page.text.lower()

    install, add, recall = FIRST_STEPS
    _run(install, user)
    settings = json.loads((Path(user["HOME"]) / ".claude" / "settings.json").read_text())
    assert set(settings["hooks"]) == {
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
        "SessionEnd",
    }
    assert "Remembered f_" in _run(add, user)
    assert "The billing ledger tests need TZ=UTC to pass" in _run(recall, user)

    ingest, episodes, recall_episode, status = EPISODES
    recorded = _run(ingest, user)
    episode_id = re.search(r"\(episode (ep_\w+)\)", recorded)
    assert episode_id, recorded
    assert episode_id[1] in _run(episodes, user)
    assert episode_id[1] in _run(recall_episode, user)
    assert "builtin" in _run(status, user)


def test_make_test_runs_lint_types_and_the_suite_in_parallel() -> None:
    dry = subprocess.run(
        [*MAKE, "-n", *TESTS[0].split()[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert dry.returncode == 0, dry.stderr
    steps = dry.stdout
    for command in ("ruff check src tests bench", "ruff format --check", "mypy", "pytest -q -n"):
        assert command in steps, steps
