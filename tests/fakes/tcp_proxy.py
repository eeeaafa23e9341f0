"""A TCP proxy in front of the test PostgreSQL server: the network between a daemon and its
database, which a test can cut (every connection closed, new ones refused) and restore.

It is real sockets and real byte streams both ways, listening on any address the test names
(a veth address, for daemons in network namespaces)."""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import urlsplit, urlunsplit


class TcpProxy:
    """Forwards connections to ``target``; :meth:`cut` drops the link, :meth:`restore` heals."""

    def __init__(self, target: tuple[str, int], listen: tuple[str, int] = ("127.0.0.1", 0)):
        self.target = target
        self._server = socket.create_server(listen, reuse_port=False)
        self.address: tuple[str, int] = self._server.getsockname()[:2]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._down = False
        self._closed = False
        threading.Thread(target=self._accept, name="tcp-proxy", daemon=True).start()

    def url_for(self, url: str) -> str:
        """``url`` (a postgresql:// URL of the target) pointed at this proxy instead."""
        parts = urlsplit(url)
        auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        host, port = self.address
        return urlunsplit(parts._replace(netloc=f"{auth}{host}:{port}"))

    def cut(self) -> None:
        """The network is gone: every connection is closed and new ones are refused."""
        with self._lock:
            self._down = True
            sockets, self._open = self._open, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()

    def restore(self) -> None:
        with self._lock:
            self._down = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        with contextlib.suppress(OSError):
            self._server.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                down = self._down
            if down:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


def target_of(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 5432
