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
are copied to ``FILE.fleetmem-backup-YYYYmmddTHHMMSS`` (beside it for the user scope; under
``$FLEETMEM_HOME/backups/`` for the project scope, so no backup lands in the repository); the
new contents are written to a temporary file and renamed over it.

The project scope's files are meant to be committed, so its entries are portable: they run
``fleetmem`` from ``PATH`` and pin no home (each person's ``$FLEETMEM_HOME`` or
``~/.fleetmem`` applies). The user scope pins this executable's absolute path, and a
non-default home.

Uninstalling removes exactly what installing added: fleetmem's entries, the ``hooks`` and
``mcpServers`` tables and the files (and a ``.claude`` folder) that installing created, when
nothing else was put in them since. Installing records what it created in
``$FLEETMEM_HOME/integrations/claude-code.json``; without that record (another person's
checkout), a table or a project file left empty by the uninstall counts as fleetmem's.
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
SERVER = "fleetmem"
SERVER_ARGS = ["mcp", "--attach", "claude-code"]


@dataclass(frozen=True, slots=True)
class Change:
    """One file the installer looked at: whether it changed, and its backup if any."""

    path: str
    changed: bool
    backup: str | None = None
    removed: bool = False  # uninstall deleted the file installing had created


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


def hook_command(
    fleetmem: str,
    event: str,
    *,
    home: str | None,
    agent: str | None,
    integration: str = "claude-code",
) -> str:
    """The shell command a hook runs (Claude Code and Codex run it through a shell)."""
    parts = [shlex.quote(fleetmem)]
    if home:
        parts += ["--home", shlex.quote(home)]
    parts += ["hook", integration, event]
    if agent:
        parts += ["--agent", shlex.quote(agent)]
    return " ".join(parts)


def _ours(hook: object, marker: str) -> bool:
    return isinstance(hook, dict) and marker in f" {hook.get('command', '')} "


def _without_ours(groups: list[Any], marker: str) -> list[Any]:
    """``groups`` (one event's hook groups) without the hooks whose command holds ``marker``
    (``fleetmem … hook INTEGRATION …``); a group left empty goes, the others are kept as
    they were."""
    kept = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        inner = [h for h in group["hooks"] if not _ours(h, marker)]
        if len(inner) == len(group["hooks"]):
            kept.append(group)
        elif inner:
            kept.append({**group, "hooks": inner})
    return kept


def put_hooks(
    hooks: dict[str, Any],
    events: Mapping[str, tuple[str | None, int]],
    path: Path,
    *,
    fleetmem: str,
    home: str | None,
    agent: str | None,
    integration: str = "claude-code",
) -> None:
    """Put one fleetmem hook group per event of ``events`` (event -> (matcher, timeout))
    into a ``hooks`` table, in place of any earlier fleetmem entry and beside the others."""
    marker = f" hook {integration} "
    for event, (matcher, timeout) in events.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{path}: hooks.{event}", "<value>", "is not a list; not touched")
        command = hook_command(fleetmem, event, home=home, agent=agent, integration=integration)
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command,
                                            "timeout": timeout}]}  # fmt: skip
        if matcher is not None:
            group = {"matcher": matcher, **group}
        hooks[event] = [*_without_ours(groups, marker), group]


def drop_hooks(hooks: dict[str, Any], integration: str = "claude-code") -> None:
    """Remove fleetmem's hooks of ``integration`` from a ``hooks`` table, in place; an event
    left with no group goes."""
    marker = f" hook {integration} "
    for event in list(hooks):
        groups = hooks[event]
        if isinstance(groups, list):
            kept = _without_ours(groups, marker)
            if kept:
                hooks[event] = kept
            elif len(kept) != len(groups):
                del hooks[event]


def load_json(path: Path) -> dict[str, Any]:
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


def write_if_changed(
    path: Path, before: str | None, data: Mapping[str, Any], *, backup_dir: Path | None = None
) -> Change:
    """Write ``data`` as JSON when it differs from ``before`` (the file's text, or None when
    it did not exist), keeping a backup of ``before``."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if before is not None and _same(before, data):
        return Change(str(path), False)
    return replace_file(path, before, text, backup_dir=backup_dir)


def _same(before: str, data: Mapping[str, Any]) -> bool:
    try:
        return bool(json.loads(before) == data)
    except ValueError:
        return False


def replace_file(
    path: Path, before: str | None, text: str, *, backup_dir: Path | None = None
) -> Change:
    """Write ``text`` to ``path`` atomically, keeping ``before`` as a backup beside it (or in
    ``backup_dir``, named after the whole path)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = 0o600 if path.name == ".claude.json" else 0o644
    if before is not None:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        if backup_dir is None:
            backup_path = path.with_name(f"{path.name}.fleetmem-backup-{stamp}")
        else:
            backup_dir.mkdir(parents=True, exist_ok=True)
            flat = str(path.resolve()).strip("/").replace("/", "__")
            backup_path = backup_dir / f"{flat}.fleetmem-backup-{stamp}"
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


def read_text(path: Path) -> str | None:
    """The file's text, or None when there is no such file."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


@dataclass(frozen=True, slots=True)
class Target:
    """Where an install writes: the scope's two files, and how its entries are made."""

    settings: Path
    mcp: Path
    portable: bool  # project scope: commands from PATH, no home pinned
    backup_dir: Path | None  # None: beside each file
    record: Path | None  # what installing created, for an exact uninstall


