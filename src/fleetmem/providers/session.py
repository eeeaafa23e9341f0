"""One supervised MCP client session per provider.

The session is opened on first use (or at daemon start), checked with ``memory_contract``
when it opens and after every reconnect, and reopened with exponential backoff when the
connection is lost (a killed process, a dropped HTTP server, a failed open). While it is
down, calls fail at once instead of waiting: the caller degrades.

State, as status reports it:

* ``starting``: no check has completed in this process yet;
* ``ok``: the last contract check passed;
* ``incompatible``: a contract tool is missing or the contract version is unsupported;
  checked again every ``recheck_s`` while connected, and on every reconnect;
* ``unavailable``: the session could not be opened, or was lost and is being reopened.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from fleetmem import metrics
from fleetmem.errors import ProviderUnavailable
from fleetmem.providers import contract, transports
from fleetmem.providers.runtime import LoopThread
from fleetmem.providers.transports import Target

log = logging.getLogger("fleetmem.providers")

BACKOFF_INITIAL_S: Final = 0.5
BACKOFF_MAX_S: Final = 30.0
RECHECK_S: Final = 30.0
MAX_TOOL_PAGES: Final = 20


@dataclass(frozen=True, slots=True)
class SessionStatus:
    state: str = "starting"
    contract: int | None = None
    provider_name: str | None = None
    provider_version: str | None = None
    reason: str | None = None
    checked_at: float | None = None  # UNIX seconds of the last completed contract check
    down_since: float | None = None  # UNIX seconds since when the session has not been ok
    connects: int = 0


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """A tool result reduced to what fleetmem reads: no mcp types escape the loop."""

    is_error: bool
    structured: Any
    texts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ToolInfo:
    name: str
    input_schema: Mapping[str, Any] = field(default_factory=dict)


class SessionLost(Exception):
    """The connection to the provider is gone (it is being reopened)."""


def _describe(exc: BaseException) -> str:
    """A short reason for logs and status: exception classes, never provider text."""
    if isinstance(exc, BaseExceptionGroup):
        inner = ", ".join(sorted({_describe(e) for e in exc.exceptions}))
        return inner or type(exc).__name__
    if isinstance(exc, contract.ContractViolation):
        return f"contract: {exc.reason}"
    if isinstance(exc, ProviderUnavailable):
        return exc.message
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return f"{type(exc).__name__} {code}"
    return type(exc).__name__


def _is_connection_loss(exc: BaseException) -> bool:
    import anyio
    from mcp_types import CONNECTION_CLOSED

    from mcp import MCPError

    if isinstance(exc, MCPError):
        return exc.code == CONNECTION_CLOSED
    connection_errors = (
        anyio.ClosedResourceError,
        anyio.BrokenResourceError,
        anyio.EndOfStream,
        OSError,
        EOFError,
    )
    if isinstance(exc, connection_errors):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(_is_connection_loss(e) for e in exc.exceptions)
    return type(exc).__module__.startswith("httpx")


def _answer(result: Any) -> ToolAnswer:
    texts = tuple(
        str(getattr(block, "text", ""))
        for block in getattr(result, "content", ()) or ()
        if getattr(block, "type", None) == "text"
    )
    return ToolAnswer(
        is_error=bool(getattr(result, "is_error", False)),
        structured=getattr(result, "structured_content", None),
        texts=texts,
    )


class SupervisedSession:
    """A provider session living on the MCP loop; its public methods are synchronous."""

    def __init__(
        self,
        target: Target,
        runner: LoopThread,
        *,
        check_contract: bool = True,
        backoff_initial_s: float = BACKOFF_INITIAL_S,
        backoff_max_s: float = BACKOFF_MAX_S,
        recheck_s: float = RECHECK_S,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.target = target
        self._runner = runner
        self._check_contract = check_contract
        self._backoff_initial = backoff_initial_s
        self._backoff_max = backoff_max_s
        self._recheck = recheck_s
        self._wall = wall_clock
        self._lock = threading.Lock()
        self._started = False
        self._done: Any = None  # concurrent future of the supervisor task
        self._client: Any = None
        self._tools: dict[str, ToolInfo] = {}
        self._status = SessionStatus(down_since=None)
        self._settled = asyncio.Event()
        self._lost = asyncio.Event()
        self._stopping = asyncio.Event()
        self.calls = 0  # tool calls sent, contract checks included

    # ---- public, synchronous ----------------------------------------------------------
    @property
    def name(self) -> str:
        return self.target.name

    @property
    def status(self) -> SessionStatus:
        return self._status

    @property
    def tools(self) -> dict[str, ToolInfo]:
        return dict(self._tools)

    def start(self) -> None:
        """Open the session in the background (idempotent)."""
        with self._lock:
            if self._started:
                return
            transports.preload()
            self._started = True
            self._done = self._runner.submit(self._supervise())

    def wait_settled(self, timeout: float) -> SessionStatus:
        """Start if needed and wait (at most ``timeout``) for the first open to finish."""
        self.start()
        if not self._settled.is_set():
            with contextlib.suppress(TimeoutError):
                self._runner.run(self._wait_event(self._settled), timeout)
        return self._status

    def call(self, tool: str, args: Mapping[str, Any], timeout: float) -> ToolAnswer:
        """Call one tool within ``timeout`` seconds (plus, on a process's very first call, up
        to ``connect_timeout`` for the session to open).

        Raises ProviderUnavailable when the session is down or the deadline passes.
        """
        self.start()
        if not self._settled.is_set():
            self.wait_settled(self.target.connect_timeout_s)
        try:
            return self._runner.run(self._call(tool, dict(args), timeout), timeout + 0.05)
        except TimeoutError:
            raise ProviderUnavailable(
                f"{tool} gave no answer within {timeout:g}s", provider=self.name
            ) from None
        except SessionLost as exc:
            raise ProviderUnavailable(str(exc), provider=self.name) from None

    def list_tools(self, timeout: float) -> dict[str, ToolInfo]:
        """The tools the provider lists now (fetched fresh)."""
        self.start()
        if not self._settled.is_set():
            self.wait_settled(self.target.connect_timeout_s)
        try:
            return self._runner.run(self._list_tools(), timeout)
        except TimeoutError:
            raise ProviderUnavailable(
                f"tools/list gave no answer within {timeout:g}s", provider=self.name
            ) from None
        except SessionLost as exc:
            raise ProviderUnavailable(str(exc), provider=self.name) from None

    def recheck(self, timeout: float) -> SessionStatus:
        """Run the contract check now, on the open session."""
        self.start()
        if not self._settled.is_set():
            return self.wait_settled(max(timeout, self.target.connect_timeout_s))
        with contextlib.suppress(TimeoutError, SessionLost):
            self._runner.run(self._recheck_now(), timeout)
        return self._status

    def close(self, timeout: float = 10.0) -> None:
        """Close the session (ending a stdio subprocess) and wait for it."""
        with self._lock:
            done, self._done = self._done, None
        if done is None or self._runner.in_loop():
            return
        try:
            self._runner.run(self._stop(), timeout)
            done.result(timeout)
        except Exception as exc:  # closing must not fail the caller
            log.debug("provider.session_close provider=%s error=%s", self.name, _describe(exc))

    # ---- on the loop ------------------------------------------------------------------
    async def _stop(self) -> None:
        self._stopping.set()
        self._lost.set()

    @staticmethod
    async def _wait_event(event: asyncio.Event) -> None:
        await event.wait()

    async def _call(self, tool: str, args: dict[str, Any], timeout: float) -> ToolAnswer:
        client = self._client
        if client is None:
            raise SessionLost(self._status.reason or "the session is not open")
        self.calls += 1
        try:
            result = await asyncio.wait_for(client.call_tool(tool, args), timeout)
        except TimeoutError:
            raise
        except Exception as exc:
            if _is_connection_loss(exc):
                raise SessionLost(self._mark_lost(exc, client)) from None
            raise ProviderUnavailable(
                f"{tool} failed ({_describe(exc)})", provider=self.name
            ) from None
        return _answer(result)

    def _mark_lost(self, exc: BaseException, client: Any) -> str:
        """Stop using the session at once; the supervisor reopens it. Returns the reason."""
        reason = f"connection lost ({_describe(exc)}); reconnecting"
        if client is not self._client:
            return reason  # a late failure of a session already replaced
        self._client = None
        self._lost.set()
        if self._status.state != "unavailable":
            self._publish(
                replace(
                    self._status,
                    state="unavailable",
                    reason=reason,
                    down_since=self._status.down_since or self._wall(),
                )
            )
        return reason

    async def _list_tools(self) -> dict[str, ToolInfo]:
        client = self._client
        if client is None:
            raise SessionLost(self._status.reason or "the session is not open")
        try:
            return await self._fetch_tools(client)
        except Exception as exc:
            if _is_connection_loss(exc):
                raise SessionLost(self._mark_lost(exc, client)) from None
            raise ProviderUnavailable(
                f"tools/list failed ({_describe(exc)})", provider=self.name
            ) from None

    async def _fetch_tools(self, client: Any) -> dict[str, ToolInfo]:
        tools: dict[str, ToolInfo] = {}
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            for tool in page.tools:
                tools[tool.name] = ToolInfo(tool.name, dict(tool.input_schema or {}))
            cursor = page.next_cursor
            if not cursor:
                break
        self._tools = tools
        return tools

    async def _check(self, client: Any) -> SessionStatus:
        """``memory_contract`` (and the tool list): ok or incompatible; errors propagate."""
        started = time.perf_counter()
        timeout = self.target.call_timeout_s
        try:
            tools = await asyncio.wait_for(self._fetch_tools(client), timeout)
            missing = [t for t in contract.TOOLS if t not in tools]
            if "memory_contract" in missing:
                return self._incompatible("the provider has no memory_contract tool")
            self.calls += 1
            result = await asyncio.wait_for(client.call_tool("memory_contract", {}), timeout)
            answer = _answer(result)
            try:
                payload = contract.payload_of(
                    "memory_contract",
                    is_error=answer.is_error,
                    structured=answer.structured,
                    texts=answer.texts,
                )
                data = contract.check_response("memory_contract", payload).data
            except contract.ContractViolation as exc:
                return self._incompatible(f"memory_contract: {exc.reason}")
            version = int(data["contract"])
            info = data.get("provider") or {}
            if version not in contract.SUPPORTED_CONTRACTS:
                return self._incompatible(
                    f"contract {version} is not supported (this fleetmem speaks 1)",
                    contract_version=version,
                    info=info,
                )
            if missing:
                return self._incompatible(
                    "missing tools: " + ", ".join(missing), contract_version=version, info=info
                )
            now = self._wall()
            return SessionStatus(
                state="ok",
                contract=version,
                provider_name=str(info.get("name") or "")[:128] or None,
                provider_version=str(info.get("version") or "")[:128] or None,
                checked_at=now,
                connects=self._status.connects,
            )
        finally:
            metrics.PROVIDER_DURATION.labels(provider=self.name, op="contract").observe(
                time.perf_counter() - started
            )

    def _incompatible(
        self,
        reason: str,
        *,
        contract_version: int | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> SessionStatus:
        info = info or {}
        now = self._wall()
        return SessionStatus(
            state="incompatible",
            contract=contract_version,
            provider_name=str(info.get("name") or "")[:128] or None,
            provider_version=str(info.get("version") or "")[:128] or None,
            reason=reason,
            checked_at=now,
            down_since=self._status.down_since or now,
            connects=self._status.connects,
        )

    def _publish(self, status: SessionStatus) -> None:
        before = self._status
        self._status = status
        if not self._check_contract:
            return  # a conformance session: the check reports, metrics stay the daemon's
        if status.state == "ok":
            metrics.PROVIDER_UP.labels(provider=self.name).set(1)
        elif status.state in ("incompatible", "unavailable") and (
            status.checked_at is not None or before.checked_at is not None
        ):
            # Absent before the first contract check completes (seed 000 REQ-21).
            metrics.PROVIDER_UP.labels(provider=self.name).set(0)
        if before.state != status.state:
            log.info(
                "provider.state provider=%s state=%s reason=%s",
                self.name,
                status.state,
                status.reason or "-",
            )

    async def _recheck_now(self) -> None:
        client = self._client
        if client is None:
            raise SessionLost("the session is not open")
        try:
            status = await self._check(client)
        except Exception as exc:
            if _is_connection_loss(exc):
                self._lost.set()
            return
        self._publish(replace(status, connects=self._status.connects))

    async def _wait_any(self, timeout: float | None) -> None:
        waiters = [
            asyncio.ensure_future(self._stopping.wait()),
            asyncio.ensure_future(self._lost.wait()),
        ]
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)

    async def _supervise(self) -> None:
        attempt = 0
        while not self._stopping.is_set():
            self._lost.clear()
            try:
                async with self.target.open() as client:
                    connects = self._status.connects + 1
                    if self._check_contract:
                        status = await self._check(client)
                    else:
                        status = SessionStatus(state="ok", checked_at=None)
                    self._client = client
                    self._publish(replace(status, connects=connects))
                    self._settled.set()
                    attempt = 0
                    while not (self._stopping.is_set() or self._lost.is_set()):
                        recheck = self._status.state == "incompatible" and self._check_contract
                        await self._wait_any(self._recheck if recheck else None)
                        if recheck and not (self._stopping.is_set() or self._lost.is_set()):
                            await self._recheck_now()
                    self._client = None
            except asyncio.CancelledError:
                self._client = None
                raise
            except Exception as exc:  # any failure to open or check means: down, retry later
                self._client = None
                now = self._wall()
                self._publish(
                    replace(
                        self._status,
                        state="unavailable",
                        reason=_describe(exc),
                        checked_at=self._status.checked_at,
                        down_since=self._status.down_since or now,
                    )
                )
                log.warning(
                    "provider.session_failed provider=%s transport=%s error=%s",
                    self.name,
                    self.target.transport,
                    _describe(exc),
                )
            self._settled.set()
            if self._stopping.is_set():
                break
            if self._status.state != "unavailable":
                now = self._wall()
                self._publish(
                    replace(
                        self._status,
                        state="unavailable",
                        reason="connection lost; reconnecting",
                        down_since=self._status.down_since or now,
                    )
                )
            delay = min(self._backoff_max, self._backoff_initial * 2**attempt)
            attempt += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
        self._client = None
