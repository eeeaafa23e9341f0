"""The agent-facing MCP server: recall, briefing, facts and context-file tools for runs.

One :class:`FleetmemMCP` serves one transport: ``fleetmem mcp`` (stdio, the caller's run token
read from ``FLEETMEM_RUN_TOKEN`` at start) or ``/mcp`` inside ``fleetmem serve`` (streamable
HTTP, the token from each request's ``Authorization: Bearer`` header). Each tool is a thin
adapter over one :class:`fleetmem.service.agent_memory.AgentMemory` method, run on a small
thread pool of its own (the services are synchronous and SQLite-bound, and a bounded pool
keeps the store's per-thread connections few).

Errors a model must read come back as tool errors whose text starts with a stable code:
``not_attributed: ...``, ``invalid_input: ...``, ``not_permitted: ...``. The provider's tools
are never listed, and a call naming one is refused ``not_permitted`` and logged as denied in
the call log (seed 000 REQ-2). No tool records, edits or forgets an episode.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, CallToolResult, InputRequiredResult
from pydantic import AnyUrl, ValidationError

from fleetmem import __version__
from fleetmem.core import strictjson
from fleetmem.core.hosts import CONTEXT_URI
from fleetmem.errors import FleetmemError, NotAttributed, ProviderReserved
from fleetmem.providers.reserved import AGENT_TOOLS, reserved_reason, visible_tools
from fleetmem.service.bootstrap import App
from fleetmem.service.runs import Caller
from fleetmem.surfaces.mcp import descriptions
from fleetmem.surfaces.mcp.descriptions import BRIEFING_URI

log = logging.getLogger("fleetmem.mcp")

SERVER_NAME = "fleetmem"
TOKEN_ENV = "FLEETMEM_RUN_TOKEN"
#: Threads serving tool calls: enough for a few agents at once, few SQLite connections.
WORKERS = 4
T = TypeVar("T")

#: Where a call's run token comes from: the request's HTTP headers (None over stdio).
TokenSource = Callable[[Mapping[str, str] | None], str | None]


def fixed_token(token: str | None) -> TokenSource:
    """Every call carries ``token`` (stdio: ``FLEETMEM_RUN_TOKEN`` of the server's process)."""
    value = token.strip() if token else None

    def source(_headers: Mapping[str, str] | None) -> str | None:
        return value or None

    return source


def bearer_token(headers: Mapping[str, str] | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (streamable HTTP)."""
    if not headers:
        return None
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


class FleetmemToolError(ToolError):
    """A refusal the model should read; its text starts with a stable code."""


@contextmanager
def _keep_root_logging() -> Iterator[None]:
    """MCPServer configures logging when created; the host process's logging is its own."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _headers(context: Context[Any, Any] | None) -> Mapping[str, str] | None:
    if context is None:
        return None
    try:
        return context.headers
    except ValueError:  # no request in flight (a direct call)
        return None


def _fields(exc: ValidationError) -> str:
    """Which arguments were wrong and why, without echoing their values."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts[:5])


def _strict_fields(exc: ValidationError) -> str:
    """Each wrong argument with the JSON type it arrived as (never its value): a string
    where a number belongs is refused, not converted."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        got = _json_type(err.get("input"))
        parts.append(f"{where}: {err['msg']} (got {got}; arguments are not converted)")
    return "; ".join(parts[:5])


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


class FleetmemMCP(MCPServer[Any]):
    """An ``MCPServer`` whose every call is attributed (or not) by its run token."""

    def __init__(self, app: App, tokens: TokenSource, *, workers: int = WORKERS) -> None:
        with _keep_root_logging():
            super().__init__(
                SERVER_NAME,
                title="fleetmem memory",
                instructions=descriptions.INSTRUCTIONS,
                version=__version__,
                log_level="WARNING",
            )
        # The SDK logs refused calls with their messages at INFO; ours may quote arguments.
        logging.getLogger("mcp.server").setLevel(logging.WARNING)
        self.app = app
        self.tokens = tokens
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fleetmem-mcp")
        self._closed = False

    def close(self) -> None:
        """Stop the worker threads (calls still running finish on their own)."""
        if not self._closed:
            self._closed = True
            self._pool.shutdown(wait=False, cancel_futures=True)

    # ---- running service calls --------------------------------------------------------
    async def serve_call(
        self,
        tool: str,
        context: Context[Any, Any] | None,
        work: Callable[[Caller | None, str], T],
    ) -> T:
        """Resolve the caller and run ``work(caller, call_id)`` on the pool.

        Fleetmem errors become :class:`FleetmemToolError` with their code; anything else is
        logged (its type only) and reported as ``internal_error``.
        """
        token = self.tokens(_headers(context))
        call_id = "mcp-" + secrets.token_hex(8)
        seen: list[Caller | None] = [None]

        def job() -> T:
            caller = self.app.agent_memory.caller(token)
            seen[0] = caller
            return work(caller, call_id)

        started = time.perf_counter()
        outcome = "ok"
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, job)
        except FleetmemError as exc:
            outcome = exc.code
            raise FleetmemToolError(f"{exc.code}: {exc}") from None
        except Exception as exc:
            outcome = "internal_error"
            log.error("mcp.call_failed tool=%s error=%s", tool, type(exc).__name__)
            raise FleetmemToolError(
                "internal_error: fleetmem could not complete this call (the error is logged)"
            ) from None
        finally:
            caller = seen[0]
            log.info(
                "mcp.call tool=%s run=%s agent=%s outcome=%s ms=%.1f",
                tool,
                caller.run_id if caller else "-",
                caller.agent if caller else "-",
                outcome,
                (time.perf_counter() - started) * 1000,
            )

    # ---- the MCPServer seams ----------------------------------------------------------
    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Refuse provider tools before anything else; give every error a stable code."""
        if reserved_reason(name, self.app.settings) is not None:
            await self._deny(name, arguments, context)
        self._check_arguments(name, arguments)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, FleetmemToolError):
                raise FleetmemToolError(str(cause)) from None
            if isinstance(cause, ValidationError):
                raise FleetmemToolError(f"invalid_input: {_fields(cause)}") from None
            if name not in AGENT_TOOLS:
                raise FleetmemToolError(
                    f"unknown_tool: fleetmem has no tool {name!r}; its tools are "
                    + ", ".join(sorted(AGENT_TOOLS))
                ) from None
            raise

    def _check_arguments(self, name: str, arguments: dict[str, Any]) -> None:
        """Refuse wrong arguments before the SDK sees them: the SDK parses a string that
        looks like JSON and lets pydantic coerce (``limit: "5"`` would become 5), while an
        argument of the wrong type must be refused naming it. Strict validation against the
        tool's own argument model, plus the strict-JSON rules (finite numbers, no lone
        surrogates, bounded nesting) and no unknown argument names."""
        tool = self._tool_manager.get_tool(name)
        if tool is None or name not in AGENT_TOOLS:
            return
        try:
            strictjson.check_value(arguments, root="arguments")
        except FleetmemError as exc:
            raise FleetmemToolError(f"{exc.code}: {exc}") from None
        model = tool.fn_metadata.arg_model
        known = {field.alias or key for key, field in model.model_fields.items()}
        for key in arguments:
            if key not in known:
                raise FleetmemToolError(
                    f"invalid_input: {key!r} is not an argument of {name}; its arguments are "
                    + (", ".join(sorted(known)) or "none")
                )
        try:
            model.model_validate(arguments, strict=True)
        except ValidationError as exc:
            raise FleetmemToolError(f"invalid_input: {_strict_fields(exc)}") from None

    async def _deny(
        self, name: str, arguments: Mapping[str, Any], context: Context[Any, Any] | None
    ) -> None:
        token = self.tokens(_headers(context))

        def deny() -> None:
            caller = self.app.agent_memory.caller(token)
            label = f"agent:{caller.agent} run:{caller.run_id}" if caller else "unattributed"
            self.app.providers.refuse_reserved(name, arguments, caller=label)

        try:
            await asyncio.get_running_loop().run_in_executor(self._pool, deny)
        except ProviderReserved as exc:
            raise FleetmemToolError(f"not_permitted: {exc.message}") from None
        raise FleetmemToolError(f"not_permitted: tool {name} is reserved to fleetmem")

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        """``fleetmem://memory/briefing``: the caller's briefing, as the tool returns it;
        ``fleetmem://memory/context``: the run's whole context, kept while its host could not
        take all of it (:mod:`fleetmem.integrations.context_delivery`)."""
        name = str(uri)
        if name == BRIEFING_URI:
            memory = self.app.agent_memory

            def briefing(caller: Caller | None, call_id: str) -> str:
                return memory.briefing(caller, delivery="resource", call_id=call_id).text

            return await self._serve_resource("briefing", name, context, briefing)
        if name == CONTEXT_URI:
            from fleetmem.integrations.context_delivery import kept_whole

            def whole(caller: Caller | None, _call_id: str) -> str:
                if caller is None:
                    raise NotAttributed("the context belongs to a run: call with its run token")
                return kept_whole(self.app.home, caller.run_id) or descriptions.CONTEXT_WHOLE

            return await self._serve_resource("context", name, context, whole)
        return await super().read_resource(uri, context)

    async def _serve_resource(
        self,
        name: str,
        uri: str,
        context: Context[Any, Any] | None,
        work: Callable[[Caller | None, str], str],
    ) -> list[ReadResourceContents]:
        """A resource's text, its errors as JSON-RPC errors (``not_attributed:`` a bad request)."""
        try:
            text = await self.serve_call(f"resource:{name}", context, work)
        except FleetmemToolError as exc:
            code = INVALID_REQUEST if str(exc).startswith(NotAttributed.code) else INTERNAL_ERROR
            raise MCPError(code=code, message=str(exc), data={"uri": uri}) from None
        return [ReadResourceContents(content=text, mime_type="text/plain")]


