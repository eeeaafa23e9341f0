"""``fleetmem install | uninstall claude-code``: hooks and the MCP server in Claude Code's files.

| scope | hooks | MCP server |
|---|---|---|
| ``user`` (default) | ``~/.claude/settings.json`` | ``~/.claude.json`` (``mcpServers``) |
| ``project`` | ``<project>/.claude/settings.json`` | ``<project>/.mcp.json`` (``mcpServers``) |

(``$CLAUDE_CONFIG_DIR`` replaces ``~/.claude`` and holds ``.claude.json`` when set.)

Installing adds one hook group per event, each running ``fleetmem hook claude-code EVENT``,
and an ``mcpServers.fleetmem`` stdio entry running ``fleetmem mcp --attach claude-code`` (Claude
Code starts it without a run token; it finds the run its SessionStart hook opened, see
:mod:`fleetmem.integrations.attach`). It is idempotent: the
entries fleetmem wrote before are replaced, so installing twice changes nothing the second
time. Nothing else in the files is touched. Before a file is changed, its current contents
are copied to ``FILE.fleetmem-backup-YYYYmmddTHHMMSS``; the new contents are written to a
temporary file and renamed over it. Uninstalling removes exactly fleetmem's entries.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleetmem.errors import InvalidInput

#: event -> (matcher, Claude Code's timeout for the hook in seconds)
HOOKS: Mapping[str, tuple[str | None, int]] = {
    "SessionStart": (None, 10),
    "UserPromptSubmit": (None, 10),
    "PostToolUse": ("Edit|MultiEdit|Write|NotebookEdit|Bash", 10),
    # A failing tool call (a command that exits non-zero) fires this instead of PostToolUse:
    # without it a session whose tests failed could be recorded as succeeded.
    "PostToolUseFailure": ("Bash", 10),
    "SessionEnd": (None, 30),
}
MARKER = " hook claude-code "
SERVER = "fleetmem"
SERVER_ARGS = ["mcp", "--attach", "claude-code"]


@dataclass(frozen=True, slots=True)
class Change:
    """One file the installer looked at: whether it changed, and its backup if any."""

    path: str
    changed: bool
    backup: str | None = None


def config_dir(environ: Mapping[str, str]) -> Path:
    custom = environ.get("CLAUDE_CONFIG_DIR")
    if custom:
        return Path(custom)
    return Path(environ.get("HOME") or os.path.expanduser("~")) / ".claude"


def paths_for(scope: str, project: Path | None, environ: Mapping[str, str]) -> tuple[Path, Path]:
    """(settings file with the hooks, file with ``mcpServers``) for ``scope``."""
    if scope == "user":
        directory = config_dir(environ)
        if environ.get("CLAUDE_CONFIG_DIR"):
            return directory / "settings.json", directory / ".claude.json"
        home = Path(environ.get("HOME") or os.path.expanduser("~"))
        return directory / "settings.json", home / ".claude.json"
    if scope == "project":
        if project is None:
            raise InvalidInput("project", None, "the project scope needs a project directory")
        return project / ".claude" / "settings.json", project / ".mcp.json"
    raise InvalidInput("scope", scope, "must be user or project")


def hook_command(fleetmem: str, event: str, *, home: str | None, agent: str | None) -> str:
    """The shell command a hook runs (Claude Code runs it through a shell)."""
    parts = [shlex.quote(fleetmem)]
    if home:
        parts += ["--home", shlex.quote(home)]
    parts += ["hook", "claude-code", event]
    if agent:
        parts += ["--agent", shlex.quote(agent)]
    return " ".join(parts)


def _ours(hook: object) -> bool:
    return isinstance(hook, dict) and MARKER in f" {hook.get('command', '')} "


def _without_ours(groups: list[Any]) -> list[Any]:
    kept = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        inner = [h for h in group["hooks"] if not _ours(h)]
        if len(inner) == len(group["hooks"]):
            kept.append(group)
        elif inner:
            kept.append({**group, "hooks": inner})
    return kept


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise InvalidInput(str(path), "<file>", f"is not valid JSON ({exc}); not touched") from None
    if not isinstance(data, dict):
        raise InvalidInput(str(path), "<file>", "is not a JSON object; not touched")
    return data


def _table(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise InvalidInput(f"{path}: {key}", "<value>", "is not a JSON object; not touched")
    return value


def write_if_changed(path: Path, before: str | None, data: Mapping[str, Any]) -> Change:
    """Write ``data`` as JSON when it differs from ``before`` (the file's text, or None when
    it did not exist), keeping a backup of ``before``."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if before is not None and _same(before, data):
        return Change(str(path), False)
    return replace_file(path, before, text)


