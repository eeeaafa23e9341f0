"""What the services hand to the surfaces: their own frozen records, never the store's rows.

The store's rows (``fleetmem.store``) follow its columns; a surface that formatted them would
change its JSON, its pages and its MCP answers whenever a column did. Each module here holds
the records of one domain (facts, files, runs, episodes) with the fields the surfaces show,
and the one function per record that builds it from its row at the service boundary. The
surfaces import these; ``tests/core/test_layers.py`` fails if one imports ``fleetmem.store``.
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import Any, TypeVar

_Record = TypeVar("_Record")


def project(record: type[_Record], row: Any) -> _Record:
    """A ``record`` (a dataclass) built from the attributes of the same names on ``row``: the
    records keep the names of the row's columns they show, and leave the rest behind."""
    return record(**{name: getattr(row, name) for name in _names(record)})  # type: ignore[arg-type]


@cache
def _names(record: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(record))
