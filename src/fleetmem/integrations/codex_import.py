"""``fleetmem runs import codex PATH``: Codex session logs (rollouts) as run records.

Codex writes each session to ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, one JSON
object per line, ``{"timestamp", "type", "payload"}`` (docs/agents.md cites the format):

- ``session_meta``: ``payload.id`` (the session), ``cwd``, ``git.branch``,
  ``git.repository_url``;
- ``turn_context``: ``payload.model``;
- ``response_item``: ``function_call`` (``name`` ``shell``, ``shell_command``,
  ``exec_command``, ``container.exec`` or ``apply_patch``, with JSON ``arguments`` and a
  ``call_id``), its ``function_call_output`` (an ``output`` whose ``metadata.exit_code``,
  or an ``Exit code: N`` / ``exited with code N`` line, says how the command ended),
  ``custom_tool_call`` ``apply_patch`` with the patch as ``input``, ``local_shell_call``, and
  assistant ``message`` items whose ``output_text`` is the answer;
- ``event_msg``: ``agent_message`` (the answer), ``error``.

Each file is one run ``codex-<session id>`` (re-importing it is harmless: ``duplicate``; a
session whose hooks recorded it already is ``skipped:already_recorded``).
Edits come from the patches' ``*** Add File:``, ``*** Update File:``, ``*** Delete File:``
and ``*** Move to:`` lines; commands are classified like any agent's. A session whose
directory is not on this machine is attributed through its repository URL.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from fleetmem.config import VerifyPattern
from fleetmem.core import labels
from fleetmem.core.scope import repo_key_from_remote
from fleetmem.errors import Conflict, FleetmemError, InvalidInput
from fleetmem.integrations.adapters.base import CommandRun, Edit, Observation
from fleetmem.integrations.adapters.codex import command_text
from fleetmem.integrations.records import (
    ProcessEnd,
    SessionPart,
    build_record,
    decide_outcome,
    verifications,
)
from fleetmem.service.bootstrap import App

SHELL_TOOLS = frozenset({"shell", "shell_command", "exec_command", "container.exec", "local_shell"})
MAX_FILE_BYTES = 256 * 1024 * 1024
_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$", re.M)
_EXIT = re.compile(r"(?:Exit code|exited with code|exit_code)[:=]?\s*(-?\d+)", re.I)


@dataclass
class CodexSession:
    """What one rollout file says about its session."""

    path: str
    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    repository_url: str | None = None
    started: float | None = None
    ended: float | None = None
    observation: Observation | None = None


@dataclass(frozen=True, slots=True)
class Imported:
    path: str
    run_id: str | None
    status: str  # recorded, pending, duplicate, skipped:<reason>, or error: <message>


def _time(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as fh:
        for raw in fh.read(MAX_FILE_BYTES).splitlines():
            try:
                item = json.loads(raw)
            except ValueError:
                continue
            if isinstance(item, dict):
                yield item


def patch_paths(patch: str) -> list[str]:
    """Files an ``apply_patch`` patch adds, updates, deletes or moves to."""
    return [m.group(1).strip() for m in _PATCH_PATH.finditer(patch) if m.group(1).strip()]


def _exit_code(output: object) -> int | None:
    if isinstance(output, str):
        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        if isinstance(parsed, Mapping):
            meta = parsed.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, Mapping) else None
            if isinstance(code, int):
                return code
            output = parsed.get("output", "")
        found = _EXIT.search(str(output)[:4000])
        return int(found.group(1)) if found else None
    return None


class _Reader:
    def __init__(self, path: Path) -> None:
        self.session = CodexSession(path=str(path), observation=Observation())
        self.calls: dict[str, str] = {}  # call_id -> command

    @property
    def obs(self) -> Observation:
        assert self.session.observation is not None
        return self.session.observation

    def line(self, item: Mapping[str, Any]) -> None:
        at = _time(item.get("timestamp"))
        if at is not None:
            s = self.session
            s.started = at if s.started is None else min(s.started, at)
            s.ended = at if s.ended is None else max(s.ended, at)
        payload = item.get("payload")
        if not isinstance(payload, Mapping):
            return
        kind = item.get("type")
        if kind == "session_meta":
            self._meta(payload)
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            self.obs.model = payload["model"]
        elif kind == "response_item":
            self._response(payload)
        elif kind == "event_msg":
            if payload.get("type") == "agent_message":
                message = payload.get("message")
                self.obs.set_result(message if isinstance(message, str) else None)
            elif payload.get("type") == "error":
                self.obs.fail("model_error", str(payload.get("message") or "error"))

    def _meta(self, payload: Mapping[str, Any]) -> None:
        s = self.session
        if isinstance(payload.get("id"), str):
            s.session_id = payload["id"]
        if isinstance(payload.get("cwd"), str):
            s.cwd = payload["cwd"]
        git = payload.get("git")
        if isinstance(git, Mapping):
            s.branch = git.get("branch") if isinstance(git.get("branch"), str) else None
            url = git.get("repository_url")
            s.repository_url = url if isinstance(url, str) else None

    def _response(self, payload: Mapping[str, Any]) -> None:
        kind = payload.get("type")
        call_id = str(payload.get("call_id") or payload.get("id") or "")
        if kind == "function_call":
            self._function_call(str(payload.get("name")), payload.get("arguments"), call_id)
        elif kind == "custom_tool_call" and payload.get("name") == "apply_patch":
            self._edits(payload.get("input"))
        elif kind == "local_shell_call":
            action = payload.get("action")
            command = command_text(action.get("command")) if isinstance(action, Mapping) else None
            if command is not None:
                self.calls[call_id] = command
        elif kind == "function_call_output":
            command = self.calls.pop(call_id, None)
            if command is not None:
                code = _exit_code(payload.get("output"))
                self.obs.add(CommandRun(command, code, code not in (0, None)))
        elif kind == "message" and payload.get("role") == "assistant":
            texts = [
                str(c.get("text"))
                for c in payload.get("content") or ()
                if isinstance(c, Mapping) and c.get("type") == "output_text"
            ]
            if texts:
                self.obs.set_result("\n".join(texts))

    def _function_call(self, name: str, arguments: object, call_id: str) -> None:
        try:
            args = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            return
        if not isinstance(args, Mapping):
            return
        if name == "apply_patch":
            self._edits(args.get("input") or args.get("patch"))
            return
        if name not in SHELL_TOOLS:
            return
        command = command_text(args.get("command") if "command" in args else args.get("cmd"))
        if command is None:
            return
        words = args.get("command")
        if isinstance(words, list) and words and words[0] == "apply_patch":
            self._edits(words[-1])
            return
        if command.lstrip().startswith("apply_patch") and "*** Begin Patch" in command:
            self._edits(command)  # a patch handed to the shell tool (apply_patch <<'EOF')
            return
        self.calls[call_id] = command

    def _edits(self, patch: object) -> None:
        if isinstance(patch, str):
            for path in patch_paths(patch):
                self.obs.add(Edit(path))


def read_rollout(path: Path) -> CodexSession:
    """The session a rollout file describes; InvalidInput when it is not one."""
    reader = _Reader(path)
    for item in _lines(path):
        reader.line(item)
    session = reader.session
    if session.session_id is None or session.cwd is None or not os.path.isabs(session.cwd):
        raise InvalidInput(str(path), "<file>", "no session_meta with an id and an absolute cwd")
    if session.started is None:
        raise InvalidInput(str(path), "<file>", "no timestamps")
    reader.obs.session_id = session.session_id
    return session


def record_for(
    session: CodexSession, *, agent: str, patterns: Sequence[VerifyPattern] = ()
) -> dict[str, Any]:
    """The run record of an imported Codex session."""
    obs = session.observation or Observation()
    checks = verifications(obs.commands(), patterns)
    outcome = decide_outcome(ProcessEnd(returncode=0), obs, checks)
    assert session.session_id is not None and session.cwd is not None
    assert session.started is not None
    record = build_record(
        run_id=f"codex-{session.session_id}",
        agent=agent,
        adapter="codex",
        started_at=session.started,
        ended_at=session.ended or session.started,
        outcome=outcome,
        parts=[SessionPart(obs, session.cwd, tuple(patterns))],
        spawned=True,
        prompt=None,
    )
    if not os.path.isdir(session.cwd) and session.repository_url:
        # Not checked out here: attribute it by its remote, with cwd-relative edit paths.
        key = repo_key_from_remote(session.repository_url)
        for entry in record["sessions"]:
            if key is not None:
                entry["repo"] = key
                entry["branch"] = labels.coerce("branch", session.branch)
            for event in entry["events"]:
                if event["type"] == "edit" and event["path"].startswith(session.cwd + "/"):
                    event["path"] = os.path.relpath(event["path"], session.cwd)
    return record


def rollout_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*.jsonl") if p.is_file())
    if path.is_file():
        return [path]
    raise InvalidInput("path", str(path), "is neither a file nor a directory")


def import_sessions(app: App, path: Path, *, agent: str = "codex") -> list[Imported]:
    """Import every rollout under ``path``; one result per file, errors included."""
    patterns = app.settings.agent(agent).verify_patterns
    results = []
    for file in rollout_files(path):
        try:
            session = read_rollout(file)
            record = record_for(session, agent=agent, patterns=patterns)
            ingested = app.memory.ingest_run(record)
            results.append(Imported(str(file), ingested.run_id, ingested.status))
        except Conflict:
            # The session's run is stored already, as its hooks recorded it when it ended
            # (or from another copy of this rollout): that record stands.
            results.append(Imported(str(file), record["run_id"], "skipped:already_recorded"))
        except (FleetmemError, OSError) as exc:
            results.append(Imported(str(file), None, f"error: {exc}"))
    return results
