"""``fleetmem serve``: the daemon process (HTTP API, background jobs, SIGHUP reload)."""

from __future__ import annotations

import errno
import functools
import ipaddress
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable
from types import FrameType

import uvicorn

from fleetmem import process_memory, telemetry
from fleetmem.errors import Conflict, InvalidInput
from fleetmem.integrations.hookmain import hooks_log_handler, serve_relayed, warm_for_hooks
from fleetmem.integrations.hookrelay import HookRelay
from fleetmem.logsafe import protect_loggers
from fleetmem.service.api_tokens import ApiTokens
from fleetmem.service.bootstrap import App
from fleetmem.service.jobs import BackgroundJobs
from fleetmem.surfaces.http.app import create_app
from fleetmem.surfaces.web import announce_login_links

log = logging.getLogger("fleetmem.serve")


def check_bind(host: str, *, has_configured_token: bool) -> None:
    """Loopback always; any other address only when a token beyond ``control.token`` is
    configured, so exposing the API is a deliberate act with a credential to hand out."""
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError as exc:
        raise InvalidInput("host", host, "must be an IP address or localhost") from exc
    if not loopback and not has_configured_token:
        raise InvalidInput(
            "host",
            host,
            "binding beyond loopback requires a configured API token: mint one with "
            "`fleetmem token create --tier read` or list one under [server] tokens in "
            "fleetmem.toml (see docs/configuration.md)",
        )


def bind_listener(host: str, port: int) -> socket.socket:
    """Bind ``host:port`` now, so a busy port is reported before the daemon prints or starts
    anything; uvicorn is then handed the bound socket."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # The protocol named, not left 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only
    # on connections whose socket says IPPROTO_TCP. With it on, a reply written in two parts
    # (headers, then body) waited for the client's delayed ACK: 40 ms on every request of a
    # kept-alive connection.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    # As uvicorn does: a restart may rebind while old connections sit in TIME_WAIT. On Linux
    # this still refuses a port another process is listening on.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise Conflict(
                f"port {port} on {host} is already in use (is another `fleetmem serve`"
                " running? choose another with --port)"
            ) from exc
        raise InvalidInput("host", host, f"cannot listen on port {port}: {exc.strerror}") from exc
    return sock


class _AnnouncingServer(uvicorn.Server):
    """A uvicorn server that calls ``on_listening`` once its socket accepts connections
    (after the app's lifespan startup), never before."""

    def __init__(self, config: uvicorn.Config, on_listening: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_listening = on_listening

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and not self.should_exit:
            self._on_listening()


def serve(app: App, host: str, port: int, *, jobs_interval_s: float = 15.0) -> None:
    # Before the worker threads start: each would otherwise keep a heap of its own.
    process_memory.limit_arenas()
    # Reading the tokens first also creates control.token and checks every token file.
    tokens = ApiTokens(app.home, app.config)
    check_bind(host, has_configured_token=tokens.has_configured())
    if not 0 <= port <= 65535:
        raise InvalidInput("port", port, "must be between 0 and 65535")
    listener = bind_listener(host, port)
    port = int(listener.getsockname()[1])  # the real one when --port 0 asked for any
    jobs = BackgroundJobs(
        app.memory, interval_s=jobs_interval_s, facts=app.facts, briefings=app.briefings
    )

    def reload(_signum: int, _frame: FrameType | None) -> None:
        error = app.config.reload()
        if error is None:
            log.info("config.reloaded sources=%d", len(app.config.current.sources))
        else:
            # The key and the reason, never the value: ConfigError hides credential values.
            log.error("config.reload_failed kept=last_good key=%s error=%s", error.key, error)

    signal.signal(signal.SIGHUP, reload)
    # Open the provider's session now, so no recall at spawn waits for it to start.
    app.providers.start()
    jobs.start()
    # Agent hooks on this machine are answered here, with the application already loaded,
    # instead of each hook process importing and opening it (see hookrelay).
    relay = HookRelay(
        app.home, functools.partial(serve_relayed, app), log_handler=hooks_log_handler(app.home)
    )
    relay.start()
    threading.Thread(
        target=warm_for_hooks, args=(app,), name="fleetmem-hook-warm", daemon=True
    ).start()
    exporting = telemetry.start(app.settings.telemetry, os.environ)
    api = create_app(app, tokens)
    config = uvicorn.Config(
        api,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        # NO_COLOR (https://no-color.org) turns uvicorn's coloured level names off too.
        use_colors=False if os.environ.get("NO_COLOR") else None,
    )
    # uvicorn installs its own handlers (it does not propagate to ours): redact them too.
    protect_loggers(logging.getLogger(name) for name in ("uvicorn", "uvicorn.error"))
    url_host = f"[{host}]" if ":" in host else host

    def announce() -> None:
        log.info("serve.listening url=http://%s:%d home=%s", host, port, app.home)
        print(f"fleetmem serving on http://{url_host}:{port} (home {app.home})", flush=True)
        print(f"API control token: {tokens.control_path} (send: Authorization: Bearer)", flush=True)
        # The browser's one-time sign-in link (printed, never logged: it is a credential).
        announce_login_links(api.state.web_auth, f"http://{url_host}:{port}")

    server = _AnnouncingServer(config, announce)
    # uvicorn handles SIGTERM itself, then re-raises it once it has stopped; with the default
    # action that would end the process before the clean-up below. Catch the re-raised one,
    # clean up, and only then end the way SIGTERM ends a process.
    terminated: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: terminated.append(signum))
    try:
        server.run(sockets=[listener])
    finally:
        listener.close()
        relay.stop()
        jobs.stop()
        if exporting is not None:
            exporting.shutdown()
        if terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.raise_signal(signal.SIGTERM)
