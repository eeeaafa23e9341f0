"""Codex hooks: an interactive Codex session observed as a fleetmem run.

``fleetmem install codex`` registers ``fleetmem hook codex EVENT`` in ``$CODEX_HOME/hooks.json``
for SessionStart, UserPromptSubmit, PostToolUse and SessionEnd. Codex hands its hooks the
payloads Claude Code does (``session_id``, ``cwd``, ``transcript_path``, ``prompt``,
``tool_name`` ``Bash`` with ``tool_input.command``; docs/agents.md cites them) and reads the same
answers (``hookSpecificOutput.additionalContext`` for the model, ``systemMessage`` for the
person), so the handlers are Claude Code's (:class:`~fleetmem.integrations.claude_hooks.
ClaudeHooks`) with what differs:

- the run is ``codex-<session id>``, the id ``fleetmem runs import codex`` gives the same
  session's rollout, so importing it later finds the run already recorded;
- a SessionStart answer is fitted to what Codex takes whole (:data:`fleetmem.core.hosts.
  CODEX_SESSION`: 10,000 UTF-8 bytes);
- SessionEnd reads the session's rollout (``transcript_path``) for the commands with their
  exit codes, the patches' files, the model and the answer. Codex gives a SessionEnd hook at
  most 3 seconds, so that work is done in a detached process (:mod:`.hookmain`).

Codex runs a hook only once a person has trusted it (``/hooks`` in its TUI); the installer
says so rather than trusting fleetmem's hooks on the person's behalf.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from fleetmem.core.hosts import CODEX_SESSION
from fleetmem.errors import FleetmemError
from fleetmem.integrations.adapters.base import Observation
from fleetmem.integrations.claude_hooks import MAX_TRANSCRIPT_BYTES, ClaudeHooks
from fleetmem.integrations.codex_import import read_rollout
from fleetmem.integrations.hookstate import SessionState

log = logging.getLogger("fleetmem.hooks")

ADAPTER = "codex"


class CodexHooks(ClaudeHooks):
    integration = "codex"
    adapter = ADAPTER
    run_prefix = "codex"
    profile = CODEX_SESSION

    def _export_token(self, state: SessionState) -> None:
        """Codex offers its hooks no file to export variables through; the session's MCP
        server is attributed by its process instead (``fleetmem mcp --attach codex``)."""

    def _transcript(self, path: object, session_id: str) -> Observation:
        if not isinstance(path, str) or not os.path.isabs(path):
            return Observation(session_id=session_id)
        try:
            if os.path.getsize(path) > MAX_TRANSCRIPT_BYTES:
                log.info("hook.transcript_unreadable session_run=%s error=too_large", session_id)
                return Observation(session_id=session_id)
            observation = read_rollout(Path(path)).observation or Observation()
        except (OSError, FleetmemError) as exc:
            log.info(
                "hook.transcript_unreadable session_run=%s error=%s", session_id, type(exc).__name__
            )
            return Observation(session_id=session_id)
        observation.session_id = session_id
        return observation
