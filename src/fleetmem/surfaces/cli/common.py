"""Helpers shared by the CLI's command modules."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from typing import Any, TextIO

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_NOT_FOUND, EXIT_NOT_ATTRIBUTED, EXIT_STORE = 0, 1, 2, 3, 4, 5
EXIT_CONFLICT = 6
#: A reader closed the pipe (``fleetmem ... | head``): the shell's code for death by SIGPIPE.
EXIT_BROKEN_PIPE = 128 + 13

#: A command handler: (the wired App, parsed arguments) -> exit code.
Handler = Callable[[Any, argparse.Namespace], int]


def dumps_json(data: Any, indent: int | None = None) -> str:
    """Valid JSON always: a NaN or infinity (only rows stored before strict parsing can hold
    one) prints as null instead of the bare ``NaN`` that no JSON parser reads."""
    try:
        return json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    except ValueError:
        from fleetmem.core.strictjson import finite

        return json.dumps(finite(data), indent=indent, ensure_ascii=False, allow_nan=False)


def emit(args: argparse.Namespace, data: Any, text: Callable[[Any], str]) -> None:
    """Print ``data`` as JSON with ``--json``, else as ``text(data)`` for people."""
    if getattr(args, "json", False):
        print(dumps_json(data, indent=2))
    else:
        print(text(data))


def colour_enabled(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Colour only for a terminal, and never when ``NO_COLOR`` is set to anything non-empty
    (https://no-color.org) or ``TERM`` is ``dumb``."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def paint(text: str, sgr: str, stream: TextIO) -> str:
    """``text`` in the SGR colour ``sgr`` (e.g. ``"31"`` red) when ``stream`` may be coloured."""
    return f"\x1b[{sgr}m{text}\x1b[0m" if colour_enabled(stream) else text
