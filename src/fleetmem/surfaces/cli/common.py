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


def emit(args: argparse.Namespace, data: Any, text: Callable[[Any], str]) -> None:
    """Print ``data`` as JSON with ``--json``, else as ``text(data)`` for people."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))
    else:
        print(text(data))