def build_server(app: App, tokens: TokenSource, *, workers: int = WORKERS) -> FleetmemMCP:
    """The agent-facing server over ``app``: seven tools, the briefing and context resources."""
    from fleetmem.surfaces.mcp.tools import register

    server = FleetmemMCP(app, tokens, workers=workers)
    names = register(server)
    # The tool list is fleetmem's own; a provider's tool can never be among them.
    if visible_tools(names, app.settings) != names or set(names) != set(AGENT_TOOLS):
        raise RuntimeError(f"the agent tool list is wrong: {names}")

    resources = (
        (BRIEFING_URI, "briefing", "This run's briefing", descriptions.BRIEFING_RESOURCE),
        (CONTEXT_URI, "context", "This run's whole context", descriptions.CONTEXT_RESOURCE),
    )
    for uri, name, title, description in resources:
        # Listed here; FleetmemMCP.read_resource serves them (attributed, per caller).
        server.resource(uri, name=name, title=title, description=description,
                        mime_type="text/plain")(_served_by_read_resource)  # fmt: skip

    return server


def _served_by_read_resource() -> str:  # pragma: no cover - never called by the SDK
    raise RuntimeError("served by FleetmemMCP.read_resource")


def stdio_server(app: App, environ: Mapping[str, str], *, attach: str | None = None) -> FleetmemMCP:
    """The server ``fleetmem mcp`` runs: attributed by ``FLEETMEM_RUN_TOKEN``, or, with
    ``attach="claude-code"`` and no such variable (Claude Code started it from its settings),
    by the session its parent process is in at each call
    (:mod:`fleetmem.integrations.attach`)."""
    token = environ.get(TOKEN_ENV)
    if attach is not None and not token:
        from fleetmem.integrations.attach import AttachedToken, session_owner

        owner = session_owner()
        attached = AttachedToken(app.home, owner)
        log.info("mcp.attach integration=%s owner=%s", attach, owner.pid if owner else "-")
        return build_server(app, lambda _headers: attached.current())
    if not token:
        log.warning("mcp.unattributed reason=%s is not set", TOKEN_ENV)
    elif app.agent_memory.caller(token) is None:
        log.warning("mcp.unattributed reason=%s is not a known run token", TOKEN_ENV)
    return build_server(app, fixed_token(token))
