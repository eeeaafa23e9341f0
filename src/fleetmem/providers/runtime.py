"""One background asyncio loop that carries every MCP client session of the process.

The memory service is synchronous (it runs in CLI commands, request threads and the jobs
thread); MCP sessions are asynchronous and long-lived. Sessions live on this loop, and
synchronous callers submit coroutines with a deadline: when it passes, the caller gets
``TimeoutError`` at once and the coroutine is cancelled on the loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger("fleetmem.providers")

T = TypeVar("T")


class LoopThread:
    """A daemon thread running an asyncio loop, started on first use, stopped by :meth:`close`."""

    def __init__(self, name: str = "fleetmem-mcp") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop (started now if needed)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the MCP loop is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                thread = threading.Thread(
                    target=self._run, args=(loop, ready), name=self._name, daemon=True
                )
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    @property
    def started(self) -> bool:
        return self._loop is not None

    def in_loop(self) -> bool:
        """True when called from the loop's own thread (where blocking would deadlock)."""
        return self._thread is not None and threading.current_thread() is self._thread

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; the returned future can be waited on from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """Run ``coro`` on the loop and wait at most ``timeout`` seconds for its result.

        Raises ``TimeoutError`` (and cancels the coroutine) when the deadline passes.
        """
        if self.in_loop():
            coro.close()
            raise RuntimeError("LoopThread.run called from the loop thread")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g}s") from None

    def close(self, timeout: float = 10.0) -> None:
        """Cancel what is left on the loop, stop it and join its thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._closed = True
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(_cancel_others(), loop).result(timeout)
        except (concurrent.futures.TimeoutError, RuntimeError):
            log.warning("mcp_loop.close tasks_left=unknown")
        try:
            asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop).result(timeout)
            asyncio.run_coroutine_threadsafe(loop.shutdown_default_executor(), loop).result(timeout)
        except (concurrent.futures.TimeoutError, RuntimeError):
            pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()


async def _cancel_others() -> None:
    current = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=5.0)