def _same(before: str, data: Mapping[str, Any]) -> bool:
    try:
        return bool(json.loads(before) == data)
    except ValueError:
        return False


def replace_file(path: Path, before: str | None, text: str) -> Change:
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = 0o600 if path.name == ".claude.json" else 0o644
    if before is not None:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        backup_path = path.with_name(f"{path.name}.fleetmem-backup-{stamp}")
        backup_path.write_text(before, encoding="utf-8")
        mode = path.stat().st_mode & 0o777
        os.chmod(backup_path, mode)
        backup = str(backup_path)
    tmp = path.with_name(f".{path.name}.fleetmem-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return Change(str(path), True, backup)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def install(
    *,
    scope: str,
    project: Path | None,
    fleetmem: str,
    home: str | None,
    agent: str | None,
    environ: Mapping[str, str],
) -> list[Change]:
    """Register the hooks and the MCP server; idempotent."""
    settings_path, mcp_path = paths_for(scope, project, environ)
    before = _read(settings_path)
    settings = _load(settings_path)
    hooks = _table(settings, "hooks", settings_path)
    for event, (matcher, timeout) in HOOKS.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{settings_path}: hooks.{event}", "<value>", "is not a list")
        entry = {
            "type": "command",
            "command": hook_command(fleetmem, event, home=home, agent=agent),
            "timeout": timeout,
        }
        group: dict[str, Any] = {"hooks": [entry]}
        if matcher is not None:
            group = {"matcher": matcher, **group}
        hooks[event] = [*_without_ours(groups), group]
    changes = [write_if_changed(settings_path, before, settings)]
    mcp_before = _read(mcp_path)
    mcp = _load(mcp_path)
    servers = _table(mcp, "mcpServers", mcp_path)
    server: dict[str, Any] = {"type": "stdio", "command": fleetmem, "args": list(SERVER_ARGS)}
    if home:
        server["env"] = {"FLEETMEM_HOME": home}
    servers[SERVER] = server
    changes.append(write_if_changed(mcp_path, mcp_before, mcp))
    return changes


def uninstall(*, scope: str, project: Path | None, environ: Mapping[str, str]) -> list[Change]:
    """Remove fleetmem's hooks and MCP server entry, and nothing else."""
    settings_path, mcp_path = paths_for(scope, project, environ)
    changes = []
    before = _read(settings_path)
    if before is not None:
        settings = _load(settings_path)
        hooks = settings.get("hooks")
        if isinstance(hooks, dict):
            for event in list(hooks):
                groups = hooks[event]
                if isinstance(groups, list):
                    kept = _without_ours(groups)
                    if kept:
                        hooks[event] = kept
                    elif len(kept) != len(groups):
                        del hooks[event]
            if not hooks:
                del settings["hooks"]
        changes.append(write_if_changed(settings_path, before, settings))
    mcp_before = _read(mcp_path)
    if mcp_before is not None:
        mcp = _load(mcp_path)
        servers = mcp.get("mcpServers")
        if isinstance(servers, dict) and _is_fleetmem_server(servers.get(SERVER)):
            del servers[SERVER]
        changes.append(write_if_changed(mcp_path, mcp_before, mcp))
    return changes


def _is_fleetmem_server(server: object) -> bool:
    if not isinstance(server, dict):
        return False
    command = str(server.get("command", ""))
    # Entries written before ``--attach`` existed are fleetmem's too.
    args = server.get("args")
    return os.path.basename(command).startswith("fleetmem") and args in (["mcp"], SERVER_ARGS)
