"""What an adapter reads out of an agent's output, whatever the agent.

A :class:`StreamParser` is fed the agent's stdout one line at a time (on a reader thread) and
fills an :class:`Observation`: the session id, the served model, the final result, the cost,
and, in order, the files the agent edited and the commands it ran. The supervisor reads the
edits seen so far for heartbeats (thread-safe) and the whole observation once the process is
gone.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

#: Run-record reasons a stream may report for a failed run.
STREAM_FAILURES = ("agent_error", "model_error", "tool_error", "budget_exceeded")
MAX_EVENTS = 20_000
MAX_RESULT_CHARS = 1_048_576


@dataclass(frozen=True, slots=True)
class Edit:
    """A file the agent changed (absolute, or relative to the session's working directory)."""

    path: str
    subagent: bool = False


@dataclass(frozen=True, slots=True)
class CommandRun:
    """A command the agent ran and how it ended; ``error_class`` is set when the agent itself
    said it was a verification of that class."""

    command: str
    exit_code: int | None
    failed: bool
    subagent: bool = False
    error_class: str | None = None


@dataclass
class Observation:
    """Everything an adapter learned from one agent process."""

    session_id: str | None = None
    model: str | None = None
    result_text: str | None = None
    cost_usd: float | None = None
    cost_source: str = "unknown"
    failure: str | None = None
    failure_detail: str | None = None
    finished: bool = False
    events: list[Edit | CommandRun] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _reported: int = field(default=0, repr=False)

    def add(self, event: Edit | CommandRun) -> None:
        with self._lock:
            if len(self.events) < MAX_EVENTS:
                self.events.append(event)

    def fail(self, reason: str, detail: str | None = None) -> None:
        """Record the reason the stream gave for failing (the first one wins)."""
        if reason in STREAM_FAILURES and self.failure is None:
            self.failure = reason
            self.failure_detail = (detail or "")[:300] or None

    def set_result(self, text: str | None) -> None:
        if isinstance(text, str) and text.strip():
            self.result_text = text[:MAX_RESULT_CHARS]

    def edits(self) -> list[Edit]:
        with self._lock:
            return [e for e in self.events if isinstance(e, Edit)]

    def commands(self) -> list[CommandRun]:
        with self._lock:
            return [e for e in self.events if isinstance(e, CommandRun)]

    def new_edit_paths(self) -> list[str]:
        """Paths edited since the last call (for heartbeats), first seen first."""
        with self._lock:
            fresh = self.events[self._reported :]
            self._reported = len(self.events)
        return list(dict.fromkeys(e.path for e in fresh if isinstance(e, Edit)))


class StreamParser(Protocol):
    """Reads one agent's stdout, line by line."""

    observation: Observation

    def feed(self, line: str) -> str | None:
        """Take one line (without its newline); return text to show the operator, if any."""
        ...

    def finish(self) -> None:
        """The stream ended."""
        ...


class Adapter(Protocol):
    """How to start one kind of agent and read its output."""

    name: str
    #: The executable started when ``[agent.NAME] command`` is not set.
    executable: str
    #: Whether the agent is a prompt one-shot (a prompt is required).
    needs_prompt: bool

    def argv(
        self, executable: str, args: Sequence[str], model: str | None, prompt: str | None
    ) -> list[str]:
        """The full argv; the prompt, when there is one, is its last element."""
        ...

    def parser(self) -> StreamParser:
        """A fresh parser for one process's stdout."""
        ...
