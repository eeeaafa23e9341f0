"""Helpers shared by the CLI's command modules."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_NOT_FOUND, EXIT_NOT_ATTRIBUTED, EXIT_STORE = 0, 1, 2, 3, 4, 5
EXIT_CONFLICT = 6

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
