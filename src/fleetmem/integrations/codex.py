"""Codex: ``fleetmem install | uninstall codex`` and the session-log importer's entry point.

Installing writes one table to ``$CODEX_HOME/config.toml`` (default ``~/.codex/config.toml``)::

    [mcp_servers.fleetmem]
    command = "/path/to/fleetmem"
    args = ["mcp"]
    env_vars = ["FLEETMEM_RUN_TOKEN", "FLEETMEM_RUN_ID"]

``env_vars`` names the variables Codex forwards from its own environment to the server, so a
Codex started by ``fleetmem run`` gives its ``fleetmem mcp`` the run's token. The rest of the
file is kept byte for byte: the installer removes the lines of an earlier ``fleetmem`` table
(and its sub-tables), appends the new one, checks that the result parses as TOML and says
what it should, and keeps a backup of the old file.

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
from fleetmem.integrations.claude_code import Change, replace_file

SERVER = "fleetmem"
FORWARDED = ("FLEETMEM_RUN_TOKEN", "FLEETMEM_RUN_ID")
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(?:#.*)?$")
_OURS = re.compile(r'mcp_servers\s*\.\s*(?:fleetmem|"fleetmem"|\'fleetmem\')(?:\s*\..*)?')


def config_path(environ: Mapping[str, str]) -> Path:
    codex_home = environ.get("CODEX_HOME")
    if codex_home:
        return Path(codex_home) / "config.toml"
    return Path(environ.get("HOME") or os.path.expanduser("~")) / ".codex" / "config.toml"


def _toml_string(value: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes.
    return json.dumps(value, ensure_ascii=False)


def server_table(fleetmem: str, home: str | None) -> str:
    lines = [
        f"[mcp_servers.{SERVER}]",
        f"command = {_toml_string(fleetmem)}",
        'args = ["mcp"]',
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


def install(*, fleetmem: str, home: str | None, environ: Mapping[str, str]) -> list[Change]:
    """Register ``fleetmem mcp`` as Codex's ``fleetmem`` MCP server; idempotent."""
    path = config_path(environ)
    try:
        before: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = None
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
        return [Change(str(path), False)]
    return [replace_file(path, before, text)]


def uninstall(*, environ: Mapping[str, str]) -> list[Change]:
    """Remove the ``fleetmem`` MCP server table from Codex's configuration."""
    path = config_path(environ)
    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    _parse(before, path)
    text = _strip_ours(before)
    if text == before:
        return [Change(str(path), False)]
    text = text.rstrip("\n") + "\n" if text.strip() else ""
    _parse(text, path)
    return [replace_file(path, before, text)]
