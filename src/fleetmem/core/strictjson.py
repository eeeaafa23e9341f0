"""Strict JSON for everything that enters from outside (pure: no I/O).

Python's ``json`` module is lenient in ways that later turn into crashes: it accepts ``NaN``,
``Infinity`` and ``1e999`` (which the response encoder then refuses, so a stored record
answers 500 forever), lone surrogate escapes (which SQLite's UTF-8 encoder refuses), numbers
too large for a SQLite integer, duplicate keys (the last one silently wins), and nesting
deep enough to exhaust the interpreter's recursion limit. Every surface parses with
:func:`loads` (or checks an already-decoded value with :func:`check_value`), so a bad document
is refused once, at the edge, with an :class:`~fleetmem.errors.InvalidInput` naming the
field path (``cost.usd``, ``sessions[0].events[2].path``) and the limit it broke.

A leading byte order mark is refused: network bodies, hook stdin and MCP arguments may not
carry one. A file read from disk may (a Windows editor's); the CLI drops that one BOM as it
reads the file, before anything is parsed. docs/http-api.md and docs/cli.md state it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from fleetmem.errors import InvalidInput

#: Deepest nesting of objects and arrays accepted; real documents need fewer than ten.
MAX_DEPTH = 32
#: Largest JSON document accepted where the caller names no bound of its own.
MAX_BYTES = 1024 * 1024
#: Integers must fit SQLite's signed 64-bit INTEGER.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1

_BOM = "\ufeff"
_SURROGATE = re.compile("[\ud800-\udfff]")


class _NonFinite(float):
    """A NaN or infinity as parsed, kept so the walk can name the field it sits in."""

    spelling: str

    def __new__(cls, spelling: str) -> _NonFinite:
        value = super().__new__(cls, "nan")
        value.spelling = spelling
        return value


class _DuplicateKeys(dict[str, Any]):
    """An object whose text repeated a key; the walk reports it with its path."""

    duplicate: str = ""


def _parse_float(text: str) -> float:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            dup = _DuplicateKeys(out)
            dup.duplicate = key
            dup.update(pairs)
            return dup
        out[key] = value
    return out


# Stateless between calls, so one decoder serves every document.
_DECODER = json.JSONDecoder(
    parse_float=_parse_float, parse_constant=_NonFinite, object_pairs_hook=_object
)


def _where(root: str, path: tuple[str | int, ...]) -> str:
    """``root`` for the document itself, else a readable path such as ``sessions[0].id``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or root


def loads(
    raw: bytes | str,
    *,
    root: str = "<body>",
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    error: type[InvalidInput] = InvalidInput,
) -> Any:
    """Parse one JSON document strictly; raise ``error`` (an InvalidInput) naming the field.

    Refused: more than ``max_bytes`` bytes, bytes that are not UTF-8 (overlong forms included),
    a leading BOM, text that is not JSON, NaN and infinities, lone
    surrogates, integers beyond 64 bits, repeated keys, and nesting deeper than ``max_depth``.
    """
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise error(root, f"<{size:,} bytes>", f"is larger than the limit of {max_bytes:,} bytes")
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise error(root, f"<byte {exc.start}>", "is not valid UTF-8") from None
    else:
        text = raw
    if text.startswith(_BOM):
        raise error(root, "U+FEFF", "starts with a byte order mark; send UTF-8 without one")
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise error(root, "<nesting>", f"is nested deeper than the limit of {max_depth}") from None
    except json.JSONDecodeError as exc:
        raise error(
            root, f"<line {exc.lineno} column {exc.colno}>", f"is not JSON: {exc.msg}"
        ) from None
    except ValueError as exc:  # an integer literal past the interpreter's digit limit
        raise error(root, "<number>", f"is not acceptable JSON: {str(exc)[:80]}") from None
    check_value(value, root=root, max_depth=max_depth, error=error)
    return value


def check_value(
    value: Any,
    *,
    root: str = "<body>",
    max_depth: int = MAX_DEPTH,
    error: type[InvalidInput] = InvalidInput,
) -> None:
    """Check a decoded value (an MCP tool's arguments, a mapping handed to the Python API) by
    the rules of :func:`loads`: finite numbers, 64-bit integers, no lone surrogates, no
    repeated keys, at most ``max_depth`` levels. Raises ``error`` naming the field path."""
    for path, depth, node in _walk(value):
        where = _where(root, path)
        if depth > max_depth:
            short = _where(root, path[:2]) + ("..." if len(path) > 2 else "")
            raise error(short, "<nesting>", f"is nested deeper than the limit of {max_depth}")
        if isinstance(node, _NonFinite):
            raise error(
                where, node.spelling, "must be a finite number (NaN and infinities are refused)"
            )
        if isinstance(node, float) and not math.isfinite(node):
            raise error(where, node, "must be a finite number (NaN and infinities are refused)")
        if isinstance(node, int) and not isinstance(node, bool) and not INT_MIN <= node <= INT_MAX:
            raise error(where, "<integer>", "is outside the 64-bit integer range")
        if isinstance(node, str) and _SURROGATE.search(node):
            raise error(where, _show_surrogate(node), "contains a lone UTF-16 surrogate")
        if isinstance(node, _DuplicateKeys):
            raise error(_where(root, (*path, node.duplicate)), "(repeated)", "appears twice")
        if isinstance(node, dict):
            for key in node:
                if not isinstance(key, str) or _SURROGATE.search(key):
                    raise error(where, _show_surrogate(str(key)), "has a key that is not text")


def _show_surrogate(text: str) -> str:
    found = _SURROGATE.search(text)
    return f"U+{ord(found.group(0)):04X}" if found else text[:40]


def _walk(value: Any) -> Iterator[tuple[tuple[str | int, ...], int, Any]]:
    """Every node with its path and depth (containers count one level), without recursion so
    a deep value cannot exhaust the stack here either."""
    stack: list[tuple[tuple[str | int, ...], int, Any]] = [((), 0, value)]
    while stack:
        path, depth, node = stack.pop()
        if isinstance(node, dict):
            depth += 1
            yield path, depth, node
            stack.extend(((*path, str(k)), depth, v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list | tuple):
            depth += 1
            yield path, depth, node
            stack.extend(((*path, i), depth, v) for i, v in reversed(list(enumerate(node))))
        else:
            yield path, depth, node


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by None, for output: a row stored before
    these checks existed must still print as valid JSON rather than fail the answer."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
