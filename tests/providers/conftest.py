"""Real provider processes for the provider tests: the reference provider and its variants.

The reference provider (examples/providers/reference_provider.py) runs as a real subprocess,
over stdio (fleetmem starts it from ``[mcp.NAME] command``) or streamable HTTP (started here
on 127.0.0.1 with a free port). The npm server comes from ``make test`` into .venv/node.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fleetmem.service.bootstrap import App

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "examples" / "providers" / "reference_provider.py"
SERVER_MEMORY = ROOT / ".venv" / "node" / "node_modules" / ".bin" / "mcp-server-memory"
NO_VECTORS = '[model_api]\nembedding_model = ""\n'


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def stdio_upstream(name: str, *flags: str, extra: str = "") -> str:
    """An ``[mcp.NAME]`` table that starts the reference provider with ``flags``."""
    args = [str(REFERENCE), *flags]
    return (
        f"[mcp.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {toml_list(args)}\n{extra}"
    )


def config(*tables: str, provider: str | None = None, timeout: str | None = None) -> str:
    """A global file: vectors off, optional provider and provider_timeout, then ``tables``."""
    text = NO_VECTORS
    if provider is not None:
        text += f'[memory]\nprovider = "{provider}"\n'
    if timeout is not None:
        text += f'[memory.episodes]\nprovider_timeout = "{timeout}"\n'
    return text + "\n".join(tables)


@dataclass
class Calls:
    """What the reference provider was asked, from its --calls-file (tool names and ids)."""

    path: Path

    def lines(self) -> list[tuple[int, str, str]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            pid, tool, *rest = line.split(" ", 2)
            out.append((int(pid), tool, rest[0] if rest else ""))
        return out

    def tools(self) -> list[str]:
        return [tool for _, tool, _ in self.lines()]

    def pids(self) -> list[int]:
        return list(dict.fromkeys(pid for pid, _, _ in self.lines()))


@pytest.fixture
def calls(tmp_path: Path) -> Calls:
    return Calls(tmp_path / "calls.txt")


@dataclass
class HttpProvider:
    url: str
    process: subprocess.Popen[str]


@pytest.fixture
def http_provider(tmp_path: Path) -> Iterator[Callable[..., HttpProvider]]:
    """Start the reference provider over streamable HTTP on 127.0.0.1 (a real server)."""
    started: list[subprocess.Popen[str]] = []

    def start(*flags: str) -> HttpProvider:
        log = (tmp_path / f"http-provider-{len(started)}.log").open("w")
        proc = subprocess.Popen(
            [sys.executable, str(REFERENCE), "--transport", "http", "--port", "0", *flags],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        log.close()
        started.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening "), line
        return HttpProvider(url=line.split(" ", 1)[1], process=proc)

    yield start
    for proc in started:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, step: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(step)


def provider_state(app: App) -> str:
    return str(app.memory.status()["provider"]["state"])
