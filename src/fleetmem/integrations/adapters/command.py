"""Any program: ``COMMAND ARGS... [PROMPT]``, with an optional line protocol on stdout.

A program run by the ``command`` adapter may report what it did by printing JSON objects with
a ``fleetmem`` key, one per line; every other line is passed through to the operator's
terminal unchanged (and the last 4,000 characters of it are the result text when the program
reports none):

- ``{"fleetmem": "session", "id": "...", "model": "..."}``: its session id and served model;
- ``{"fleetmem": "edit", "path": "..."}``: a file it changed;
- ``{"fleetmem": "command", "command": "...", "exit_code": 1}``: a command it ran
  (classified like any agent's);
- ``{"fleetmem": "verify", "passed": false, "error_class": "test_failure"}``: a
  verification it ran itself;
- ``{"fleetmem": "result", "text": "...", "cost_usd": 0.12}``: its final answer and spend;
- ``{"fleetmem": "error", "reason": "agent_error"}``: why it failed (a run-record reason).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from fleetmem.integrations.adapters.base import CommandRun, Edit, Observation

TAIL_CHARS = 4000
_CLASS = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


class CommandStreamParser:
    """Reads the ``fleetmem`` line protocol; passes everything else through."""

    def __init__(self) -> None:
        self.observation = Observation()
        self._tail = ""

    def feed(self, line: str) -> str | None:
        stripped = line.strip()
        if stripped.startswith("{") and '"fleetmem"' in stripped:
            try:
                event = json.loads(stripped)
            except ValueError:
                event = None
            if isinstance(event, dict) and isinstance(event.get("fleetmem"), str):
                self._event(event)
                return None
        self._tail = (self._tail + line + "\n")[-TAIL_CHARS:]
        return line

    def _event(self, event: Mapping[str, Any]) -> None:
        obs = self.observation
        kind = event["fleetmem"]
        if kind == "session":
            if isinstance(event.get("id"), str):
                obs.session_id = event["id"]
            if isinstance(event.get("model"), str):
                obs.model = event["model"]
        elif kind == "edit" and isinstance(event.get("path"), str):
            obs.add(Edit(event["path"]))
        elif kind == "command" and isinstance(event.get("command"), str):
            code = event.get("exit_code")
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            obs.add(CommandRun(event["command"], code, code not in (0, None)))
        elif kind == "verify" and isinstance(event.get("passed"), bool):
            given = event.get("error_class")
            error_class = given if isinstance(given, str) and _CLASS.fullmatch(given) else "unknown"
            obs.add(CommandRun("", None, not event["passed"], error_class=error_class))
        elif kind == "result":
            obs.finished = True
            obs.set_result(event.get("text") if isinstance(event.get("text"), str) else None)
            cost = event.get("cost_usd")
            if (
                isinstance(cost, int | float)
                and not isinstance(cost, bool)
                and math.isfinite(cost)
                and cost >= 0
            ):
                obs.cost_usd, obs.cost_source = float(cost), "reported"
        elif kind == "error":
            obs.fail(str(event.get("reason") or "agent_error"), str(event.get("message") or ""))

    def finish(self) -> None:
        if self.observation.result_text is None:
            self.observation.set_result(self._tail.strip() or None)


class CommandAdapter:
    """A program of the operator's own; the prompt, if any, is its last argument."""

    name = "command"
    executable = ""
    needs_prompt = False

    def argv(
        self, executable: str, args: Sequence[str], model: str | None, prompt: str | None
    ) -> list[str]:
        return [executable, *args] if prompt is None else [executable, *args, prompt]

    def parser(self) -> CommandStreamParser:
        return CommandStreamParser()
