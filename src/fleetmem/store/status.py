"""What a store says about itself to the doctor and the status page, whichever store it is."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """One look at a store: where it is, its schema, and anything wrong with it."""

    #: ``sqlite`` or ``postgresql``.
    kind: str
    #: A file path or a URL with its password hidden.
    location: str
    #: The schema version applied (None when the store could not be read).
    schema: int | None
    #: The schema version this build of fleetmem needs.
    latest: int
    #: For a person: the engine and its mode, e.g. ``SQLite, wal``.
    detail: str
    #: What is wrong (an integrity check failed, the server does not answer), or None.
    problem: str | None = None
