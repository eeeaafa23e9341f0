"""Layered TOML configuration -> validated, frozen settings.

Layers, later overriding earlier key by key (tables merge deeply):

1. ``$FLEETMEM_HOME/fleetmem.toml``  (the global file)
2. ``$FLEETMEM_HOME/fleetmem.d/*.toml`` (drop-ins, in lexical order of file name)
3. ``<repo root>/.fleetmem.toml``      (a project file; may only narrow)

Missing files are fine. What each table and key accepts is the declarative ``SCHEMA`` below:
a later table (``[mcp.NAME]``, ``[facts]``, ...) is a new entry there plus a settings field,
not a new code path. Every error is a ``ConfigError`` naming the dotted key, the value, the
reason and the file it came from.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import os
import re
import threading
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit

from fleetmem.core import prompt_template
from fleetmem.core.durations import format_duration, parse_duration
from fleetmem.errors import ConfigError

GLOBAL_FILE: Final = "fleetmem.toml"
DROPIN_DIR: Final = "fleetmem.d"
PROJECT_FILE: Final = ".fleetmem.toml"
LOCAL_EMBEDDING_MODEL: Final = "local:minilm"
BUILTIN_PROVIDER: Final = "builtin"

_DAY: Final = 86_400.0


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class EpisodeSettings:
    """``[memory.episodes]``: how episodes are kept, summarized and recalled."""

    retention_s: float = 90 * _DAY
    summary: bool = True
    provider_timeout_s: float = 2.0
    excerpt_chars: int = 600


@dataclass(frozen=True, slots=True)
class FactThresholds:
    """``[memory.facts.thresholds.NAME]``: cosine thresholds for one embedding model.

    ``NAME`` is the ``[model_api] embedding_model`` value the thresholds apply to; a key left
    out keeps fleetmem's calibrated default for that model (see docs/facts.md).
    """

    search: float | None = None
    recall: float | None = None
    near_duplicate: float | None = None


@dataclass(frozen=True, slots=True)
class FactSettings:
    """``[memory.facts]``: promotion, suspicion and per-embedder thresholds of facts."""

    promotion: str = "human"
    corroboration_runs: int = 3
    corroboration_agents: int = 2
    suspect_contradictions: int = 3
    recall_timeout_s: float = 2.0
    thresholds: Mapping[str, FactThresholds] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """``[memory]``: which episode provider is used."""

    provider: str = BUILTIN_PROVIDER
    episodes: EpisodeSettings = field(default_factory=EpisodeSettings)
    facts: FactSettings = field(default_factory=FactSettings)


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """``[agent.NAME]``: per-agent switches."""

    name: str
    memory_record: bool = True
    record_trace: bool = True
    untrusted_inline: bool = False
    memory_recall: bool = True
    edit_agent_files: bool = False
    briefing_max_chars: int = 2000
    # How `fleetmem run` starts the agent (docs/agents.md); every one of these is global-only.
    adapter: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    model: str | None = None
    prompt: str | None = None
    prompt_file: str | None = None
    prompt_template: str | None = None
    prompt_template_file: str | None = None
    workdir: str | None = None
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    memory_briefing: bool = False
    verify_patterns: tuple[VerifyPattern, ...] = ()
    timeout_s: float | None = None
    kill_grace_s: float = 10.0
    respawns: int = 0

    @property
    def prompt_source(self) -> str | None:
        """The key the one-shot prompt comes from, or None when the agent has none."""
        return next((key for key in PROMPT_KEYS if getattr(self, key) is not None), None)


#: The keys a one-shot prompt may come from; at most one may be set.
PROMPT_KEYS: Final = ("prompt", "prompt_file", "prompt_template", "prompt_template_file")
ADAPTERS: Final = ("claude-code", "codex", "command")


@dataclass(frozen=True, slots=True)
class VerifyPattern:
    """``[agent.NAME] verify_patterns`` item: commands matching ``match`` (a regular
    expression searched in the command line) are verifications of class ``error_class``."""

    match: str
    error_class: str


@dataclass(frozen=True, slots=True)
class RunsSettings:
    """``[runs]``: live runs (global only)."""

    #: A live run not heard from for this long is expired: no longer present or colliding.
    expire_after_s: float = 600.0


@dataclass(frozen=True, slots=True)
class ServerToken:
    """One ``[server] tokens`` item: an API token given by its SHA-256 or by a token file."""

    tier: str  # "read" or "control"
    sha256: str | None = None
    file: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """``[server]``: the daemon's HTTP surface (global only)."""

    #: API tokens beyond ``<home>/control.token``; one is required to bind beyond loopback.
    tokens: tuple[ServerToken, ...] = ()


