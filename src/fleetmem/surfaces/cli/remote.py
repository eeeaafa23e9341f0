"""``fleetmem --server URL``: send a command to a running daemon's ``/api/v1`` instead of
opening the local store.

The daemon runs the same service methods the local path calls, and answers with the same view
dicts (``surfaces/*views.py``); the operations in ``remote_ops`` print them with the command
modules' own text functions, so both paths print the same thing. Server errors come back as
the same exception classes (by their stable ``code``), so ``main`` prints the same message and
exits with the same code. Documented in docs/cli.md ("Acting through a daemon").
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from fleetmem import errors
from fleetmem.errors import ConfigError, FleetmemError, InvalidInput, StoreError

SERVER_ENV = "FLEETMEM_SERVER"
TOKEN_ENV = "FLEETMEM_TOKEN"
TOKEN_FILE = "control.token"
#: Connecting should be quick on a LAN or loopback; a recall or a report may take longer.
TIMEOUT = httpx.Timeout(60.0, connect=5.0)


class ServerUnreachable(StoreError):
    """The daemon named by ``--server`` did not answer (refused, timed out, broke off)."""

    code = "server_unreachable"

    def __init__(self, url: str, why: str) -> None:
        self.url = url
        FleetmemError.__init__(self, f"cannot reach the fleetmem server at {url}: {why}")


class TokenRefused(ConfigError):
    """The daemon answered 401 or 403: the token (or its absence) is the problem."""

    code = "token_refused"

    def __init__(self, url: str, status: int, source: str, detail: str) -> None:
        self.url, self.status, self.source = url, status, source
        self.key, self.value, self.reason = "token", source, detail
        FleetmemError.__init__(
            self, f"the fleetmem server at {url} refused the request ({status}): {detail}; {source}"
        )


class LocalOnly(InvalidInput):
    """A command that has no API route refuses ``--server`` rather than open the local store."""

    code = "local_only"

    def __init__(self, command: str, why: str = "") -> None:
        self.field, self.value, self.reason = "--server", command, "works on the local store only"
        message = f"`fleetmem {command}` works on the local store only"
        FleetmemError.__init__(
            self, message + (f" ({why})" if why else "") + "; run it without --server"
        )


def server_url(value: str, source: str) -> str:
    """``value`` checked as a daemon's base URL (``http``/``https`` with a host), no trailing
    slash; errors name ``source`` (``--server`` or ``$FLEETMEM_SERVER``)."""
    try:
        parts = urllib.parse.urlsplit(value.strip())
        parts.port  # noqa: B018  # raises ValueError on a port that is not a number
    except ValueError as exc:
        raise InvalidInput(source, value, f"is not a URL ({exc})") from exc
    if parts.scheme not in ("http", "https"):
        raise InvalidInput(source, value, "must start with http:// or https://")
    if not parts.hostname:
        raise InvalidInput(source, value, "must name a host, e.g. http://127.0.0.1:8737")
    if parts.query or parts.fragment:
        raise InvalidInput(source, value, "must not carry a query or a fragment")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def resolve_token(environ: Mapping[str, str], home: Path) -> tuple[str | None, str]:
    """The control token to send and a description of where it came from (for errors):
    ``$FLEETMEM_TOKEN`` if set, else the first line of ``<home>/control.token``."""
    from_env = environ.get(TOKEN_ENV, "").strip()
    if from_env:
        return from_env, f"the token came from ${TOKEN_ENV}"
    path = home / TOKEN_FILE
    try:
        first = path.read_text(encoding="utf-8").splitlines()[:1]
    except FileNotFoundError:
        first = []
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(TOKEN_FILE, str(path), f"cannot be read ({exc})") from exc
    token = first[0].strip() if first else ""
    if token:
        return token, f"the token came from {path}"
    return None, f"no token was sent: set ${TOKEN_ENV} or put the daemon's token in {path}"


class RemoteClient:
    """One daemon's ``/api/v1``: requests with the bearer token, errors as fleetmem errors."""

    def __init__(self, base_url: str, token: str | None, token_source: str, *, home: Path) -> None:
        self.base_url = base_url
        self.home = home  # where refused context-file text is kept, as on the local path
        self._token, self._token_source = token, token_source
        self._http = httpx.Client(base_url=base_url, timeout=TIMEOUT, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content: bytes | None = None,
        bearer: tuple[str | None, str] | None = None,
        keep_conflict: bool = False,
    ) -> Any:
        """Send one request; the decoded JSON answer, or raise the error the server named.

        ``bearer`` replaces the control token (a run's own token for a heartbeat);
        ``keep_conflict`` returns a 409's JSON instead of raising (a stale file save).
        """
        token, source = bearer if bearer is not None else (self._token, self._token_source)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        query = {k: _param(v) for k, v in (params or {}).items() if v is not None}
        if body is not None:
            content = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        try:
            response = self._http.request(
                method, path, params=query, content=content, headers=headers
            )
        except httpx.TimeoutException as exc:
            raise ServerUnreachable(self.base_url, f"timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise ServerUnreachable(self.base_url, str(exc) or type(exc).__name__) from exc
        data = _json_or_none(response)
        if response.is_success:
            if data is None:
                raise FleetmemError(
                    f"the fleetmem server at {self.base_url} answered {method} {path}"
                    f" with {response.status_code} and no JSON"
                )
            return data
        if response.status_code == 409 and keep_conflict and isinstance(data, dict):
            return data
        raise self._error(method, path, response.status_code, data, source)

    def _error(self, method: str, path: str, status: int, data: Any, source: str) -> FleetmemError:
        err = data.get("error") if isinstance(data, dict) else None
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            code = str(err.get("code", "error"))
            # The one 403 the local path also gives: a recall "as" an agent with no run.
            if status == 401 or (status == 403 and code != errors.NotAttributed.code):
                return TokenRefused(self.base_url, status, source, err["message"])
            return rebuild_error(status, err)
        if status in (401, 403):
            return TokenRefused(self.base_url, status, source, _detail(data, status))
        detail = data.get("detail") if isinstance(data, dict) else None
        if status == 422 and isinstance(detail, list) and detail and isinstance(detail[0], dict):
            # A framework-level check (a query parameter of the wrong type) names its field.
            first = detail[0]
            where = first.get("loc") or ["<request>"]
            return InvalidInput(str(where[-1]), first.get("input"), str(first.get("msg", "")))
        return FleetmemError(
            f"the fleetmem server at {self.base_url} answered {method} {path} with {status}"
            f" ({_detail(data, status)})"
        )


def rebuild_error(status: int, err: Mapping[str, Any]) -> FleetmemError:
    """The server's ``{"code", "message", ...}`` as the exception the local path raises:
    the class with that ``code`` (else the one its HTTP status stands for), same message."""
    code = str(err.get("code", "error"))
    cls = _classes_by_code().get(code) or _BY_STATUS.get(status, FleetmemError)
    exc = cls.__new__(cls)
    # Bypass the subclass constructors: the message is already rendered by the server.
    FleetmemError.__init__(exc, str(err["message"]))
    exc.code = code
    for name in ("field", "existing"):
        if name in err:
            setattr(exc, name, err[name])
    if isinstance(exc, errors.RateLimited):
        exc.retry_after = float(err.get("retry_after") or 0.0)
    return exc


_BY_STATUS: dict[int, type[FleetmemError]] = {
    400: InvalidInput,
    403: errors.NotAttributed,
    404: errors.NotFound,
    409: errors.Conflict,
    429: errors.RateLimited,
    503: StoreError,
}


def _classes_by_code() -> dict[str, type[FleetmemError]]:
    found: dict[str, type[FleetmemError]] = {}
    pending: list[type[FleetmemError]] = [FleetmemError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def _detail(data: Any, status: int) -> str:
    if isinstance(data, dict) and isinstance(data.get("detail"), str):
        return str(data["detail"])
    return httpx.codes.get_reason_phrase(status) or f"HTTP {status}"
