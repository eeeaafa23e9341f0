"""``fleetmem serve``: the daemon process (HTTP API, background jobs, SIGHUP reload)."""

from __future__ import annotations

import ipaddress
import logging
import os
import signal
from types import FrameType

import uvicorn

from fleetmem import telemetry
from fleetmem.errors import InvalidInput
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


def serve(app: App, host: str, port: int, *, jobs_interval_s: float = 15.0) -> None:
    # Reading the tokens first also creates control.token and checks every token file.
    tokens = ApiTokens(app.home, app.config)
    check_bind(host, has_configured_token=tokens.has_configured())
    if not 0 <= port <= 65535:
        raise InvalidInput("port", port, "must be between 0 and 65535")
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
    exporting = telemetry.start(app.settings.telemetry, os.environ)
    api = create_app(app, tokens)
    config = uvicorn.Config(api, host=host, port=port, log_level="warning", access_log=False)
    # uvicorn installs its own handlers (it does not propagate to ours): redact them too.
    protect_loggers(logging.getLogger(name) for name in ("uvicorn", "uvicorn.error"))
    server = uvicorn.Server(config)
    log.info("serve.listening url=http://%s:%d home=%s", host, server.config.port, app.home)
    print(f"fleetmem serving on http://{host}:{port} (home {app.home})", flush=True)
    print(f"API control token: {tokens.control_path} (send: Authorization: Bearer)", flush=True)
    # The browser's one-time sign-in link (printed, never logged: it is a credential).
    url_host = f"[{host}]" if ":" in host else host
    announce_login_links(api.state.web_auth, f"http://{url_host}:{port}")
    # uvicorn handles SIGTERM itself, then re-raises it once it has stopped; with the default
    # action that would end the process before the clean-up below. Catch the re-raised one,
    # clean up, and only then end the way SIGTERM ends a process.
    terminated: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: terminated.append(signum))
    try:
        server.run()
    finally:
        jobs.stop()
        if exporting is not None:
            exporting.shutdown()
        if terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.raise_signal(signal.SIGTERM)
