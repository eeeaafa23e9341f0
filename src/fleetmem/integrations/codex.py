"""Codex: ``fleetmem install | uninstall codex`` and the session-log importer's entry point.

Installing writes two things under ``$CODEX_HOME`` (default ``~/.codex``). One table in
``config.toml``::

    [mcp_servers.fleetmem]
    command = "/path/to/fleetmem"
    args = ["mcp", "--attach", "codex"]
    env_vars = ["FLEETMEM_RUN_TOKEN", "FLEETMEM_RUN_ID"]

``env_vars`` names the variables Codex forwards from its own environment to the server, so a
Codex started by ``fleetmem run`` gives its ``fleetmem mcp`` the run's token; in a session
started by the person, ``--attach codex`` finds the run the session's SessionStart hook
opened (:mod:`fleetmem.integrations.attach`). The rest of the file is kept byte for byte: the
installer removes the lines of an earlier ``fleetmem`` table (and its sub-tables), appends the
new one, checks that the result parses as TOML and says what it should, and keeps a backup of
the old file.

And one hook per event in ``hooks.json`` (SessionStart, UserPromptSubmit, PostToolUse for
``Bash``, SessionEnd), each running ``fleetmem hook codex EVENT``
(:mod:`fleetmem.integrations.codex_hooks`); other hooks in the file are kept. Codex runs a new
or changed hook only once the person has trusted it in ``/hooks``: the installer leaves that
review to them. ``uninstall`` removes exactly these entries, and the file if installing
created it and nothing else is left in it.

``fleetmem runs import codex PATH`` is in :mod:`fleetmem.integrations.codex_import`.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fleetmem.errors import InvalidInput
from fleetmem.integrations.claude_code import (
    Change,
    drop_hooks,
    load_json,
    put_hooks,
    read_text,
    replace_file,
    write_if_changed,
)

SERVER = "fleetmem"
SERVER_ARGS = ("mcp", "--attach", "codex")
FORWARDED = ("FLEETMEM_RUN_TOKEN", "FLEETMEM_RUN_ID")
#: event -> (matcher, the hook's timeout in seconds). Codex clamps a SessionEnd hook to 3 s;
#: fleetmem's answers at once and records the session in a detached process.
HOOKS: Mapping[str, tuple[str | None, int]] = {
    "SessionStart": (None, 10),
    "UserPromptSubmit": (None, 10),
    "PostToolUse": ("Bash", 10),
    "SessionEnd": (None, 3),
}
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(?:#.*)?$")
_OURS = re.compile(r'mcp_servers\s*\.\s*(?:fleetmem|"fleetmem"|\'fleetmem\')(?:\s*\..*)?')


def codex_home(environ: Mapping[str, str]) -> Path:
    custom = environ.get("CODEX_HOME")
    if custom:
        return Path(custom)
    return Path(environ.get("HOME") or os.path.expanduser("~")) / ".codex"


def config_path(environ: Mapping[str, str]) -> Path:
    return codex_home(environ) / "config.toml"


def hooks_path(environ: Mapping[str, str]) -> Path:
    return codex_home(environ) / "hooks.json"


def _toml_string(value: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes.
    return json.dumps(value, ensure_ascii=False)


def server_table(fleetmem: str, home: str | None) -> str:
    lines = [
        f"[mcp_servers.{SERVER}]",
        f"command = {_toml_string(fleetmem)}",
        "args = [" + ", ".join(_toml_string(a) for a in SERVER_ARGS) + "]",
        "env_vars = [" + ", ".join(_toml_string(v) for v in FORWARDED) + "]",
    ]
    if home:
        lines.append(f"env = {{ FLEETMEM_HOME = {_toml_string(home)} }}")
    return "\n".join(lines) + "\n"


def _strip_ours(text: str) -> str:
    """``text`` without the lines of ``[mcp_servers.fleetmem]`` and its sub-tables."""
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header is not None:
            skipping = _OURS.fullmatch(header.group(1)) is not None
        if not skipping:
            out.append(line)
    return "".join(out)


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(str(path), "<file>", f"is not valid TOML ({exc}); not touched") from None


def _server(data: Mapping[str, Any]) -> object:
    servers = data.get("mcp_servers")
    return servers.get(SERVER) if isinstance(servers, Mapping) else None


def install(
    *, fleetmem: str, home: str | None, agent: str | None = None, environ: Mapping[str, str]
) -> list[Change]:
    """Register ``fleetmem mcp`` as Codex's ``fleetmem`` MCP server and fleetmem's hooks;
    idempotent."""
    return [
        _install_server(fleetmem, home, environ),
        _install_hooks(fleetmem, home, agent, environ),
    ]


def _install_hooks(
    fleetmem: str, home: str | None, agent: str | None, environ: Mapping[str, str]
) -> Change:
    path = hooks_path(environ)
    before = read_text(path)
    data = load_json(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f"{path}: hooks", "<value>", "is not a JSON object; not touched")
    put_hooks(hooks, HOOKS, path, fleetmem=fleetmem, home=home, agent=agent, integration="codex")
    return write_if_changed(path, before, data)


def _uninstall_hooks(environ: Mapping[str, str]) -> Change | None:
    path = hooks_path(environ)
    before = read_text(path)
    if before is None:
        return None
    data = load_json(path)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        drop_hooks(hooks, "codex")
        if not hooks:
            del data["hooks"]
    if not data:  # nothing but fleetmem's hooks was ever in it
        path.unlink()
        return Change(str(path), True, removed=True)
    return write_if_changed(path, before, data)


def _install_server(fleetmem: str, home: str | None, environ: Mapping[str, str]) -> Change:
    path = config_path(environ)
    before = read_text(path)
    current = before or ""
    _parse(current, path)
    kept = _strip_ours(current)
    if _server(_parse(kept, path)) is not None:
        raise InvalidInput(
            str(path),
            "mcp_servers.fleetmem",
            "is defined in a form the installer does not edit (an inline or dotted table); "
            "remove it by hand and install again",
        )
    kept = kept.rstrip("\n") + "\n" if kept.strip() else ""
    table = server_table(fleetmem, home)
    text = kept + ("\n" if kept else "") + table
    if _server(_parse(text, path)) != _server(tomllib.loads(table)):
        raise InvalidInput(str(path), "<file>", "the edited file would not parse as intended")
    if before == text:
        return Change(str(path), False)
    return replace_file(path, before, text)


def uninstall(*, environ: Mapping[str, str]) -> list[Change]:
    """Remove the ``fleetmem`` MCP server table from Codex's configuration, and fleetmem's
    hooks from its ``hooks.json``."""
    return [c for c in (_uninstall_server(environ), _uninstall_hooks(environ)) if c]


def _uninstall_server(environ: Mapping[str, str]) -> Change | None:
    path = config_path(environ)
    before = read_text(path)
    if before is None:
        return None
    _parse(before, path)
    text = _strip_ours(before)
    if text == before:
        return Change(str(path), False)
    text = text.rstrip("\n") + "\n" if text.strip() else ""
    _parse(text, path)
    return replace_file(path, before, text)
