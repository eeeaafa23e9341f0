"""Claude Code: ``claude --print --output-format stream-json --verbose -- PROMPT``.

The stream is one JSON object per line (docs/agents.md cites the format):

- ``{"type": "system", "subtype": "init", "session_id", "model", "cwd", ...}`` first;
- ``{"type": "assistant", "message": {"model", "content": [...]}, "parent_tool_use_id"}``
  with ``tool_use`` blocks ``{"id", "name", "input"}`` (``Edit``, ``MultiEdit`` and ``Write``
  carry ``input.file_path``, ``NotebookEdit`` ``input.notebook_path``, ``Bash``
  ``input.command``);
- ``{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id",
  "is_error", "content"}]}}`` for each tool's result;
- ``{"type": "result", "subtype": "success" | "error_max_turns" | "error_during_execution",
  "is_error", "result", "session_id", "total_cost_usd", ...}`` last.

A session transcript (``~/.claude/projects/.../SESSION.jsonl``, read by the SessionEnd hook)
has the same ``assistant`` and ``user`` lines, marked ``isSidechain`` for subagents and
possibly carrying ``costUSD``; :class:`ClaudeStreamParser` reads both. Lines that are not
JSON objects, and types it does not know, are ignored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from fleetmem.integrations.adapters.base import CommandRun, Edit, Observation

EDIT_TOOLS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path"}
NOTEBOOK_TOOLS = {"NotebookEdit": "notebook_path"}
COMMAND_TOOLS = frozenset({"Bash"})
_EXIT_CODE = re.compile(r"[Ee]xit code:?\s*(-?\d+)")
_FAILURES = {
    "error_max_turns": "budget_exceeded",
    "error_max_budget_usd": "budget_exceeded",
    "error_during_execution": "agent_error",
}


def edit_path(tool: str, tool_input: object) -> str | None:
    """The file a Claude Code tool call edits, or None for a tool that edits nothing."""
    if not isinstance(tool_input, Mapping):
        return None
    key = EDIT_TOOLS.get(tool) or NOTEBOOK_TOOLS.get(tool)
    value = tool_input.get(key) if key else None
    return value if isinstance(value, str) and 0 < len(value) <= 4096 else None


def command_of(tool: str, tool_input: object) -> str | None:
    """The shell command of a ``Bash`` tool call."""
    if tool not in COMMAND_TOOLS or not isinstance(tool_input, Mapping):
        return None
    value = tool_input.get("command")
    return value if isinstance(value, str) and value.strip() else None


def exit_code_in(text: str) -> int | None:
    found = _EXIT_CODE.search(text[:2000])
    return int(found.group(1)) if found else None


class ClaudeStreamParser:
    """Reads ``--output-format stream-json`` lines, or a session transcript's lines."""

    def __init__(self) -> None:
        self.observation = Observation()
        # tool_use id -> (name, input, subagent), until its tool_result arrives.
        self._pending: dict[str, tuple[str, Any, bool]] = {}
        self._last_text: str | None = None
        self._transcript_cost = 0.0
        self._has_transcript_cost = False

    def feed(self, line: str) -> str | None:
        try:
            event = json.loads(line)
        except ValueError:
            return None
        if isinstance(event, dict):
            self._event(event)
        return None

    def _event(self, event: Mapping[str, Any]) -> None:
        obs = self.observation
        kind = event.get("type")
        session = event.get("session_id") or event.get("sessionId")
        if isinstance(session, str) and obs.session_id is None and session:
            obs.session_id = session
        subagent = bool(event.get("parent_tool_use_id") or event.get("isSidechain"))
        if kind == "system" and event.get("subtype") == "init":
            if isinstance(event.get("model"), str):
                obs.model = event["model"]
        elif kind == "assistant":
            self._assistant(event.get("message"), subagent)
            cost = event.get("costUSD")
            if isinstance(cost, int | float) and _number(cost):
                self._transcript_cost += float(cost)
                self._has_transcript_cost = True
        elif kind == "user":
            self._results(event.get("message"))
        elif kind == "result":
            self._result(event)

    def _assistant(self, message: object, subagent: bool) -> None:
        if not isinstance(message, Mapping):
            return
        model = message.get("model")
        if isinstance(model, str) and model and not model.startswith("<") and not subagent:
            self.observation.model = model
        for block in _blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text" and not subagent and isinstance(block.get("text"), str):
                self._last_text = block["text"]
            elif kind == "tool_use" and isinstance(block.get("id"), str):
                name = block.get("name")
                if isinstance(name, str):
                    self._pending[block["id"]] = (name, block.get("input"), subagent)

    def _results(self, message: object) -> None:
        if not isinstance(message, Mapping):
            return
        for block in _blocks(message.get("content")):
            if block.get("type") != "tool_result":
                continue
            pending = self._pending.pop(str(block.get("tool_use_id")), None)
            if pending is None:
                continue
            self._tool_done(*pending, is_error=bool(block.get("is_error")), content=block)

    def _tool_done(
        self, name: str, tool_input: Any, subagent: bool, *, is_error: bool, content: Any
    ) -> None:
        path = edit_path(name, tool_input)
        if path is not None:
            if not is_error:  # a failed Edit (old_string not found) changed nothing
                self.observation.add(Edit(path, subagent))
            return
        command = command_of(name, tool_input)
        if command is not None:
            code = exit_code_in(_text_of(content.get("content"))) if is_error else 0
            self.observation.add(CommandRun(command, code, is_error, subagent))

    def _result(self, event: Mapping[str, Any]) -> None:
        obs = self.observation
        obs.finished = True
        obs.set_result(event.get("result") if isinstance(event.get("result"), str) else None)
        cost = event.get("total_cost_usd", event.get("cost_usd"))
        if isinstance(cost, int | float) and _number(cost):
            obs.cost_usd, obs.cost_source = float(cost), "reported"
        subtype = str(event.get("subtype") or "")
        if subtype in _FAILURES:
            obs.fail(_FAILURES[subtype], subtype)
        elif event.get("is_error") is True:
            # "success" with is_error: the API refused (bad key, no credit, overloaded).
            obs.fail("model_error", str(event.get("result") or subtype))

    def finish(self) -> None:
        obs = self.observation
        # A tool call whose result never arrived may still have changed the file.
        for name, tool_input, subagent in self._pending.values():
            path = edit_path(name, tool_input)
            if path is not None:
                obs.add(Edit(path, subagent))
        self._pending.clear()
        if obs.result_text is None and self._last_text is not None:
            obs.set_result(self._last_text)
        if obs.cost_usd is None and self._has_transcript_cost:
            obs.cost_usd, obs.cost_source = round(self._transcript_cost, 6), "reported"


def _blocks(content: object) -> list[Mapping[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
    return ""


def _number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


class ClaudeCodeAdapter:
    """``claude`` in print mode with the stream-json output format."""

    name = "claude-code"
    executable = "claude"
    needs_prompt = True

    def argv(
        self, executable: str, args: Sequence[str], model: str | None, prompt: str | None
    ) -> list[str]:
        argv = [executable, *args, "--print", "--output-format", "stream-json", "--verbose"]
        if model:
            argv += ["--model", model]
        # "--" ends the options, so a prompt starting with "-" is still the prompt.
        return [*argv, "--", prompt] if prompt is not None else argv

    def parser(self) -> ClaudeStreamParser:
        return ClaudeStreamParser()
