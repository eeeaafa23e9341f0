"""Shared pieces for the agent integration tests: a real repository, fake agent executables,
and a fleetmem home configured to run them."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fleetmem.service.bootstrap import App, build
from fleetmem.store.sqlite.packed import unpack
from tests.conftest import git

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REMOTE = "git@github.com:acme/api.git"
REPO_KEY = "github.com/acme/api"


def make_repo(root: Path, remote: str | None = REMOTE) -> Path:
    """A real repository: app.py, a test that fails until VALUE is 2, notes.txt; one commit."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    if remote:
        git(root, "remote", "add", "origin", remote)
    (root / "app.py").write_text("VALUE = 1\n", encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text(
        "import app\n\n\ndef test_value():\n    assert app.VALUE == 2\n", encoding="utf-8"
    )
    (root / "tests" / "conftest.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
        encoding="utf-8",
    )
    (root / "notes.txt").write_text("old line\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")
    return root.resolve()


def wrapper(directory: Path, name: str, fixture: str) -> Path:
    """An executable named ``name`` that runs a fixture script with this interpreter."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FIXTURES / fixture}" "$@"\n')
    path.chmod(0o755)
    return path


def toml_str(value: str | Path) -> str:
    return json.dumps(str(value))


@dataclass
class World:
    """A fleetmem home with fake claude and codex executables and a repository."""

    tmp: Path
    home: Path
    repo: Path
    claude: Path
    codex: Path
    log: Path

    def config(self, text: str) -> None:
        base = '[model_api]\nembedding_model = ""\n'
        (self.home / "fleetmem.toml").write_text(base + text, encoding="utf-8")

    def agent(
        self,
        name: str = "nightly-triage",
        *,
        adapter: str = "claude-code",
        scenario: str = "fail_test",
        extra: str = "",
        prompt_file: Path | None = None,
        briefing: bool = True,
    ) -> str:
        command = self.claude if adapter == "claude-code" else self.codex
        lines = [
            f"[agent.{name}]",
            f'adapter = "{adapter}"',
            f"command = {toml_str(command)}",
            f"memory_briefing = {'true' if briefing else 'false'}",
            f"env = {{ FAKE_LOG = {toml_str(self.log)}, FAKE_SCENARIO = {toml_str(scenario)} }}",
        ]
        if prompt_file is not None:
            lines.append(f"prompt_file = {toml_str(prompt_file)}")
        return "\n".join(lines) + "\n" + extra

    def starts(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def app(self) -> App:
        return build(self.home, {"HOME": str(self.tmp)})

    def db(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.home / "fleetmem.db")
        conn.row_factory = sqlite3.Row
        return conn

    def record(self, run_id: str) -> dict[str, Any]:
        with self.db() as conn:
            row = conn.execute(
                "SELECT record_json FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
        conn.close()
        assert row is not None, f"no stored record for {run_id}"
        data: dict[str, Any] = json.loads(unpack(row["record_json"]) or "{}")
        return data

    def wait_for_record(self, run_id: str, timeout_s: float = 60.0) -> dict[str, Any]:
        """The stored record of ``run_id``, once a detached process has stored it."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return self.record(run_id)
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    yield World(
        tmp=tmp_path,
        home=home,
        repo=make_repo(tmp_path / "src" / "api"),
        claude=wrapper(bin_dir, "claude", "fake_claude.py"),
        codex=wrapper(bin_dir, "codex", "fake_codex.py"),
        log=tmp_path / "starts.jsonl",
    )


@pytest.fixture
def open_app(world: World) -> Iterator[Callable[[], App]]:
    apps: list[App] = []

    def factory() -> App:
        app = world.app()
        apps.append(app)
        return app

    yield factory
    for app in apps:
        app.close()
