"""Benchmark: the Facts list's first page at 2,000 facts, through HTTP (seed 003 NFR-1: p95
under 400 ms).

A real ``fleetmem serve`` over a temporary home holding 2,000 active facts (20 pinned, the
newest 50 each served to 20 runs, so "used in N runs" has rows to count), signed in with the
login link it prints. Timed from a client on the same machine, each request whole (connect
reused, body read):

* ``web_page``: ``GET /memory/facts``, the whole page a browser opens (rail, counts, 50 rows);
* ``web_fragment``: ``GET /memory/facts/_list``, the list the page's script loads in place;
* ``api_page``: ``GET /api/v1/facts?limit=50``, the same first page as JSON;
* ``healthz``: ``GET /healthz``, the HTTP floor of this server on this machine;
* ``service_list``: ``FactService.list(limit=50)`` in-process, the store's part.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.bench_daemon import api_headers
from bench.common import latency_summary, timed_ms
from fleetmem.core.episode import content_hash
from fleetmem.core.facts import Actor, normalize
from fleetmem.service.bootstrap import build
from fleetmem.service.facts import FactService

FACTS = 2000
#: ``--tiny``: just over one page, so the first page is still full.
TINY_FACTS = 60
LINK = re.compile(r"Sign in to the web UI: (http://\S+/login\?token=\S+)")
FLEETMEM = str(Path(sys.executable).with_name("fleetmem"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _seed(home: Path, n_facts: int = FACTS) -> None:
    """2,000 active facts: one added through the service, the rest stored as copies of its
    row (the service's near-duplicate check scans every fact on each add, so 2,000 adds take
    minutes); the newest 20 pinned; the newest 50 served to 20 runs through the service."""
    app = build(home, {"HOME": str(home.parent), "FLEETMEM_HOME": str(home)})
    try:
        start = time.time() - 60 * 86_400
        step = 60 * 86_400 / n_facts
        facts = FactService(
            store=app.store,
            settings=lambda: app.config.current,
            embedder=None,
            clock=lambda: start,
        )
        added = facts.add(_body(0), actor=Actor("human", "bench")).fact
        first = app.store.fact_get(facts.workspace, added.id)  # the stored row, to copy
        assert first is not None
        ids = [first.id]
        with app.store.transaction():
            for i in range(1, n_facts):
                at = start + i * step
                row = dataclasses.replace(
                    first,
                    id=f"f_{i:016x}",
                    body=_body(i),
                    norm=normalize(_body(i)),
                    content_hash=content_hash(_body(i)),
                    created_at=at,
                    updated_at=at,
                    confirmed_at=at,
                    pinned=i >= n_facts - 20,
                    pinned_at=at if i >= n_facts - 20 else None,
                )
                app.store.fact_insert(row)
                ids.append(row.id)
        for run in range(20):
            app.facts.serve_to_run(ids[-50:], run_id=f"bench-run-{run}", agent="bench")
    finally:
        app.close()


def _body(i: int) -> str:
    return f"Rule {i}: deploys of service {i % 37} wait for the {i % 11} o'clock check."


def _samples(client: httpx.Client, path: str, n: int) -> list[float]:
    for _ in range(3):
        client.get(path).raise_for_status()  # warm up

    def one() -> None:
        client.get(path).raise_for_status()

    return [timed_ms(one)[0] for _ in range(n)]


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """p50/p95 of the first page of 2,000 facts: the web page, its fragment and the API."""
    n = 5 if tiny else 40 if quick else 200
    n_facts = TINY_FACTS if tiny else FACTS
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "fleetmem.toml").write_text('[model_api]\nembedding_model = ""\n', "utf-8")
        seeded = time.perf_counter()
        _seed(home, n_facts)
        seed_s = time.perf_counter() - seeded
        port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
        env["FLEETMEM_HOME"] = str(home)
        proc = subprocess.Popen(
            [FLEETMEM, "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        lines: list[str] = []
        assert proc.stdout is not None
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
        reader.start()
        base = f"http://127.0.0.1:{port}"
        try:
            client = httpx.Client(base_url=base, timeout=30)
            link = _wait_for_link(client, lines, proc)
            client.get(link.replace(base, ""))  # sign in: the session cookie
            client.headers.update(api_headers(home))  # the API takes a bearer token
            page = client.get("/memory/facts")
            assert page.status_code == 200 and page.text.count('class="fact ') == 50, "signed in?"
            out: dict[str, Any] = {
                "facts": n_facts,
                "seed_s": round(seed_s, 1),
                "requests_each": n,
                "page_bytes": len(page.content),
                "web_page": latency_summary(_samples(client, "/memory/facts", n)),
                "web_fragment": latency_summary(_samples(client, "/memory/facts/_list", n)),
                "api_page": latency_summary(_samples(client, "/api/v1/facts?limit=50", n)),
                "healthz": latency_summary(_samples(client, "/healthz", n)),
            }
            client.close()
        finally:
            proc.terminate()
            proc.wait(timeout=15)
            reader.join(timeout=5)
            proc.stdout.close()
        app = build(home, {"HOME": str(home.parent), "FLEETMEM_HOME": str(home)})
        try:
            out["service_list"] = latency_summary(
                [timed_ms(lambda: app.facts.list(limit=50))[0] for _ in range(n)]
            )
        finally:
            app.close()
    out["target_p95_ms"] = 400
    return out


def _wait_for_link(client: httpx.Client, lines: list[str], proc: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("fleetmem serve exited")
        found = [m.group(1) for line in list(lines) if (m := LINK.search(line))]
        if found:
            try:
                if client.get("/healthz").status_code == 200:
                    return found[0]
            except httpx.TransportError:
                pass
        time.sleep(0.1)
    raise RuntimeError("fleetmem serve did not print a login link")


def summarize(result: dict[str, Any]) -> str:
    head = f"  {result['facts']:,} facts, {result['requests_each']} requests each"
    rows = [head + " (p95 target 400 ms)"]
    for key in ("web_page", "web_fragment", "api_page", "healthz", "service_list"):
        s = result[key]
        rows.append(f"  {key:<13} p50 {s['p50_ms']:7.2f} ms   p95 {s['p95_ms']:7.2f} ms")
    return "\n".join(rows)
