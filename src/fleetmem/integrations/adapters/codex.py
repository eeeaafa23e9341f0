"""Codex: ``codex exec --json -- PROMPT``.

``codex exec --json`` prints one event per line (docs/agents.md cites the format):

- ``{"type": "thread.started", "thread_id"}`` first (the session id);
- ``{"type": "item.started" | "item.updated" | "item.completed", "item": {"id", "type", ...}}``
  where a completed ``command_execution`` item has ``command``, ``exit_code`` and ``status``
  (``completed``, ``failed``, ``declined``), a ``file_change`` item has ``changes: [{path,
  kind}]`` and ``status``, and an ``agent_message`` item has ``text``;
- ``{"type": "turn.completed", "usage": {...}}`` or ``{"type": "turn.failed", "error":
  {"message"}}`` at the end of the turn, and ``{"type": "error", "message"}`` for a fatal
  stream error.

The stream names no model and no cost: the model comes from ``[agent.NAME] model`` (passed as
``-m``) and the cost stays unknown. The older ``{"id", "msg": {"type": ...}}`` form
(``session_configured``, ``exec_command_end``, ``patch_apply_begin``, ``agent_message``,
``task_complete``, ``error``) is read too.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from fleetmem.integrations.adapters.base import CommandRun, Edit, Observation


def command_text(command: object) -> str | None:
    if isinstance(command, str) and command.strip():
        return command
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        return shlex.join(command)
    return None


class CodexStreamParser:
    """Reads ``codex exec --json`` lines."""

    def __init__(self) -> None:
        self.observation = Observation()
        self._commands: dict[str, str] = {}

    def feed(self, line: str) -> str | None:
        try:
            event = json.loads(line)
        except ValueError:
            return None
        if not isinstance(event, dict):
            return None
        if isinstance(event.get("msg"), Mapping):
            self._legacy(event["msg"])
        else:
            self._event(event)
        return None

    def _event(self, event: Mapping[str, Any]) -> None:
        obs = self.observation
        kind = event.get("type")
        if kind in ("thread.started", "thread.resumed"):
            if isinstance(event.get("thread_id"), str):
                obs.session_id = event["thread_id"]
        elif kind == "item.completed" and isinstance(event.get("item"), Mapping):
            self._item(event["item"])
        elif kind == "turn.completed":
            obs.finished = True
        elif kind == "turn.failed":
            error = event.get("error")
            detail = error.get("message") if isinstance(error, Mapping) else None
            obs.fail("model_error", str(detail or "turn failed"))
        elif kind == "error":
            obs.fail("model_error", str(event.get("message") or "stream error"))

    def _item(self, item: Mapping[str, Any]) -> None:
        obs = self.observation
        kind = item.get("type") or item.get("item_type")
        if kind == "command_execution":
            command = command_text(item.get("command"))
            status = item.get("status")
            if command is None or status == "declined":
                return
            code = item.get("exit_code")
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            failed = status == "failed" or (code is not None and code != 0)
            obs.add(CommandRun(command, code, failed))
        elif kind == "file_change":
            if item.get("status") == "failed":
                return
            for change in item.get("changes") or ():
                if isinstance(change, Mapping) and isinstance(change.get("path"), str):
                    obs.add(Edit(change["path"]))
        elif kind in ("agent_message", "assistant_message"):
            obs.set_result(item.get("text") if isinstance(item.get("text"), str) else None)
        elif kind == "error":
            # A non-fatal error item: the turn goes on; a failed turn says so itself.
            return

    def _legacy(self, msg: Mapping[str, Any]) -> None:
        obs = self.observation
        kind = msg.get("type")
        if kind == "session_configured":
            if isinstance(msg.get("session_id"), str):
                obs.session_id = msg["session_id"]
            if isinstance(msg.get("model"), str):
                obs.model = msg["model"]
        elif kind == "exec_command_begin":
            command = command_text(msg.get("command"))
            if command is not None and isinstance(msg.get("call_id"), str):
                self._commands[msg["call_id"]] = command
        elif kind == "exec_command_end":
            command = self._commands.pop(str(msg.get("call_id")), None)
            command = command or command_text(msg.get("command"))
            code = msg.get("exit_code")
            if command is not None and isinstance(code, int):
                obs.add(CommandRun(command, code, code != 0))
        elif kind == "patch_apply_begin" and isinstance(msg.get("changes"), Mapping):
            for path in msg["changes"]:
                if isinstance(path, str):
                    obs.add(Edit(path))
        elif kind == "agent_message":
            obs.set_result(msg.get("message") if isinstance(msg.get("message"), str) else None)
        elif kind == "task_complete":
            obs.finished = True
            last = msg.get("last_agent_message")
            obs.set_result(last if isinstance(last, str) else None)
        elif kind in ("error", "stream_error"):
            obs.fail("model_error", str(msg.get("message") or kind))

    def finish(self) -> None:
        return None


class CodexAdapter:
    """``codex exec`` with the JSON Lines event stream."""

    name = "codex"
    executable = "codex"
    needs_prompt = True

    def argv(
        self, executable: str, args: Sequence[str], model: str | None, prompt: str | None
    ) -> list[str]:
        argv = [executable, "exec", "--json", *args]
        if model:
            argv += ["--model", model]
        return [*argv, "--", prompt] if prompt is not None else argv

    def parser(self) -> CodexStreamParser:
        return CodexStreamParser()
