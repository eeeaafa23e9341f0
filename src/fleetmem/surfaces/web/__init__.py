"""The web UI: server-rendered Memory pages mounted in ``fleetmem serve`` under ``/memory``.

Pages call the same service methods as the HTTP API. A browser signs in with the one-time
link the daemon prints (:mod:`fleetmem.surfaces.web.auth`); every form carries a CSRF token.
Templates and static files ship inside the package, so nothing needs Node or a download.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from fleetmem.service.bootstrap import App
from fleetmem.surfaces.web.auth import LOGIN_TTL_S, WebAuth, login_url

STATIC_DIR = Path(__file__).resolve().parent / "static"
PAGE_MODULES = (
    "login_pages",
    "facts_pages",
    "files_pages",
    "other_pages",
    "activity_pages",
    "workspace_pages",
)


def mount(api: FastAPI, app: App, auth: WebAuth | None = None) -> WebAuth:
    """Add the pages and their static files to ``api``; returns the sign-in state in use
    (also kept as ``api.state.web_auth``)."""
    import importlib

    from fleetmem.surfaces.web.base import Web

    auth = auth or WebAuth()
    web = Web(app, auth)
    api.state.web = web
    for name in PAGE_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        api.include_router(module.routes(web))
    api.mount("/static", StaticFiles(directory=STATIC_DIR), name="web-static")
    api.state.web_auth = auth
    return auth


def announce_login_links(
    auth: WebAuth, base_url: str, printer: Callable[..., object] = print
) -> None:
    """Print a login link now, and whenever a visitor of the login page asks for a new one."""

    def announce() -> None:
        link = login_url(base_url, auth.new_login_token())
        minutes = int(LOGIN_TTL_S // 60)
        message = f"Sign in to the web UI: {link} (works once, for {minutes} minutes)"
        printer(message, flush=True)

    auth.set_announcer(announce)
    announce()


__all__ = ["STATIC_DIR", "WebAuth", "announce_login_links", "mount"]
