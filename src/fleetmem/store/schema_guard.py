"""A store migrated by a newer fleetmem is refused, not used.

Each migration may add what every later write must keep up (migration 7 of the PostgreSQL
store: the postings every search reads). A fleetmem that does not know the migration would
write without it, and the newer daemons sharing the store would then miss those writes. So a
store whose schema is newer than this fleetmem's is an error naming both versions.
"""

from __future__ import annotations

from collections.abc import Iterable

from fleetmem.errors import StoreError


def refuse_newer(applied: Iterable[int], known: int, **where: object) -> None:
    """Raise ``StoreError`` when a migration past ``known`` (this fleetmem's last) is in
    ``applied`` (the store's ``schema_migrations``); ``where`` names the store."""
    newest = max(applied, default=0)
    if newest > known:
        raise StoreError(
            f"the store's schema is version {newest}, newer than this fleetmem's {known}: a"
            " newer fleetmem migrated it, and an older one would not keep what that version"
            " added. Upgrade fleetmem (every daemon sharing the store) to use it",
            **where,
        )
