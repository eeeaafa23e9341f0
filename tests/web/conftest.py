"""Browser tests: a real ``fleetmem serve`` on a free 127.0.0.1 port with a temporary home,
driven by Playwright through Debian's Chromium.

Skipped, with the reason, only when /usr/bin/chromium is absent (CI installs it). Screenshots
go to ``$FLEETMEM_WEB_ARTIFACTS`` (default: a temporary directory named in the test output).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleetmem.core.facts import Actor
from fleetmem.service.bootstrap import App, build
from tests.conftest import api_client, write_config
from tests.surfaces.cli_helpers import FLEETMEM, env_for
from tests.surfaces.test_http import free_port

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
VECTORS_OFF = '[model_api]\nembedding_model = ""\n'
VECTORS_ON = '[model_api]\nembedding_model = "local:minilm"\n'
LINK = re.compile(r"Sign in to the web UI: (http://\S+/login\?token=\S+)")

needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason=f"{CHROMIUM} is absent (CI installs Debian's chromium; apt-get install chromium)",
)


def artifacts_dir() -> Path:
    configured = os.environ.get("FLEETMEM_WEB_ARTIFACTS")
    path = (
        Path(configured) if configured else Path(tempfile.gettempdir()) / "fleetmem-web-artifacts"
    )
    path.mkdir(parents=True, exist_ok=True)
    return path


class WebDaemon:
    """``fleetmem serve`` in a subprocess; its stdout is read for the login links."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self.proc = subprocess.Popen(
            [FLEETMEM, "serve", "--port", str(self.port)],
            env=env_for(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._err: list[str] = []
        self._readers = [
            threading.Thread(target=self._drain, args=(self.proc.stdout, self.lines), daemon=True),
            threading.Thread(target=self._drain, args=(self.proc.stderr, self._err), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        self.client = api_client(self.url, home, timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                raise AssertionError("daemon exited: " + "".join(self._err)[-2000:])
            try:
                if self.client.get("/healthz").status_code == 200 and self.links():
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise AssertionError("daemon did not become healthy")

    def _drain(self, stream: Any, sink: list[str]) -> None:
        for line in stream:
            with self._lock:
                sink.append(line)

    def links(self) -> list[str]:
        with self._lock:
            return [m.group(1) for line in self.lines if (m := LINK.search(line))]

    def stderr(self) -> str:
        with self._lock:
            return "".join(self._err)

    def stop(self) -> None:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for reader in self._readers:
            reader.join(timeout=5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


ME = Actor("human", os.environ.get("USER") or "root")


# Module scope, not session: while Playwright's sync API is open its event loop counts as
# running on this thread, so a later test file on the same xdist worker that calls
# asyncio.run() would fail. Each web module pays one Chromium launch (about a second).
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def start_daemon(home: Path) -> Iterator[Callable[..., WebDaemon]]:
    """Start a daemon over ``home``; ``seed(app)`` runs in-process first, on the same store."""
    started: list[WebDaemon] = []

    def factory(config: str = VECTORS_OFF, seed: Callable[[App], None] | None = None) -> WebDaemon:
        write_config(home, config)
        if seed is not None:
            app = build(home, env_for(home))
            try:
                seed(app)
            finally:
                app.close()
        daemon = WebDaemon(home)
        started.append(daemon)
        return daemon

    yield factory
    for daemon in started:
        daemon.stop()


class Browsing:
    """Signed-in browser pages against one daemon."""

    def __init__(self, browser: Any, daemon: WebDaemon) -> None:
        self.browser = browser
        self.daemon = daemon
        self.contexts: list[Any] = []
        self._cookies: list[dict[str, Any]] | None = None

    def page(self, *, width: int = 1280, height: int = 860) -> Any:
        context = self.browser.new_context(
            viewport={"width": width, "height": height}, base_url=self.daemon.url
        )
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=self.daemon.url)
        self.contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        if self._cookies is None:
            link = self.daemon.links()[0]
            page.goto(link)
            page.wait_for_url("**/memory")
            self._cookies = context.cookies()
        else:
            context.add_cookies(self._cookies)
        return page

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture
def browse(browser: Any) -> Iterator[Callable[[WebDaemon], Browsing]]:
    made: list[Browsing] = []

    def factory(daemon: WebDaemon) -> Browsing:
        b = Browsing(browser, daemon)
        made.append(b)
        return b

    yield factory
    for b in made:
        b.close()


def shot(page: Any, name: str, *, full_page: bool = False) -> Path:
    """Save a screenshot of a main view as a test artifact."""
    path = artifacts_dir() / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
