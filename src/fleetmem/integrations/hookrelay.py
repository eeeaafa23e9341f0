"""Agent hooks answered by the running daemon, over a socket in the home.

A hook is a new process for every event. Importing the application (the store, the embedder,
the providers) costs that process a second or more, on every prompt and after every tool
call. When ``fleetmem serve`` runs, it listens on ``$FLEETMEM_HOME/run/hooks.sock`` (a Unix
socket only its own user can open) and handles the hook with the application it already has
loaded; the hook process imports nothing beyond the standard library, sends the event, and
prints the answer.

When no daemon listens (or the socket cannot be reached) the hook handles the event itself,
as before: the relay only ever makes a hook faster, never a requirement. A hook whose
environment carries fleetmem configuration of its own (``FLEETMEM_*`` settings other than
the home, the agent and the run) is handled in its own process, since the daemon's settings
would not be the ones it asked for. A relayed ``SessionEnd`` is answered at once and recorded
after the answer, so the agent closing does not wait on its episode; a daemon asked to stop
lets the hooks it took finish first (:data:`STOP_WAIT_S`).

The client side of this module imports only light parts of the standard library (the
server's ``socketserver`` is imported when a daemon starts listening); the server side is
started by ``fleetmem serve`` (:class:`HookRelay`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import socketserver

#: The socket's place under the home.
SOCKET_PATH = ("run", "hooks.sock")
#: Events the daemon answers. SessionEnd's work (recording the episode) is not waited on.
RELAYED_EVENTS = frozenset(
    {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "SessionEnd"}
)
#: How long a stopping daemon waits for the hooks it took (a SessionEnd recording its
#: episode after the answer) before it closes the store under them.
STOP_WAIT_S = 20.0
#: Environment variables a hook passes to the daemon: the home, the agent, the supervising
#: run, and Claude Code's own (``CLAUDE_ENV_FILE`` and the like). Nothing else is sent.
PASSED_FLEETMEM = frozenset({"FLEETMEM_HOME", "FLEETMEM_AGENT", "FLEETMEM_RUN_ID"})
#: How long a hook waits to connect before handling the event itself.
CONNECT_S = 0.25
#: The largest request the daemon reads: the hook payload's own bound, base64, and room.
MAX_REQUEST_BYTES = 6 * 1024 * 1024
#: Unix socket paths are limited to about 108 bytes; a longer home gets no relay.
MAX_SOCKET_PATH = 100

log = logging.getLogger("fleetmem.hooks")


def socket_path(home: Path) -> Path:
    return home.joinpath(*SOCKET_PATH)


def relayable(event: str, environ: Mapping[str, str]) -> bool:
    """True when the daemon may answer this hook: an event it handles, and no fleetmem
    configuration in the hook's environment that the daemon would not share."""
    if event not in RELAYED_EVENTS:
        return False
    return not any(k.startswith("FLEETMEM_") and k not in PASSED_FLEETMEM for k in environ)