@dataclass(frozen=True, slots=True)
class ModelApiSettings:
    """``[model_api]``: an OpenAI-compatible endpoint and the models used on it."""

    base_url: str | None = None
    api_key_env: str | None = None
    utility_model: str | None = None
    embedding_model: str = LOCAL_EMBEDDING_MODEL


@dataclass(frozen=True, slots=True)
class McpSettings:
    """``[mcp.NAME]``: an upstream MCP server, used by fleetmem only as an episode provider.

    Either ``command`` (with ``args`` and ``env``: a stdio subprocess) or ``url`` (with
    ``headers``, each naming the environment variable that holds its value: streamable HTTP).
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    shared: bool = True
    connect_timeout_s: float = 10.0
    call_timeout_s: float = 30.0

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"


@dataclass(frozen=True, slots=True)
class _Entry:
    """One key as set in one file, already parsed."""

    table: tuple[str, ...]
    key: str
    attr: str
    value: object
    source: str

    @property
    def dotted(self) -> str:
        return _dotted(*self.table, self.key)


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Settings:
    """The effective configuration: every layer merged and validated."""

    memory: MemorySettings = field(default_factory=MemorySettings)
    agents: Mapping[str, AgentSettings] = field(default_factory=_empty)
    model_api: ModelApiSettings = field(default_factory=ModelApiSettings)
    mcp: Mapping[str, McpSettings] = field(default_factory=_empty)
    runs: RunsSettings = field(default_factory=RunsSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    sources: tuple[str, ...] = ()
    # The winning entry per dotted key; needed to apply a project file on top later.
    _entries: Mapping[str, _Entry] = field(default_factory=_empty, repr=False, compare=False)

    def agent(self, name: str) -> AgentSettings:
        """The settings of agent ``name``; defaults when no file declares it."""
        return self.agents.get(name) or AgentSettings(name=name)

    @property
    def origins(self) -> Mapping[str, str]:
        """Dotted key -> the file that set its effective value (keys left at defaults absent)."""
        return MappingProxyType({key: entry.source for key, entry in self._entries.items()})


def default_settings() -> Settings:
    """The settings in force when no configuration file exists."""
    return Settings()


# --------------------------------------------------------------------------- schema


class _Invalid(Exception):
    """A value check failed; ``shown`` replaces the value in the message when set."""

    def __init__(self, reason: str, shown: object = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.shown = shown


Parser = Callable[[object], object]
_T = TypeVar("_T")


class Project(enum.Enum):
    """What a project file may do with a key."""

    FORBIDDEN = "global-only"
    NARROW_TO_FALSE = "narrow to false"


@dataclass(frozen=True, slots=True)
class KeySpec:
    """One key: the settings attribute it fills, its parser, and its project-file rule."""

    attr: str
    parse: Parser
    project: Project = Project.FORBIDDEN


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One table. ``name_pattern`` is set for a ``*`` segment (``[agent.NAME]``)."""

    keys: Mapping[str, KeySpec] = field(default_factory=dict)
    global_only: bool = False
    name_pattern: re.Pattern[str] | None = None
    name_rule: str = ""


