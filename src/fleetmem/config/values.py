"""Value parsers: each turns one raw TOML value into a settings value or raises ``Invalid``.

The reason an ``Invalid`` carries becomes the ``ConfigError`` message, naming the key, so the
wording here is what a user reads.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from types import MappingProxyType
from typing import Final, TypeVar
from urllib.parse import urlsplit

from fleetmem.config.settings import ServerToken, VerifyPattern
from fleetmem.core import prompt_template
from fleetmem.core.durations import format_duration, parse_duration
from fleetmem.core.scope import AGENT_NAME_PATTERN


class Invalid(Exception):
    """A value check failed; ``shown`` replaces the value in the message when set."""

    def __init__(self, reason: str, shown: object = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.shown = shown


Parser = Callable[[object], object]
_T = TypeVar("_T")

_TOML_TYPES: Final[tuple[tuple[type, str], ...]] = (
    (bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"), (list, "array"),
    (dict, "table"), (datetime.datetime, "datetime"), (datetime.date, "date"),
    (datetime.time, "time"),
)  # fmt: skip


def toml_type(value: object) -> str:
    return next((name for kind, name in _TOML_TYPES if isinstance(value, kind)), "value")


def expect(value: object, kind: type[_T], name: str) -> _T:
    # bool is a subclass of int in Python; TOML keeps them apart and so do we.
    if isinstance(value, bool) is not (kind is bool) or not isinstance(value, kind):
        raise Invalid(f"expected {name}, got {toml_type(value)}")
    return value


def boolean(value: object) -> object:
    return expect(value, bool, "a boolean")


def integer(low: int, high: int) -> Parser:
    def parse(value: object) -> object:
        number = expect(value, int, "an integer")
        if not low <= number <= high:
            raise Invalid(f"must be an integer between {low} and {high}")
        return number

    return parse


def duration(low: str, high: str) -> Parser:
    low_s, high_s = parse_duration(low), parse_duration(high)

    def parse(value: object) -> object:
        text = expect(value, str, 'a duration string such as "90d"')
        try:
            seconds = parse_duration(text)
        except ValueError as exc:
            raise Invalid(f"not a duration: {exc}") from None
        if not low_s <= seconds <= high_s:
            raise Invalid(f"must be between {low} and {high}, got {format_duration(seconds)}")
        return seconds

    return parse


def printable(value: object, *, max_len: int, allow_empty: bool) -> str:
    text = expect(value, str, "a string")
    if not text and not allow_empty:
        raise Invalid("must not be empty (leave the key out instead)")
    if len(text) > max_len:
        raise Invalid(f"longer than {max_len} characters")
    if not text.isprintable():
        raise Invalid("contains control or invisible characters")
    return text


def short_text(*, max_len: int = 256, allow_empty: bool = False) -> Parser:
    def parse(value: object) -> object:
        return printable(value, max_len=max_len, allow_empty=allow_empty)

    return parse


def http_url(value: object) -> object:
    text = printable(value, max_len=2048, allow_empty=False)
    if not text.isascii() or any(char.isspace() for char in text):
        raise Invalid("must be an http(s) URL without spaces or non-ASCII characters")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise Invalid(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Invalid("must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise Invalid("must not contain credentials; name the key's variable in api_key_env")
    if parts.query or parts.fragment:
        raise Invalid("must not have a query or fragment")
    return text


#: URL schemes of a PostgreSQL store (libpq accepts both).
POSTGRES_SCHEMES = ("postgresql", "postgres")


def postgres_url(value: object) -> object:
    """A ``postgresql://`` URL as libpq reads it (the password may be in it, in PGPASSWORD or
    in ~/.pgpass; messages never show it)."""
    text = printable(value, max_len=2048, allow_empty=False)
    if any(char.isspace() for char in text):
        raise Invalid("must be a postgresql:// URL without spaces")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise Invalid(f"not a valid URL: {exc}") from None
    if parts.scheme not in POSTGRES_SCHEMES:
        raise Invalid(
            "must be a postgresql:// URL (leave [store] url out for the embedded SQLite file)"
        )
    if not parts.hostname and "host=" not in parts.query:
        raise Invalid("must name the database server's host (postgresql://HOST:PORT/DATABASE)")
    if parts.fragment:
        raise Invalid("must not have a fragment")
    return text


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def env_name(value: object) -> object:
    name = expect(value, str, "a string")
    if not ENV_NAME.fullmatch(name):
        # Never echo it: a common mistake is pasting the key itself here.
        raise Invalid(
            "must be the NAME of an environment variable ([A-Za-z_][A-Za-z0-9_]*), not a key",
            shown=f"<{len(name)} characters hidden>",
        )
    return name


# The same rule as every agent:<name> scope (one definition, in core/scope.py).
AGENT_NAME = AGENT_NAME_PATTERN
# An embedding model as [model_api] embedding_model names it: printable ASCII, no spaces.
MODEL_NAME = re.compile(r"[!-~]{1,256}")


def number(low: float, high: float) -> Parser:
    def parse(value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Invalid(f"expected a number, got {toml_type(value)}")
        if not low <= value <= high:
            raise Invalid(f"must be a number between {low:g} and {high:g}")
        return float(value)

    return parse


def choice(*allowed: str) -> Parser:
    def parse(value: object) -> object:
        text = expect(value, str, "a string")
        if text not in allowed:
            raise Invalid("must be one of " + ", ".join(f'"{a}"' for a in allowed))
        return text

    return parse


def choice_set(*allowed: str) -> Parser:
    """An array naming some of ``allowed`` (each at most once); the empty array is "none"."""

    def parse(value: object) -> object:
        items = expect(value, list, "an array of strings")
        chosen: list[str] = []
        for item in items:
            text = expect(item, str, "an array of strings")
            if text not in allowed:
                raise Invalid(
                    f'unknown item "{text}": each must be one of '
                    + ", ".join(f'"{a}"' for a in allowed)
                )
            if text in chosen:
                raise Invalid(f'"{text}" is listed twice')
            chosen.append(text)
        return tuple(chosen)

    return parse


# No "__": a later gateway names upstream tools NAME__tool, so the separator must be unambiguous.
UPSTREAM_NAME = re.compile(r"(?=[a-z0-9_-]{1,64}$)[a-z0-9]+(?:[-_][a-z0-9]+)*")
HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}")


def string_list(*, max_items: int, max_len: int) -> Parser:
    def parse(value: object) -> object:
        items = expect(value, list, "an array of strings")
        if len(items) > max_items:
            raise Invalid(f"at most {max_items} items")
        return tuple(printable(item, max_len=max_len, allow_empty=True) for item in items)

    return parse


def string_table(key: re.Pattern[str], key_rule: str, value: Parser) -> Parser:
    def parse(raw: object) -> object:
        table = expect(raw, dict, "a table")
        out: dict[str, str] = {}
        for name, item in table.items():
            if not key.fullmatch(name):
                raise Invalid(f"key {name!r}: {key_rule}")
            try:
                out[name] = str(value(item))
            except Invalid as exc:
                raise Invalid(f"key {name!r}: {exc.reason}", exc.shown) from None
        return MappingProxyType(out)

    return parse


def environment(*, allow_empty_values: bool) -> Parser:
    """An ``env`` table: variable names to the values a started process receives."""
    value = short_text(max_len=4096, allow_empty=allow_empty_values)
    return string_table(ENV_NAME, "must be an environment variable name", value)


#: A prompt may be long and span lines; it may not carry other control characters.
MAX_PROMPT_CHARS: Final = 1_048_576
_PROMPT_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def prompt_text(value: object) -> object:
    text = expect(value, str, "a string")
    if not text:
        raise Invalid("must not be empty (leave the key out instead)")
    if len(text) > MAX_PROMPT_CHARS:
        raise Invalid(f"longer than {MAX_PROMPT_CHARS} characters", shown=f"<{len(text)} chars>")
    if _PROMPT_CONTROL.search(text):
        raise Invalid("contains control characters other than newline and tab")
    return text


def template_text(value: object) -> object:
    text = str(prompt_text(value))
    try:
        prompt_template.parse(text)
    except prompt_template.TemplateError as exc:
        raise Invalid(str(exc), shown="<template>") from None
    return text


_ERROR_CLASS = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def verify_patterns(value: object) -> object:
    items = expect(value, list, "an array of tables {match = REGEX, class = NAME}")
    if len(items) > 64:
        raise Invalid("at most 64 patterns")
    out: list[VerifyPattern] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != {"match", "class"}:
            raise Invalid(f"item {i}: must be a table with exactly the keys match and class")
        match = printable(item["match"], max_len=512, allow_empty=False)
        try:
            re.compile(match)
        except re.error as exc:
            raise Invalid(f"item {i}: match is not a regular expression: {exc}") from None
        error_class = expect(item["class"], str, "a string")
        if not _ERROR_CLASS.fullmatch(error_class):
            raise Invalid(f"item {i}: class must match [A-Za-z0-9_.:-]{{1,64}}")
        out.append(VerifyPattern(match=match, error_class=error_class))
    return tuple(out)


_TOKEN_SHA256 = re.compile(r"[0-9a-f]{64}")
_TOKEN_ITEM_KEYS = frozenset({"tier", "sha256", "file", "name", "workspace"})
_WORKSPACE_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def workspace_ref(value: object) -> object:
    """``[agent.NAME] workspace``: a workspace's id or name, checked as a name is (whether
    such a workspace exists is known only to the store, so it is checked at use time)."""
    from fleetmem.core.workspaces import clean_name
    from fleetmem.errors import InvalidInput

    if not isinstance(value, str):
        raise Invalid(f"expected a string (a workspace id or name), got {toml_type(value)}")
    try:
        return clean_name(value, "workspace")
    except InvalidInput as exc:
        raise Invalid(f"{exc.reason} (a workspace id or name: fleetmem workspaces list)") from None


def server_tokens(value: object) -> object:
    # Tokens themselves never appear in a config file: only their hash or a file holding one.
    items = expect(value, list, "an array of tables {tier = ..., sha256 = ... | file = ...}")
    if len(items) > 64:
        raise Invalid("at most 64 tokens", shown=f"{len(items)} items")
    out: list[ServerToken] = []
    for i, item in enumerate(items):
        table = expect(item, dict, f"item {i}: a table")
        for key in table:
            if key not in _TOKEN_ITEM_KEYS:
                hint = " (give sha256 of the token, or file)" if key == "token" else ""
                raise Invalid(f"item {i}: unknown key {key}{hint}", shown="<table>")
        tier = table.get("tier")
        if tier not in ("read", "control"):
            raise Invalid(f"item {i}: tier must be read or control", shown=tier or "<missing>")
        sha256, path = table.get("sha256"), table.get("file")
        if (sha256 is None) == (path is None):
            raise Invalid(f"item {i}: give exactly one of sha256 or file", shown="<table>")
        if sha256 is not None and not (isinstance(sha256, str) and _TOKEN_SHA256.fullmatch(sha256)):
            raise Invalid(f"item {i}: sha256 must be 64 lower-case hex digits", shown=sha256)
        if path is not None:
            path = printable(path, max_len=4096, allow_empty=False)
        name = table.get("name")
        if name is not None:
            name = printable(name, max_len=64, allow_empty=False)
        workspace = table.get("workspace")
        if workspace is not None and not (
            isinstance(workspace, str) and _WORKSPACE_ID.fullmatch(workspace)
        ):
            raise Invalid(
                f"item {i}: workspace must be a workspace id (fleetmem workspaces list)",
                shown=workspace,
            )
        out.append(ServerToken(tier=tier, sha256=sha256, file=path, name=name, workspace=workspace))
    return tuple(out)