def target(
    scope: str, project: Path | None, environ: Mapping[str, str], *, state_dir: Path | None
) -> Target:
    """The files and rules for ``scope``; ``state_dir`` is fleetmem's home (backups and the
    install record go under it), or None to keep neither there."""
    settings, mcp = paths_for(scope, project, environ)
    portable = scope == "project"
    return Target(
        settings=settings,
        mcp=mcp,
        portable=portable,
        backup_dir=state_dir / "backups" if portable and state_dir is not None else None,
        record=state_dir / "integrations" / "claude-code.json" if state_dir is not None else None,
    )


def _load_record(where: Target) -> dict[str, Any]:
    if where.record is None:
        return {}
    try:
        data = json.loads(where.record.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_record(where: Target, record: dict[str, Any]) -> None:
    if where.record is None:
        return
    if not record:
        where.record.unlink(missing_ok=True)
        return
    where.record.parent.mkdir(parents=True, exist_ok=True)
    where.record.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", "utf-8")


def _note_created(
    record: dict[str, Any], path: Path, before: str | None, data: dict[str, Any], key: str
) -> None:
    """Remember, at the first install only, whether the file, its folder and ``key`` existed
    (``data`` is the file as loaded, before install touches it)."""
    if str(path) in record:
        return
    record[str(path)] = {
        "file": before is None,
        "folder": not path.parent.exists(),
        "table": key not in data,
    }


def install(
    *,
    scope: str,
    project: Path | None,
    fleetmem: str,
    home: str | None,
    agent: str | None,
    environ: Mapping[str, str],
    state_dir: Path | None = None,
) -> list[Change]:
    """Register the hooks and the MCP server; idempotent. The project scope writes portable
    entries (``fleetmem`` from PATH, no home) whatever ``fleetmem`` and ``home`` say."""
    where = target(scope, project, environ, state_dir=state_dir)
    if where.portable:
        fleetmem, home = "fleetmem", None
    record = _load_record(where)
    before = read_text(where.settings)
    settings = load_json(where.settings)
    _note_created(record, where.settings, before, settings, "hooks")
    hooks = _table(settings, "hooks", where.settings)
    put_hooks(hooks, HOOKS, where.settings, fleetmem=fleetmem, home=home, agent=agent)
    mcp_before = read_text(where.mcp)
    mcp = load_json(where.mcp)
    _note_created(record, where.mcp, mcp_before, mcp, "mcpServers")
    servers = _table(mcp, "mcpServers", where.mcp)
    # alwaysLoad: Claude Code connects this server before the session's first turn (others
    # may connect while it runs), and keeps its tools in the list rather than behind a tool
    # search. The SessionStart context names this server's resource for what it left out, and
    # a first turn that read it before the server connected was told the tool is not enabled.
    server: dict[str, Any] = {
        "type": "stdio",
        "command": fleetmem,
        "args": list(SERVER_ARGS),
        "alwaysLoad": True,
    }
    if home:
        server["env"] = {"FLEETMEM_HOME": home}
    servers[SERVER] = server
    # The record first: a failed write below leaves an uninstall that still knows.
    _save_record(where, record)
    return [
        write_if_changed(where.settings, before, settings, backup_dir=where.backup_dir),
        write_if_changed(where.mcp, mcp_before, mcp, backup_dir=where.backup_dir),
    ]


def uninstall(
    *,
    scope: str,
    project: Path | None,
    environ: Mapping[str, str],
    state_dir: Path | None = None,
) -> list[Change]:
    """Remove fleetmem's hooks and MCP server entry, and what installing created; nothing
    else."""
    where = target(scope, project, environ, state_dir=state_dir)
    record = _load_record(where)
    changes = []
    before = read_text(where.settings)
    if before is not None:
        settings = load_json(where.settings)
        hooks = settings.get("hooks")
        if isinstance(hooks, dict):
            drop_hooks(hooks)
        changes.append(_finish(where, record, where.settings, before, settings, "hooks"))
    mcp_before = read_text(where.mcp)
    if mcp_before is not None:
        mcp = load_json(where.mcp)
        servers = mcp.get("mcpServers")
        if isinstance(servers, dict) and _is_fleetmem_server(servers.get(SERVER)):
            del servers[SERVER]
        changes.append(_finish(where, record, where.mcp, mcp_before, mcp, "mcpServers"))
    _save_record(where, record)
    return changes


def _finish(
    where: Target,
    record: dict[str, Any],
    path: Path,
    before: str,
    data: dict[str, Any],
    key: str,
) -> Change:
    """Write what uninstall left, dropping the table, the file and the folder that installing
    created once they hold nothing else."""
    created = record.pop(str(path), None)
    # Without a record only the project scope's files count as created (never ~/.claude.json).
    default = {"file": where.portable, "folder": False, "table": True}
    made = created if isinstance(created, dict) else default
    if made.get("table") and data.get(key) == {}:
        del data[key]
    if made.get("file") and data == {}:
        path.unlink()
        if made.get("folder") and path.parent.is_dir() and not any(path.parent.iterdir()):
            path.parent.rmdir()
        return Change(str(path), True, removed=True)
    return write_if_changed(path, before, data, backup_dir=where.backup_dir)


def _is_fleetmem_server(server: object) -> bool:
    if not isinstance(server, dict):
        return False
    command = str(server.get("command", ""))
    # Entries written before ``--attach`` existed are fleetmem's too.
    args = server.get("args")
    return os.path.basename(command).startswith("fleetmem") and args in (["mcp"], SERVER_ARGS)