_TOML_TYPES: Final[tuple[tuple[type, str], ...]] = (
    (bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"), (list, "array"),
    (dict, "table"), (datetime.datetime, "datetime"), (datetime.date, "date"),
    (datetime.time, "time"),
)  # fmt: skip


def _toml_type(value: object) -> str:
    return next((name for kind, name in _TOML_TYPES if isinstance(value, kind)), "value")


def _expect(value: object, kind: type[_T], name: str) -> _T:
    # bool is a subclass of int in Python; TOML keeps them apart and so do we.
    if isinstance(value, bool) is not (kind is bool) or not isinstance(value, kind):
        raise _Invalid(f"expected {name}, got {_toml_type(value)}")
    return value


def _boolean(value: object) -> object:
    return _expect(value, bool, "a boolean")


def _integer(low: int, high: int) -> Parser:
    def parse(value: object) -> object:
        number = _expect(value, int, "an integer")
        if not low <= number <= high:
            raise _Invalid(f"must be an integer between {low} and {high}")
        return number

    return parse


def _duration(low: str, high: str) -> Parser:
    low_s, high_s = parse_duration(low), parse_duration(high)

    def parse(value: object) -> object:
        text = _expect(value, str, 'a duration string such as "90d"')
        try:
            seconds = parse_duration(text)
        except ValueError as exc:
            raise _Invalid(f"not a duration: {exc}") from None
        if not low_s <= seconds <= high_s:
            raise _Invalid(f"must be between {low} and {high}, got {format_duration(seconds)}")
        return seconds

    return parse


def _printable(value: object, *, max_len: int, allow_empty: bool) -> str:
    text = _expect(value, str, "a string")
    if not text and not allow_empty:
        raise _Invalid("must not be empty (leave the key out instead)")
    if len(text) > max_len:
        raise _Invalid(f"longer than {max_len} characters")
    if not text.isprintable():
        raise _Invalid("contains control or invisible characters")
    return text


def _text(*, max_len: int = 256, allow_empty: bool = False) -> Parser:
    def parse(value: object) -> object:
        return _printable(value, max_len=max_len, allow_empty=allow_empty)

    return parse


def _http_url(value: object) -> object:
    text = _printable(value, max_len=2048, allow_empty=False)
    if not text.isascii() or any(char.isspace() for char in text):
        raise _Invalid("must be an http(s) URL without spaces or non-ASCII characters")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise _Invalid(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _Invalid("must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise _Invalid("must not contain credentials; name the key's variable in api_key_env")
    if parts.query or parts.fragment:
        raise _Invalid("must not have a query or fragment")
    return text


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def _env_name(value: object) -> object:
    name = _expect(value, str, "a string")
    if not _ENV_NAME.fullmatch(name):
        # Never echo it: a common mistake is pasting the key itself here.
        raise _Invalid(
            "must be the NAME of an environment variable ([A-Za-z_][A-Za-z0-9_]*), not a key",
            shown=f"<{len(name)} characters hidden>",
        )
    return name


_AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
# An embedding model as [model_api] embedding_model names it: printable ASCII, no spaces.
_MODEL_NAME = re.compile(r"[!-~]{1,256}")


def _number(low: float, high: float) -> Parser:
    def parse(value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _Invalid(f"expected a number, got {_toml_type(value)}")
        if not low <= value <= high:
            raise _Invalid(f"must be a number between {low:g} and {high:g}")
        return float(value)

    return parse


def _choice(*allowed: str) -> Parser:
    def parse(value: object) -> object:
        text = _expect(value, str, "a string")
        if text not in allowed:
            raise _Invalid("must be one of " + ", ".join(f'"{a}"' for a in allowed))
        return text

    return parse


# No "__": a later gateway names upstream tools NAME__tool, so the separator must be unambiguous.
_UPSTREAM_NAME = re.compile(r"(?=[a-z0-9_-]{1,64}$)[a-z0-9]+(?:[-_][a-z0-9]+)*")
_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}")


def _string_list(*, max_items: int, max_len: int) -> Parser:
    def parse(value: object) -> object:
        items = _expect(value, list, "an array of strings")
        if len(items) > max_items:
            raise _Invalid(f"at most {max_items} items")
        return tuple(_printable(item, max_len=max_len, allow_empty=True) for item in items)

    return parse


def _string_table(key: re.Pattern[str], key_rule: str, value: Parser) -> Parser:
    def parse(raw: object) -> object:
        table = _expect(raw, dict, "a table")
        out: dict[str, str] = {}
        for name, item in table.items():
            if not key.fullmatch(name):
                raise _Invalid(f"key {name!r}: {key_rule}")
            try:
                out[name] = str(value(item))
            except _Invalid as exc:
                raise _Invalid(f"key {name!r}: {exc.reason}", exc.shown) from None
        return MappingProxyType(out)

    return parse


#: A prompt may be long and span lines; it may not carry other control characters.
MAX_PROMPT_CHARS: Final = 1_048_576
_PROMPT_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _prompt_text(value: object) -> object:
    text = _expect(value, str, "a string")
    if not text:
        raise _Invalid("must not be empty (leave the key out instead)")
    if len(text) > MAX_PROMPT_CHARS:
        raise _Invalid(f"longer than {MAX_PROMPT_CHARS} characters", shown=f"<{len(text)} chars>")
    if _PROMPT_CONTROL.search(text):
        raise _Invalid("contains control characters other than newline and tab")
    return text


def _template_text(value: object) -> object:
    text = str(_prompt_text(value))
    try:
        prompt_template.parse(text)
    except prompt_template.TemplateError as exc:
        raise _Invalid(str(exc), shown="<template>") from None
    return text


_ERROR_CLASS = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def _verify_patterns(value: object) -> object:
    items = _expect(value, list, "an array of tables {match = REGEX, class = NAME}")
    if len(items) > 64:
        raise _Invalid("at most 64 patterns")
    out: list[VerifyPattern] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != {"match", "class"}:
            raise _Invalid(f"item {i}: must be a table with exactly the keys match and class")
        match = _printable(item["match"], max_len=512, allow_empty=False)
        try:
            re.compile(match)
        except re.error as exc:
            raise _Invalid(f"item {i}: match is not a regular expression: {exc}") from None
        error_class = _expect(item["class"], str, "a string")
        if not _ERROR_CLASS.fullmatch(error_class):
            raise _Invalid(f"item {i}: class must match [A-Za-z0-9_.:-]{{1,64}}")
        out.append(VerifyPattern(match=match, error_class=error_class))
    return tuple(out)


_TOKEN_SHA256 = re.compile(r"[0-9a-f]{64}")
_TOKEN_ITEM_KEYS = frozenset({"tier", "sha256", "file", "name"})


def _server_tokens(value: object) -> object:
    # Tokens themselves never appear in a config file: only their hash or a file holding one.
    items = _expect(value, list, "an array of tables {tier = ..., sha256 = ... | file = ...}")
    if len(items) > 64:
        raise _Invalid("at most 64 tokens", shown=f"{len(items)} items")
    out: list[ServerToken] = []
    for i, item in enumerate(items):
        table = _expect(item, dict, f"item {i}: a table")
        for key in table:
            if key not in _TOKEN_ITEM_KEYS:
                hint = " (give sha256 of the token, or file)" if key == "token" else ""
                raise _Invalid(f"item {i}: unknown key {key}{hint}", shown="<table>")
        tier = table.get("tier")
        if tier not in ("read", "control"):
            raise _Invalid(f"item {i}: tier must be read or control", shown=tier or "<missing>")
        sha256, path = table.get("sha256"), table.get("file")
        if (sha256 is None) == (path is None):
            raise _Invalid(f"item {i}: give exactly one of sha256 or file", shown="<table>")
        if sha256 is not None and not (isinstance(sha256, str) and _TOKEN_SHA256.fullmatch(sha256)):
            raise _Invalid(f"item {i}: sha256 must be 64 lower-case hex digits", shown=sha256)
        if path is not None:
            path = _printable(path, max_len=4096, allow_empty=False)
        name = table.get("name")
        if name is not None:
            name = _printable(name, max_len=64, allow_empty=False)
        out.append(ServerToken(tier=tier, sha256=sha256, file=path, name=name))
    return tuple(out)


SCHEMA: Final[Mapping[str, TableSpec]] = MappingProxyType(
    {
        "": TableSpec(),
        "memory": TableSpec(
            global_only=True,
            keys={"provider": KeySpec("provider", _text(max_len=64))},
        ),
        "memory.facts": TableSpec(
            global_only=True,
            keys={
                "promotion": KeySpec("promotion", _choice("human", "corroboration")),
                "corroboration_runs": KeySpec("corroboration_runs", _integer(1, 100)),
                "corroboration_agents": KeySpec("corroboration_agents", _integer(1, 50)),
                "suspect_contradictions": KeySpec("suspect_contradictions", _integer(1, 100)),
                "recall_timeout": KeySpec("recall_timeout_s", _duration("100ms", "10s")),
            },
        ),
        "memory.facts.thresholds": TableSpec(global_only=True),
        "memory.facts.thresholds.*": TableSpec(
            global_only=True,
            name_pattern=_MODEL_NAME,
            name_rule="must be an embedding_model value (printable ASCII, no spaces)",
            keys={
                "search": KeySpec("search", _number(0.0, 1.0)),
                "recall": KeySpec("recall", _number(0.0, 1.0)),
                "near_duplicate": KeySpec("near_duplicate", _number(0.0, 1.0)),
            },
        ),
        "memory.episodes": TableSpec(
            global_only=True,
            keys={
                "retention": KeySpec("retention_s", _duration("1h", "10y")),
                "summary": KeySpec("summary", _boolean),
                "provider_timeout": KeySpec("provider_timeout_s", _duration("100ms", "60s")),
                "excerpt_chars": KeySpec("excerpt_chars", _integer(0, 2000)),
            },
        ),
        "agent": TableSpec(),
        "agent.*": TableSpec(
            name_pattern=_AGENT_NAME,
            name_rule="must match [a-z0-9][a-z0-9._-]{0,63}",
            keys={
                "memory_record": KeySpec("memory_record", _boolean, Project.NARROW_TO_FALSE),
                "record_trace": KeySpec("record_trace", _boolean, Project.NARROW_TO_FALSE),
                "untrusted_inline": KeySpec("untrusted_inline", _boolean),
                "memory_recall": KeySpec("memory_recall", _boolean, Project.NARROW_TO_FALSE),
                "edit_agent_files": KeySpec("edit_agent_files", _boolean),
                "briefing_max_chars": KeySpec("briefing_max_chars", _integer(500, 4000)),
                "adapter": KeySpec("adapter", _choice(*ADAPTERS)),
                "command": KeySpec("command", _text(max_len=4096)),
                "args": KeySpec("args", _string_list(max_items=64, max_len=4096)),
                "model": KeySpec("model", _text()),
                "prompt": KeySpec("prompt", _prompt_text),
                "prompt_file": KeySpec("prompt_file", _text(max_len=4096)),
                "prompt_template": KeySpec("prompt_template", _template_text),
                "prompt_template_file": KeySpec("prompt_template_file", _text(max_len=4096)),
                "workdir": KeySpec("workdir", _text(max_len=4096)),
                "env": KeySpec(
                    "env",
                    _string_table(
                        _ENV_NAME,
                        "must be an environment variable name",
                        _text(max_len=4096, allow_empty=True),
                    ),
                ),
                "memory_briefing": KeySpec("memory_briefing", _boolean),
                "verify_patterns": KeySpec("verify_patterns", _verify_patterns),
                "timeout": KeySpec("timeout_s", _duration("1s", "30d")),
                "kill_grace": KeySpec("kill_grace_s", _duration("100ms", "5m")),
                "respawns": KeySpec("respawns", _integer(0, 5)),
            },
        ),
        "mcp": TableSpec(global_only=True),
        "mcp.*": TableSpec(
            global_only=True,
            name_pattern=_UPSTREAM_NAME,
            name_rule="must be lower-case letters and digits, words joined by single - or _",
            keys={
                "command": KeySpec("command", _text(max_len=4096)),
                "args": KeySpec("args", _string_list(max_items=64, max_len=4096)),
                "env": KeySpec(
                    "env",
                    _string_table(
                        _ENV_NAME, "must be an environment variable name", _text(max_len=4096)
                    ),
                ),
                "url": KeySpec("url", _http_url),
                "headers": KeySpec(
                    "headers",
                    _string_table(_HEADER_NAME, "must be an HTTP header name", _env_name),
                ),
                "shared": KeySpec("shared", _boolean),
                "connect_timeout": KeySpec("connect_timeout_s", _duration("1s", "120s")),
                "call_timeout": KeySpec("call_timeout_s", _duration("100ms", "300s")),
            },
        ),
        "runs": TableSpec(
            global_only=True,
            keys={"expire_after": KeySpec("expire_after_s", _duration("30s", "24h"))},
        ),
        "server": TableSpec(global_only=True, keys={"tokens": KeySpec("tokens", _server_tokens)}),
        "model_api": TableSpec(
            global_only=True,
            keys={
                "base_url": KeySpec("base_url", _http_url),
                "api_key_env": KeySpec("api_key_env", _env_name),
                "utility_model": KeySpec("utility_model", _text()),
                "embedding_model": KeySpec("embedding_model", _text(allow_empty=True)),
            },
        ),
    }
)


# --------------------------------------------------------------------------- reading one file


class _Role(enum.Enum):
    GLOBAL = "global"
    PROJECT = "project"


_GLOBAL_ONLY: Final = "global-only: set it in fleetmem.toml or a drop-in, not in a project file"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _dotted(*parts: str) -> str:
    """A dotted key for messages; odd parts are quoted so invisible characters show."""
    return ".".join(p if _BARE_KEY.fullmatch(p) else json.dumps(p) for p in parts)


@dataclass(slots=True)
class _Layer:
    source: str
    entries: dict[str, _Entry] = field(default_factory=dict)
    tables: set[tuple[str, ...]] = field(default_factory=set)


def _read_toml(path: Path) -> dict[str, object] | None:
    source = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError("<file>", source, f"cannot read: {exc.strerror}", source=source) from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 (byte {exc.start})"
        raise ConfigError("<file>", source, reason, source=source) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("<file>", source, f"invalid TOML: {exc}", source=source) from None


def _read_layer(path: Path, role: _Role) -> _Layer | None:
    document = _read_toml(path)
    if document is None:
        return None
    layer = _Layer(source=str(path))
    _visit(document, (), "", role, layer)
    return layer


def _visit(
    node: Mapping[str, object],
    path: tuple[str, ...],
    schema_path: str,
    role: _Role,
    layer: _Layer,
) -> None:
    spec = SCHEMA[schema_path]

    def fail(key_path: tuple[str, ...], value: object, reason: str) -> ConfigError:
        # A table is not echoed: it may hold anything, and the key already names it.
        shown = "<table>" if isinstance(value, dict) else value
        return ConfigError(_dotted(*key_path), shown, reason, source=layer.source)

    if role is _Role.PROJECT and spec.global_only:
        key, value = next(iter(node.items()), ("", {}))
        where = (*path, key) if key else path
        raise fail(where, value, _GLOBAL_ONLY)
    layer.tables.add(path)
    for key, value in node.items():
        key_path = (*path, key)
        child = f"{schema_path}.{key}" if schema_path else key
        wildcard = f"{schema_path}.*" if schema_path else "*"
        if key in spec.keys:
            entry = _entry(spec.keys[key], path, key, value, role, layer.source)
            layer.entries[entry.dotted] = entry
        elif child in SCHEMA or wildcard in SCHEMA:
            target = child if child in SCHEMA else wildcard
            instance = SCHEMA[target]
            label = f"[{_dotted(*path, 'NAME')}]" if target == wildcard else f"[{child}]"
            if not isinstance(value, dict):
                raise fail(key_path, value, f"expected a table {label}, got {_toml_type(value)}")
            pattern = instance.name_pattern
            if target == wildcard and pattern is not None and not pattern.fullmatch(key):
                raise fail((*path, "NAME"), key, f"invalid name: {instance.name_rule}")
            _visit(value, key_path, target, role, layer)
        else:
            raise fail(
                key_path, value, "unknown table" if isinstance(value, dict) else "unknown key"
            )


def _entry(
    spec: KeySpec, table: tuple[str, ...], key: str, value: object, role: _Role, source: str
) -> _Entry:
    dotted = _dotted(*table, key)
    if role is _Role.PROJECT and spec.project is Project.FORBIDDEN:
        raise ConfigError(dotted, value, _GLOBAL_ONLY, source=source)
    try:
        parsed = spec.parse(value)
    except _Invalid as exc:
        shown = value if exc.shown is None else exc.shown
        raise ConfigError(dotted, shown, exc.reason, source=source) from None
    if role is _Role.PROJECT and spec.project is Project.NARROW_TO_FALSE and parsed is not False:
        reason = f"a project file may only narrow {key} to false"
        raise ConfigError(dotted, value, reason, source=source)
    return _Entry(table=table, key=key, attr=spec.attr, value=parsed, source=source)


# --------------------------------------------------------------------------- merging and checks


def _attrs(entries: Iterable[_Entry], table: tuple[str, ...]) -> dict[str, Any]:
    # Any: each value was produced by its KeySpec parser, which fixes its type.
    return {entry.attr: entry.value for entry in entries if entry.table == table}


def _build(
    entries: Mapping[str, _Entry], tables: Iterable[tuple[str, ...]], sources: tuple[str, ...]
) -> Settings:
    winners = list(entries.values())
    episodes = dataclasses.replace(EpisodeSettings(), **_attrs(winners, ("memory", "episodes")))
    facts = _fact_settings(winners)
    memory = dataclasses.replace(
        MemorySettings(episodes=episodes, facts=facts), **_attrs(winners, ("memory",))
    )
    agent_names = sorted({table[1] for table in tables if len(table) == 2 and table[0] == "agent"})
    agents = {
        name: dataclasses.replace(AgentSettings(name=name), **_attrs(winners, ("agent", name)))
        for name in agent_names
    }
    upstream_names = sorted({table[1] for table in tables if len(table) == 2 and table[0] == "mcp"})
    upstreams = {
        name: dataclasses.replace(McpSettings(name=name), **_attrs(winners, ("mcp", name)))
        for name in upstream_names
    }
    settings = Settings(
        memory=memory,
        agents=MappingProxyType(agents),
        model_api=dataclasses.replace(ModelApiSettings(), **_attrs(winners, ("model_api",))),
        mcp=MappingProxyType(upstreams),
        runs=dataclasses.replace(RunsSettings(), **_attrs(winners, ("runs",))),
        server=dataclasses.replace(ServerSettings(), **_attrs(winners, ("server",))),
        sources=sources,
        _entries=MappingProxyType(dict(entries)),
    )
    for check in _CHECKS:
        check(settings)
    return settings


def _fact_settings(winners: list[_Entry]) -> FactSettings:
    prefix = ("memory", "facts", "thresholds")
    # From the entries, not the tables: a project layer is built without the global tables.
    names = sorted({e.table[3] for e in winners if len(e.table) == 4 and e.table[:3] == prefix})
    thresholds = {
        name: dataclasses.replace(FactThresholds(), **_attrs(winners, (*prefix, name)))
        for name in names
    }
    return dataclasses.replace(
        FactSettings(thresholds=MappingProxyType(thresholds)),
        **_attrs(winners, ("memory", "facts")),
    )


def _fail_at(settings: Settings, key: str, value: object, reason: str) -> ConfigError:
    return ConfigError(key, value, reason, source=settings.origins.get(key))


def _declared_upstreams(settings: Settings) -> frozenset[str]:
    """Names of ``[mcp.NAME]`` upstreams from the global file and drop-ins.

    ``[mcp]`` is global-only (a project file declaring one fails to load), so every
    upstream in the settings comes from one of those files.
    """
    return frozenset(settings.mcp)


def _check_provider(settings: Settings) -> None:
    provider = settings.memory.provider
    if provider != BUILTIN_PROVIDER and provider not in _declared_upstreams(settings):
        reason = "no [mcp.NAME] upstream is declared in the global file or a drop-in"
        raise _fail_at(settings, "memory.provider", provider, reason)
    upstream = settings.mcp.get(provider)
    if upstream is not None and not upstream.shared:
        reason = (
            f"mcp.{provider}.shared is false, but the provider stores episodes from every "
            "agent, so it must be a shared upstream"
        )
        raise _fail_at(settings, "memory.provider", provider, reason)


def _check_upstreams(settings: Settings) -> None:
    for name, up in settings.mcp.items():

        def fail(key: str, value: object, reason: str, name: str = name) -> ConfigError:
            prefix = f"mcp.{name}."
            source = next((v for k, v in settings.origins.items() if k.startswith(prefix)), None)
            return ConfigError(
                f"mcp.{name}.{key}" if key else "mcp.NAME", value, reason, source=source
            )

        if name == BUILTIN_PROVIDER:
            raise fail("", name, "is the built-in provider's name; choose another")
        if up.command is None and up.url is None:
            raise fail("command", None, "set command (a stdio server) or url (an HTTP server)")
        if up.command is not None and up.url is not None:
            raise fail("url", up.url, f"mcp.{name} sets both command and url; set exactly one")
        if up.url is not None:
            for key, present in (("args", bool(up.args)), ("env", bool(up.env))):
                if present:
                    raise fail(key, "<set>", "applies only to a stdio upstream (with command)")
        if up.command is not None and up.headers:
            raise fail("headers", "<set>", "applies only to an HTTP upstream (with url)")


def _check_model_api(settings: Settings) -> None:
    api = settings.model_api
    if api.base_url is not None:
        return
    if api.utility_model is not None:
        reason = "requires model_api.base_url (the endpoint that serves it)"
        raise _fail_at(settings, "model_api.utility_model", api.utility_model, reason)
    if api.embedding_model not in ("", LOCAL_EMBEDDING_MODEL):
        reason = (
            f'requires model_api.base_url; use "{LOCAL_EMBEDDING_MODEL}" for the built-in '
            'model or "" to turn vectors off'
        )
        raise _fail_at(settings, "model_api.embedding_model", api.embedding_model, reason)


def _check_recording(settings: Settings) -> None:
    for name, agent in settings.agents.items():
        key = f"agent.{name}.memory_record"
        if not agent.record_trace and agent.memory_record and key in settings.origins:
            reason = (
                f"would do nothing: agent.{name}.record_trace is false, so no episode is "
                "recorded; remove the key"
            )
            raise _fail_at(settings, key, True, reason)


def _check_agent_runs(settings: Settings) -> None:
    for name, agent in settings.agents.items():
        given = [key for key in PROMPT_KEYS if getattr(agent, key) is not None]
        if len(given) > 1:
            key = f"agent.{name}.{given[1]}"
            reason = f"set only one of {', '.join(PROMPT_KEYS)} (agent.{name}.{given[0]} is set)"
            raise _fail_at(settings, key, "<set>", reason)
        if agent.adapter == "command" and agent.command is None:
            reason = 'adapter = "command" needs agent.NAME.command, the program to start'
            raise _fail_at(settings, f"agent.{name}.adapter", agent.adapter, reason)
        template = agent.prompt_template
        if (
            template is not None
            and not agent.untrusted_inline
            and prompt_template.uses_untrusted(template)
        ):
            reason = (
                f"reads an event field ({{{{untrusted event.X}}}}), which needs "
                f"agent.{name}.untrusted_inline = true; memory_briefing does not open "
                "the event fence"
            )
            raise _fail_at(settings, f"agent.{name}.prompt_template", "<template>", reason)


_CHECKS: Final[tuple[Callable[[Settings], None], ...]] = (
    _check_upstreams,
    _check_provider,
    _check_model_api,
    _check_recording,
    _check_agent_runs,
)


# --------------------------------------------------------------------------- public API


def _dropins(home: Path) -> list[Path]:
    directory = home / DROPIN_DIR
    if not directory.exists():
        return []
    if not directory.is_dir():
        raise ConfigError("<file>", str(directory), "expected a directory of *.toml drop-ins")
    # Dot files are editor and backup leftovers, not drop-ins.
    found = [p for p in directory.glob("*.toml") if p.is_file() and not p.name.startswith(".")]
    return sorted(found, key=lambda p: p.name)


def load_global(home: Path) -> Settings:
    """Settings from ``home/fleetmem.toml`` and ``home/fleetmem.d/*.toml``; defaults if absent.

    Raises ``ConfigError`` naming the key, value, reason and file on the first problem.
    """
    layers = [
        layer
        for path in (home / GLOBAL_FILE, *_dropins(home))
        if (layer := _read_layer(path, _Role.GLOBAL)) is not None
    ]
    entries: dict[str, _Entry] = {}
    tables: set[tuple[str, ...]] = set()
    for layer in layers:
        entries.update(layer.entries)
        tables |= layer.tables
    return _build(entries, tables, tuple(layer.source for layer in layers))


def apply_project(settings: Settings, project_root: Path) -> Settings:
    """``settings`` narrowed by ``project_root/.fleetmem.toml``; unchanged if it is absent.

    A project file may declare agents and set their ``memory_record`` / ``record_trace`` to
    false; anything global-only or widening raises ``ConfigError``.
    """
    layer = _read_layer(project_root / PROJECT_FILE, _Role.PROJECT)
    if layer is None:
        return settings
    tables = {("agent", name) for name in settings.agents} | layer.tables
    tables |= {("mcp", name) for name in settings.mcp}
    entries = {**settings._entries, **layer.entries}
    return _build(entries, tables, (*settings.sources, layer.source))


def load_settings(home: Path, project_root: Path | None = None) -> Settings:
    """The global file, its drop-ins, then (if ``project_root`` is given) the project file."""
    settings = load_global(home)
    return settings if project_root is None else apply_project(settings, project_root)


def default_home(environ: Mapping[str, str]) -> Path:
    """``$FLEETMEM_HOME`` from ``environ``, else ``~/.fleetmem``; ``~`` expanded via ``HOME``."""
    text = environ.get("FLEETMEM_HOME") or "~/.fleetmem"
    if text == "~" or text.startswith("~/"):
        home = environ.get("HOME") or _account_home()
        return Path(home + text[1:])
    return Path(os.path.expanduser(text) if text.startswith("~") else text)


def _account_home() -> str:
    import pwd  # POSIX only; reached only when HOME is unset

    return pwd.getpwuid(os.getuid()).pw_dir


class ConfigHolder:
    """The daemon's current settings; ``reload`` (on SIGHUP) keeps the last good ones on error.

    Readers never block: ``current`` is one reference, swapped whole by a successful reload.
    Reloads are serialized.
    """

    def __init__(self, home: Path, project_root: Path | None = None) -> None:
        """Load now; raises ``ConfigError`` if the first load fails (nothing good to keep)."""
        self._home = home
        self._project_root = project_root
        self._reload_lock = threading.Lock()
        self._current = load_settings(home, project_root)

    @property
    def current(self) -> Settings:
        """The last settings that loaded without error."""
        return self._current

    def reload(self) -> ConfigError | None:
        """Load the files again; on success swap them in and return None, else return the error."""
        with self._reload_lock:
            try:
                settings = load_settings(self._home, self._project_root)
            except ConfigError as exc:
                return exc
            self._current = settings
            return None
