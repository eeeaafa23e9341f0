"""Reading one configuration file into a layer of parsed entries, checked against the schema."""

from __future__ import annotations

import enum
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from fleetmem.config.schema import SCHEMA, KeySpec, Project
from fleetmem.config.settings import Entry, dotted_key
from fleetmem.config.values import Invalid, toml_type
from fleetmem.errors import ConfigError


class Role(enum.Enum):
    GLOBAL = "global"
    PROJECT = "project"


_GLOBAL_ONLY: Final = "global-only: set it in fleetmem.toml or a drop-in, not in a project file"


@dataclass(slots=True)
class Layer:
    source: str
    entries: dict[str, Entry] = field(default_factory=dict)
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


def read_layer(path: Path, role: Role) -> Layer | None:
    document = _read_toml(path)
    if document is None:
        return None
    layer = Layer(source=str(path))
    _visit(document, (), "", role, layer)
    return layer


def _visit(
    node: Mapping[str, object],
    path: tuple[str, ...],
    schema_path: str,
    role: Role,
    layer: Layer,
) -> None:
    spec = SCHEMA[schema_path]

    def fail(key_path: tuple[str, ...], value: object, reason: str) -> ConfigError:
        # A table is not echoed: it may hold anything, and the key already names it.
        shown = "<table>" if isinstance(value, dict) else value
        return ConfigError(dotted_key(*key_path), shown, reason, source=layer.source)

    if role is Role.PROJECT and spec.global_only:
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
            label = f"[{dotted_key(*path, 'NAME')}]" if target == wildcard else f"[{child}]"
            if not isinstance(value, dict):
                raise fail(key_path, value, f"expected a table {label}, got {toml_type(value)}")
            pattern = instance.name_pattern
            if target == wildcard and pattern is not None and not pattern.fullmatch(key):
                raise fail((*path, "NAME"), key, f"invalid name: {instance.name_rule}")
            _visit(value, key_path, target, role, layer)
        else:
            raise fail(
                key_path, value, "unknown table" if isinstance(value, dict) else "unknown key"
            )


def _entry(
    spec: KeySpec, table: tuple[str, ...], key: str, value: object, role: Role, source: str
) -> Entry:
    dotted = dotted_key(*table, key)
    if role is Role.PROJECT and spec.project is Project.FORBIDDEN:
        raise ConfigError(dotted, value, _GLOBAL_ONLY, source=source)
    try:
        parsed = spec.parse(value)
    except Invalid as exc:
        shown = value if exc.shown is None else exc.shown
        raise ConfigError(dotted, shown, exc.reason, source=source) from None
    if role is Role.PROJECT and spec.project is Project.NARROW_TO_FALSE and parsed is not False:
        reason = f"a project file may only narrow {key} to false"
        raise ConfigError(dotted, value, reason, source=source)
    return Entry(table=table, key=key, attr=spec.attr, value=parsed, source=source)
