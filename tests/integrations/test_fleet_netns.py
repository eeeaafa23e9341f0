"""Two daemons on two "hosts", one memory: real ``fleetmem serve`` processes in separate
network namespaces (made here with ``ip netns`` and veth pairs), each reaching the one
PostgreSQL database over its own link (a proxy on the host end of its veth, which the test
can cut), and reached by the test over that link too.

Needs root (``ip netns``); skipped with the reason elsewhere, failed under CI (which runs as
root, so it always runs there).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests import store_kinds
from tests.conftest import make_record, session, write_config
from tests.fakes.tcp_proxy import TcpProxy, target_of
from tests.surfaces.cli_helpers import FLEETMEM, env_for

API = "github.com/acme/api"
TOKEN = "fleet-" + secrets.token_hex(16)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)


class Host:
    """A network namespace joined to this one by a veth pair: ``outer`` is this side's
    address, ``inner`` the namespace's."""

    def __init__(self, name: str, subnet: int) -> None:
        self.name = name
        self.veth = f"v{name[-8:]}"
        self.outer = f"10.231.{subnet}.1"
        self.inner = f"10.231.{subnet}.2"
        _ip("netns", "add", name)
        try:
            _ip("link", "add", self.veth, "type", "veth", "peer", "name", f"{self.veth}n")
            _ip("link", "set", f"{self.veth}n", "netns", name)
            _ip("addr", "add", f"{self.outer}/30", "dev", self.veth)
            _ip("link", "set", self.veth, "up")
            inside = ("netns", "exec", name, "ip")
            _ip(*inside, "addr", "add", f"{self.inner}/30", "dev", f"{self.veth}n")
            _ip(*inside, "link", "set", f"{self.veth}n", "up")
            _ip(*inside, "link", "set", "lo", "up")
        except BaseException:
            self.remove()
            raise

    def remove(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError):
            _ip("link", "del", self.veth)
        with contextlib.suppress(subprocess.SubprocessError):
            _ip("netns", "del", self.name)


class Daemon:
    """``fleetmem serve`` inside ``host``, its database reached through ``proxy``."""

    def __init__(self, host: Host, home: Path, db_url: str) -> None:
        self.host = host
        self.port = 8737
        self.url = f"http://{host.inner}:{self.port}"
        home.mkdir(parents=True, exist_ok=True)
        self.log_path = home / "daemon.log"
        self._log = self.log_path.open("w", encoding="utf-8")
        digest = hashlib.sha256(TOKEN.encode()).hexdigest()
        write_config(
            home,
            '[model_api]\nembedding_model = ""\n'
            f'[store]\nurl = "{db_url}"\nclaim_timeout = "5s"\n'
            f'[server]\ntokens = [{{ tier = "control", sha256 = "{digest}" }}]\n',
        )
        self.proc = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                host.name,
                FLEETMEM,
                "serve",
                "--host",
                host.inner,
                "--port",
                str(self.port),
            ],
            env=env_for(home),
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
        )

    def wait_healthy(self, patience: float = 90) -> None:
        deadline = time.monotonic() + patience
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.log_path.read_text(encoding="utf-8")[-2000:]
                raise AssertionError(f"daemon exited: {log}")
            with contextlib.suppress(httpx.TransportError):
                if self.client.get("/healthz").status_code == 200:
                    return
            time.sleep(0.2)
        raise AssertionError("daemon did not become healthy")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


@pytest.fixture
def hosts() -> Iterator[tuple[Host, Host]]:
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("CI runs as root and must run the network-namespace tests")
        pytest.skip("ip netns needs root: run as root (CI does) to test daemons on two hosts")
    subnet = random.randrange(1, 120) * 2
    tag = secrets.token_hex(3)
    made: list[Host] = []
    try:
        for n in range(2):
            made.append(Host(f"fmfleet{tag}{n}", subnet + n))
    except subprocess.CalledProcessError as exc:
        for host in made:
            host.remove()
        if os.environ.get("CI"):
            raise
        pytest.skip(f"ip netns is not permitted here: {exc.stderr.decode().strip()}")
    yield made[0], made[1]
    for host in made:
        host.remove()