def _passed_environment(environ: Mapping[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in environ.items()
        if k in PASSED_FLEETMEM or k.startswith("CLAUDE_") or k == "HOME"
    }


def ask(
    home: Path,
    argv: Sequence[str],
    environ: Mapping[str, str],
    payload: bytes,
    timeout_s: float,
) -> str | None:
    """The daemon's answer to this hook, or None when no daemon took it (handle it here).

    Once the daemon has the request it owns the event: a daemon that then fails or runs out
    of time gives an empty answer (the hook fails open), never a second handling here, which
    could record the same tool call twice.
    """
    path = socket_path(home)
    if len(str(path)) > MAX_SOCKET_PATH or not path.exists():
        return None
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.settimeout(CONNECT_S)
        try:
            client.connect(str(path))
        except OSError:
            return None  # a daemon that stopped and left its socket file: handle it here
        request = {
            "v": 1,
            "home": str(home),
            "cwd": os.getcwd(),
            "argv": list(argv),
            "env": _passed_environment(environ),
            "payload": base64.b64encode(payload).decode("ascii"),
        }
        client.settimeout(max(0.1, timeout_s))
        try:
            client.sendall(json.dumps(request).encode("utf-8"))
            client.shutdown(socket.SHUT_WR)
            reply = _read_all(client, MAX_REQUEST_BYTES)
        except OSError:
            return ""
        if not reply:
            return None  # the daemon closed without taking it (it was stopping)
        try:
            answer = json.loads(reply)
        except ValueError:
            return ""
        if isinstance(answer, dict) and answer.get("local") is True:
            return None  # the daemon declined (another home): handle it here
        text = answer.get("answer") if isinstance(answer, dict) else None
        return text if isinstance(text, str) else ""
    finally:
        client.close()


def _read_all(conn: socket.socket, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise OSError(f"more than {limit} bytes")
        chunks.append(chunk)


# --- the daemon's side -----------------------------------------------------------------------


class RelayedHook(NamedTuple):
    """One hook as the daemon receives it."""

    argv: list[str]
    environ: dict[str, str]
    payload: bytes
    #: The hook process: its id (from the socket, not from what it says) and directory.
    pid: int
    cwd: str | None


#: handle(hook, reply): answers one hook with the daemon's application, calling
#: ``reply(answer)`` once the answer is known (work after it is not waited on). It raises
#: :class:`Declined` to hand the event back to the hook's own process.
Handler = Callable[[RelayedHook, Callable[[str], None]], None]


class Declined(Exception):
    """The daemon will not answer this hook (say, its configuration does not load): the
    hook handles the event itself, and reports what is wrong the way it always does."""


class HookRelay:
    """The daemon's listener on the hook socket: one thread per connection."""

    def __init__(
        self, home: Path, handle: Handler, log_handler: logging.Handler | None = None
    ) -> None:
        self.home = home
        self.path = socket_path(home)
        self._handle = handle
        # Hook lines (``hook.done`` and the like) also go to the file a hook of its own
        # process writes, so ``logs/hooks.log`` tells every hook's story either way.
        self._log_handler = log_handler
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._thread: threading.Thread | None = None
        # Hooks taken and not finished: stop() waits for them (see STOP_WAIT_S).
        self._busy = 0
        self._idle = threading.Condition()

    def start(self) -> bool:
        """Listen; False (and hooks keep handling events themselves) when it cannot."""
        if len(str(self.path)) > MAX_SOCKET_PATH:
            log.warning("hook_relay.off reason=path_too_long chars=%d", len(str(self.path)))
            return False
        import socketserver  # the daemon's side only: a hook process never needs it

        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.path.parent, 0o700)
            if self.path.exists() or self.path.is_symlink():
                if _answers(self.path):
                    log.warning("hook_relay.off reason=another_daemon_listens")
                    return False
                self.path.unlink()  # left by a daemon that did not stop cleanly
            server = socketserver.ThreadingUnixStreamServer(
                str(self.path), self._connection_handler(), bind_and_activate=False
            )
            server.daemon_threads = True
            # The socket is created owner-only: nobody else may ask for this user's memory.
            previous = os.umask(0o177)
            try:
                server.server_bind()
            finally:
                os.umask(previous)
            server.server_activate()
        except OSError as exc:
            log.warning("hook_relay.off reason=%s", type(exc).__name__)
            return False
        self._server = server
        if self._log_handler is not None:
            log.addHandler(self._log_handler)
        self._thread = threading.Thread(
            target=server.serve_forever, name="fleetmem-hook-relay", daemon=True
        )
        self._thread.start()
        log.info("hook_relay.listening path=%s", self.path)
        return True

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(2.0)
        with self._idle:
            if not self._idle.wait_for(lambda: self._busy == 0, timeout=STOP_WAIT_S):
                log.warning("hook_relay.stopped_busy hooks=%d", self._busy)
        with contextlib.suppress(OSError):
            self.path.unlink()
        self._server = None
        if self._log_handler is not None:
            log.removeHandler(self._log_handler)
            self._log_handler.close()

    def _connection_handler(self) -> type[socketserver.BaseRequestHandler]:
        import socketserver

        relay = self

        class Connection(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                relay._serve_one(self.request)

        return Connection

    def _serve_one(self, conn: socket.socket) -> None:
        with self._idle:
            self._busy += 1
        try:
            self._serve_counted(conn)
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def _serve_counted(self, conn: socket.socket) -> None:
        started = time.monotonic()
        replied = False

        def reply(answer: str) -> None:
            nonlocal replied
            if replied:
                return
            replied = True
            try:
                conn.sendall(json.dumps({"answer": answer}).encode("utf-8"))
                conn.shutdown(socket.SHUT_WR)
            except OSError:
                log.info("hook_relay.answer_lost")

        try:
            conn.settimeout(5.0)
            raw = _read_all(conn, MAX_REQUEST_BYTES)
            if not raw:
                replied = True  # a probe (another daemon checking who listens): no request
                return
            request = _parse_request(raw)
            peer = _peer_pid(conn)
            if peer is None or Path(request["home"]).resolve() != self.home.resolve():
                # Another home, or a peer this system cannot name: the hook handles itself.
                replied = True
                conn.sendall(b'{"local": true}')
                return
            hook = RelayedHook(
                argv=request["argv"],
                environ=request["env"],
                payload=request["payload"],
                pid=peer,
                cwd=request["cwd"],
            )
            self._handle(hook, reply)
        except Declined as exc:
            if not replied:
                replied = True
                log.info("hook_relay.declined reason=%s", exc)
                conn.sendall(b'{"local": true}')
        except Exception as exc:  # fail open: the hook prints nothing and its session goes on
            log.warning("hook_relay.failed error=%s", type(exc).__name__)
        finally:
            reply("")
            log.debug("hook_relay.done ms=%d", (time.monotonic() - started) * 1000)


def _parse_request(raw: bytes) -> dict[str, Any]:
    request = json.loads(raw)
    if not isinstance(request, dict) or request.get("v") != 1:
        raise ValueError("not a hook relay request")
    argv, env, home = request.get("argv"), request.get("env"), request.get("home")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ValueError("argv")
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ValueError("env")
    if not isinstance(home, str):
        raise ValueError("home")
    cwd = request.get("cwd")
    if cwd is not None and not (isinstance(cwd, str) and os.path.isabs(cwd)):
        raise ValueError("cwd")
    payload = base64.b64decode(str(request.get("payload", "")), validate=True)
    return {"argv": argv, "env": env, "home": home, "payload": payload, "cwd": cwd}


def _peer_pid(conn: socket.socket) -> int | None:
    """The connecting process's id, from the kernel (Linux ``SO_PEERCRED``); None where the
    system does not say, or for another user (the socket's mode already refuses them)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, 12))
    except OSError:
        return None
    return pid if uid == os.getuid() and pid > 0 else None


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(CONNECT_S)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True
