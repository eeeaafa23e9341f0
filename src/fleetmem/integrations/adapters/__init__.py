"""The adapters ``[agent.NAME] adapter`` may name: how each agent is started and read."""

from __future__ import annotations

from fleetmem.integrations.adapters.base import (
    Adapter,
    CommandRun,
    Edit,
    Observation,
    StreamParser,
)
from fleetmem.integrations.adapters.claude_code import ClaudeCodeAdapter
from fleetmem.integrations.adapters.codex import CodexAdapter
from fleetmem.integrations.adapters.command import CommandAdapter

ADAPTERS: dict[str, Adapter] = {
    "claude-code": ClaudeCodeAdapter(),
    "codex": CodexAdapter(),
    "command": CommandAdapter(),
}


def get_adapter(name: str) -> Adapter:
    """The adapter called ``name``; KeyError for an unknown one."""
    return ADAPTERS[name]


__all__ = [
    "ADAPTERS",
    "Adapter",
    "CommandRun",
    "Edit",
    "Observation",
    "StreamParser",
    "get_adapter",
]
