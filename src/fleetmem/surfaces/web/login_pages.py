"""Signing in and out: the one-time login link, the session cookie, the help page."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from fleetmem.surfaces.web.auth import SESSION_COOKIE, SESSION_MAX_S
from fleetmem.surfaces.web.base import Web, WebRoute, redirect
from fleetmem.surfaces.web.render import render


def routes(web: Web) -> APIRouter:
    router = APIRouter(route_class=WebRoute, include_in_schema=False)

    @router.get("/")
    def root() -> Response:
        return redirect("/memory")

    @router.get("/login")
    def login(request: Request, token: str | None = None, sent: int = 0) -> Response:
        if token is None:
            signed_in = web.auth.session(request.cookies.get(SESSION_COOKIE)) is not None
            if signed_in:
                return redirect("/memory")
            return render(request, "login.html", {"expired": False, "sent": bool(sent)})
        redeemed = web.auth.redeem(token)
        if redeemed is None:
            return render(request, "login.html", {"expired": True, "sent": False}, status_code=401)
        session_token, _session = redeemed
        response = redirect("/memory")
        response.set_cookie(
            SESSION_COOKIE,
            session_token,
            max_age=int(SESSION_MAX_S),
            httponly=True,
            samesite="strict",
            path="/",
        )
        return response

    @router.post("/login/new-link")
    def new_link() -> Response:
        # Nothing to protect: the link is printed where the daemon runs, not sent back.
        web.auth.announce_new_link()
        return redirect("/login?sent=1")

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        await web.form(request)
        web.auth.end(request.cookies.get(SESSION_COOKIE))
        response = redirect("/login")
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
        return response

    return router
