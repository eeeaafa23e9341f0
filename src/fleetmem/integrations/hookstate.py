"""What one hooked session's hooks (Claude Code's or Codex's) share between their processes.

Each hook is its own short-lived process, so the run a SessionStart hook opened (its id, its
token, when it started, the git snapshot, the briefing it gave) is kept in a small file under
``$FLEETMEM_HOME/hooks/<integration>/``, readable by the owner only (it holds the run token), and
the edits and commands PostToolUse hooks report are appended to a JSON Lines file beside it.
SessionEnd reads both and removes them. File names are a hash of the session id, so no
session id can name a path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATE_DIR = "hooks"
#: A file heartbeated this recently is not heartbeated again by the next edit of it: the
#: run's presence already shows it, and the edit is noted for SessionEnd either way.
HEARTBEAT_FRESH_S = 30.0
MAX_EVENTS = 20_000


@dataclass
class SessionState:
    """The run behind one hooked session."""

    session_id: str
    agent: str
    run_id: str
    token: str
    opened_at: float
    cwd: str
    root: str | None = None
    tree: str | None = None
    #: path -> when the run was last heartbeated with it (time.time()): a PostToolUse for a
    #: file reported moments ago only notes the edit, without opening the store.
    heartbeats: dict[str, float] = field(default_factory=dict)
    #: The session's transcript (Claude Code's JSON Lines, Codex's rollout), as SessionStart
    #: named it: what a session that never reached SessionEnd is recorded from.
    transcript: str | None = None
    #: The agent process the session lives in (pid and start time, see :mod:`.attach`), so a
    #: session whose process is gone is known to be over.
    owner_pid: int | None = None
    owner_started: str | None = None


def _key(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]


class StateFiles:
    """The state and event files of one integration's sessions under one fleetmem home."""

    def __init__(self, home: Path, integration: str = "claude-code") -> None:
        self.directory = home / STATE_DIR / integration

    def _paths(self, session_id: str) -> tuple[Path, Path]:
        key = _key(session_id)
        return self.directory / f"{key}.json", self.directory / f"{key}.events.jsonl"

    def load(self, session_id: str) -> SessionState | None:
        state_path, _ = self._paths(session_id)
        try:
            data = json.loads(state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("session_id") != session_id:
            return None
        try:
            return SessionState(**data)
        except TypeError:
            return None

    def save(self, state: SessionState) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        state_path, _ = self._paths(state.session_id)
        tmp = state_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(asdict(state), fh)
        os.replace(tmp, state_path)

    def append_event(self, session_id: str, event: dict[str, Any]) -> None:
        """Append one event (one ``write`` of one line, so concurrent hooks do not interleave)."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        _, events_path = self._paths(session_id)
        line = (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8")
        fd = os.open(events_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def events(self, session_id: str) -> list[dict[str, Any]]:
        _, events_path = self._paths(session_id)
        out: list[dict[str, Any]] = []
        try:
            with events_path.open(encoding="utf-8") as fh:
                for line in fh:
                    with contextlib.suppress(ValueError):
                        item = json.loads(line)
                        if isinstance(item, dict):
                            out.append(item)
                    if len(out) >= MAX_EVENTS:
                        break
        except OSError:
            return []
        return out

    def remove(self, session_id: str) -> None:
        for path in (*self._paths(session_id), self._claim_path(session_id)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _claim_path(self, session_id: str) -> Path:
        return self.directory / f"{_key(session_id)}.closing"

    def claim(self, session_id: str) -> bool:
        """Take the closing of a session whose agent is gone: True for exactly one caller
        (the file is created exclusively), so two hooks never record the same session."""
        try:
            fd = os.open(self._claim_path(session_id), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:  # FileExistsError: another hook has it
            return False
        os.close(fd)
        return True

    def sessions(self) -> list[SessionState]:
        """Every session with a state file (in no particular order)."""
        found = []
        try:
            paths = list(self.directory.glob("*.json"))
        except OSError:
            return []
        for path in paths:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                found.append(SessionState(**data))
            except (OSError, ValueError, TypeError):
                continue
        return found