def _record(run_id: str, text: str) -> bytes:
    import json

    data = make_record(run_id=run_id, result_text=text, sessions=[session(repo=API)])
    return json.dumps(data).encode()


def _recall(daemon: Daemon, query: str) -> dict[str, Any]:
    r = daemon.client.post("/api/v1/recall", json={"query": query, "repo": API})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_two_daemons_on_two_hosts_are_one_memory(hosts: tuple[Host, Host], tmp_path: Path) -> None:
    base = store_kinds.required_url()
    schema, url = store_kinds.fresh_schema(base)
    proxies = [TcpProxy(target_of(url), listen=(h.outer, 0)) for h in hosts]
    daemons = [
        Daemon(h, tmp_path / f"home{n}", p.url_for(url))
        for n, (h, p) in enumerate(zip(hosts, proxies, strict=True))
    ]
    try:
        # Started together on an empty schema: the migrations ran once.
        for d in daemons:
            d.wait_healthy()
        with psycopg.connect(url) as conn:
            versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
        assert sorted(versions) == sorted(set(versions)) and versions
        one, two = daemons

        # A write through one is seen by the other; a forget through the other, by the first.
        r = one.client.post("/api/v1/runs", content=_record("run-a", "fixed the ledger drift"))
        assert r.status_code == 201, r.text
        episode = r.json()["episode_id"]
        assert [i["episode_id"] for i in _recall(two, "ledger drift")["items"]] == [episode]
        assert two.client.delete(f"/api/v1/episodes/{episode}").status_code == 200
        assert _recall(one, "ledger drift")["items"] == []

        # kill -9 of a daemon in the middle of a stream of writes: no acknowledged write is
        # lost, and no job stays claimed by the dead daemon.
        acknowledged: list[str] = []
        stop = threading.Event()

        def writes() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                with contextlib.suppress(httpx.TransportError):
                    run_id = f"run-k{n}"
                    got = one.client.post("/api/v1/runs", content=_record(run_id, f"work {n}"))
                    if got.status_code == 201:
                        acknowledged.append(run_id)

        writer = threading.Thread(target=writes)
        writer.start()
        time.sleep(2.0)
        one.kill()
        stop.set()
        writer.join(30)
        assert len(acknowledged) >= 3
        for run_id in acknowledged:
            assert two.client.get(f"/api/v1/runs/{run_id}").status_code == 200, run_id
        deadline = time.monotonic() + 45
        while True:
            with psycopg.connect(url) as conn:
                left = conn.execute("SELECT count(*) FROM jobs WHERE state = 'pending'").fetchone()
            if left == (0,):
                break
            assert time.monotonic() < deadline, f"jobs left pending: {left}"
            time.sleep(1.0)
        with psycopg.connect(url) as conn:
            episodes = conn.execute(
                "SELECT count(*) FROM episodes e WHERE e.forgotten_at IS NULL"
                " AND NOT EXISTS (SELECT 1 FROM provider_index p WHERE p.episode_id = e.id)"
            ).fetchone()
        assert episodes == (0,)  # every acknowledged episode was recorded, by one or the other

        # The database's link of the surviving daemon is cut: reads degrade, writes are
        # refused with a clear error, and it heals when the link is back.
        proxies[1].cut()
        cut = _recall(two, "work")
        assert cut["degraded"] == "store_unavailable" and cut["items"] == []
        refused = two.client.post("/api/v1/runs", content=_record("run-z", "during the cut"))
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "store_error"
        proxies[1].restore()
        deadline = time.monotonic() + 30
        while _recall(two, "work").get("degraded") is not None:
            assert time.monotonic() < deadline, "did not heal"
            time.sleep(0.5)
        assert _recall(two, "work")["items"]
    finally:
        for d in daemons:
            d.stop()
        for p in proxies:
            p.close()
        store_kinds.drop_schema(base, schema)
