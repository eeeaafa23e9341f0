"""What ``fleetmem run AGENT`` starts: the agent's adapter, executable, directory and prompt.

The operator's prompt comes from ``--prompt``, else from exactly one of ``[agent.NAME]``
``prompt``, ``prompt_file``, ``prompt_template`` or ``prompt_template_file``. Files are read as
bytes and decoded as UTF-8 without any newline translation, so the prompt is the file's
contents byte for byte; a relative path is taken from ``$FLEETMEM_HOME``. A template is
rendered with the run's variables (``core.prompt_template``). The rendered prompt is the one
stored with the run (REQ-20); a briefing is prepended to it only on its way into argv.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fleetmem.config import MAX_PROMPT_CHARS, AgentSettings, Settings, VerifyPattern
from fleetmem.core import prompt_template
from fleetmem.errors import ConfigError, InvalidInput
from fleetmem.integrations.adapters import Adapter, get_adapter

#: Agents named like an adapter use it when they do not say otherwise.
_IMPLIED_ADAPTERS = ("claude-code", "codex")
_AGENT = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """Everything the supervisor needs to start one agent."""

    name: str
    adapter: Adapter
    executable: str
    args: tuple[str, ...]
    model: str | None
    workdir: str
    env: Mapping[str, str]
    memory_briefing: bool
    verify_patterns: tuple[VerifyPattern, ...]
    timeout_s: float | None
    kill_grace_s: float
    respawns: int
    settings: AgentSettings


def _origin(settings: Settings, name: str, key: str) -> str | None:
    return settings.origins.get(f"agent.{name}.{key}")


def expand(path: str, home: Path, environ: Mapping[str, str]) -> str:
    """``~`` from ``$HOME``; a relative path from the fleetmem home."""
    if path == "~" or path.startswith("~/"):
        path = (environ.get("HOME") or os.path.expanduser("~")) + path[1:]
    return path if os.path.isabs(path) else str(home / path)


def resolve_agent(
    settings: Settings,
    name: str,
    *,
    workdir: str | None,
    home: Path,
    environ: Mapping[str, str],
) -> AgentSpec:
    """The spec of agent ``name``; InvalidInput or ConfigError naming what is missing."""
    if not isinstance(name, str) or not _AGENT.fullmatch(name):
        raise InvalidInput("agent", name, "must match [a-z0-9][a-z0-9._-]{0,63}")
    declared = name in settings.agents
    agent = settings.agent(name)
    adapter_name = agent.adapter or (name if name in _IMPLIED_ADAPTERS else None)
    if adapter_name is None:
        reason = (
            "is not declared; add [agent.NAME] with adapter = claude-code, codex or command"
            if not declared
            else "has no adapter; set [agent.NAME] adapter = claude-code, codex or command"
        )
        raise InvalidInput("agent", name, reason)
    adapter = get_adapter(adapter_name)
    executable = agent.command or adapter.executable
    if agent.command is not None:
        executable = expand(agent.command, home, environ) if "/" in agent.command else executable
    chosen = workdir or (expand(agent.workdir, home, environ) if agent.workdir else os.getcwd())
    real = os.path.abspath(chosen)
    if not os.path.isdir(real):
        field = "workdir" if workdir else f"agent.{name}.workdir"
        raise InvalidInput(field, chosen, "is not a directory")
    return AgentSpec(
        name=name,
        adapter=adapter,
        executable=executable,
        args=agent.args,
        model=agent.model,
        workdir=real,
        env=agent.env,
        memory_briefing=agent.memory_briefing,
        verify_patterns=agent.verify_patterns,
        timeout_s=agent.timeout_s,
        kill_grace_s=agent.kill_grace_s,
        respawns=agent.respawns,
        settings=agent,
    )


def read_prompt_file(path: str, key: str) -> str:
    """A prompt file's contents, byte for byte; ConfigError naming ``key`` when unusable."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(key, path, f"cannot read the file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(key, path, f"the file is not UTF-8 (byte {exc.start})") from None
    check_prompt(text, key)
    return text


def check_prompt(text: str, field: str) -> str:
    """Refuse a prompt that cannot be one argv element (a NUL byte) or is unreasonably long."""
    if not text:
        raise InvalidInput(field, "", "the prompt is empty")
    if "\x00" in text:
        raise InvalidInput(field, "<prompt>", "contains a NUL character, which argv cannot carry")
    if len(text) > MAX_PROMPT_CHARS:
        raise InvalidInput(field, f"{len(text)} characters", "is longer than 1,048,576")
    return text


def run_variables(
    spec: AgentSpec, *, run_id: str, repo: str | None, branch: str | None, now: float
) -> dict[str, str | None]:
    return {
        "agent": spec.name,
        "run_id": run_id,
        "repo": repo,
        "branch": branch,
        "workdir": spec.workdir,
        "date": datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d"),
        "trigger": "manual",
    }


def resolve_prompt(
    spec: AgentSpec,
    override: str | None,
    *,
    variables: Mapping[str, str | None],
    home: Path,
    environ: Mapping[str, str],
    settings: Settings,
    fence: Callable[[str, str], str] | None = None,
    event: Mapping[str, object] | None = None,
) -> str | None:
    """The operator's prompt for this run, or None when the agent has none."""
    if override is not None:
        return check_prompt(override, "--prompt")
    agent = spec.settings
    name = spec.name
    if agent.prompt is not None:
        return check_prompt(agent.prompt, f"agent.{name}.prompt")
    if agent.prompt_file is not None:
        path = expand(agent.prompt_file, home, environ)
        return read_prompt_file(path, f"agent.{name}.prompt_file")
    template: str | None = agent.prompt_template
    key = f"agent.{name}.prompt_template"
    if agent.prompt_template_file is not None:
        key = f"agent.{name}.prompt_template_file"
        template = read_prompt_file(expand(agent.prompt_template_file, home, environ), key)
    if template is None:
        return None
    try:
        if prompt_template.uses_untrusted(template) and not agent.untrusted_inline:
            raise ConfigError(
                key,
                "<template>",
                f"reads an event field, which needs agent.{name}.untrusted_inline = true; "
                "memory_briefing does not open the event fence",
                source=_origin(settings, name, key.rsplit(".", 1)[1]),
            )
        rendered = prompt_template.render(template, variables, event=event, fence=fence)
    except prompt_template.TemplateError as exc:
        raise ConfigError(key, "<template>", str(exc)) from None
    return check_prompt(rendered, key)
