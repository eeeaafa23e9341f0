"""Which workspace an API request acts in: the one its token or web session is bound to.

:class:`fleetmem.surfaces.http.auth.ApiGuard` identifies the caller before routing and leaves
an :class:`ApiCaller` in the request's scope; route handlers take the caller's view of the
application (:meth:`fleetmem.service.bootstrap.App.in_workspace`) as a dependency, so a
handler cannot reach another workspace's facts or files. There is no header or parameter
that picks another workspace: a token bound to ``acme`` acts in ``acme``, and another
workspace's fact, file or proposal is simply not found (404), never forbidden (403).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends
from starlette.requests import Request
from starlette.types import Scope

from fleetmem.errors import NotAttributed
from fleetmem.service.api_tokens import Tier
from fleetmem.service.bootstrap import App
from fleetmem.service.facts import FactService
from fleetmem.service.files import ContextFileService

#: The scope key the guard leaves the caller under.
CALLER_KEY = "fleetmem.caller"


@dataclass(frozen=True, slots=True)
class ApiCaller:
    """Who is calling: the workspace they act in, their tier, and whether they are the
    daemon's operator (its ``control.token``, or a signed-in web session), who alone may
    create, rename and delete workspaces and see every one of them."""

    workspace: str
    tier: Tier
    operator: bool
    #: ``control.token``, ``server.tokens[2]``, ``minted:ci`` or ``session``.
    origin: str


def set_caller(scope: Scope, caller: ApiCaller) -> None:
    scope[CALLER_KEY] = caller


def caller_of(request: Request) -> ApiCaller:
    """The caller the guard identified; a request that reached a handler without one (a
    run-token route) acts as nobody in particular."""
    found = request.scope.get(CALLER_KEY)
    if not isinstance(found, ApiCaller):
        raise NotAttributed("this route acts for a run token, not for a workspace")
    return found


def root_app(request: Request) -> App:
    """The daemon's application (``create_app`` keeps it in the ASGI app's state)."""
    app: App = request.app.state.fleetmem_app
    return app


def workspace_app(request: Request) -> App:
    """The application bound to the caller's workspace."""
    return root_app(request).in_workspace(caller_of(request).workspace)


def _facts(request: Request) -> FactService:
    return workspace_app(request).facts


def _files(request: Request) -> ContextFileService:
    return workspace_app(request).files


#: Handler parameters: the caller, and the services of the caller's workspace.
Caller = Annotated[ApiCaller, Depends(caller_of)]
WorkspaceApp = Annotated[App, Depends(workspace_app)]
Facts = Annotated[FactService, Depends(_facts)]
Files = Annotated[ContextFileService, Depends(_files)]

__all__ = [
    "CALLER_KEY",
    "ApiCaller",
    "Caller",
    "Facts",
    "Files",
    "WorkspaceApp",
    "caller_of",
    "root_app",
    "set_caller",
    "workspace_app",
]
