"""bench_mcp_recall waits for the servers' one-time background work before it measures."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from bench.bench_mcp_recall import _children_cpu, settle_servers

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")


class _Hubs:
    def __init__(self) -> None:
        self.settled = 0

    def settle(self, timeout: float = 30.0) -> None:
        self.settled += 1


def _app() -> SimpleNamespace:
    return SimpleNamespace(providers=SimpleNamespace(builtin=SimpleNamespace(hubs=_Hubs())))


def test_a_busy_child_is_waited_for_until_it_goes_quiet() -> None:
    # A child that works for about 0.8 s of CPU, then sleeps: the wait ends after the work
    # and a quiet second, not at once and not at the timeout.
    busy = "import time\nend = time.process_time() + 0.8\nwhile time.process_time() < end: pass\n"
    child = subprocess.Popen([sys.executable, "-c", busy + "time.sleep(30)"])
    try:
        app = _app()
        started = time.monotonic()
        waited = settle_servers(app, quiet_s=0.5, timeout_s=20)
        assert app.providers.builtin.hubs.settled == 1
        assert 0.7 <= time.monotonic() - started < 15, waited
        assert _children_cpu() >= 0.7
    finally:
        child.kill()
        child.wait()


def test_without_busy_children_it_returns_after_the_quiet_time() -> None:
    app = _app()
    started = time.monotonic()
    settle_servers(app, quiet_s=0.3, timeout_s=20)
    assert time.monotonic() - started < 5
