"""A store migrated by a newer fleetmem is refused (both stores): an older fleetmem would
write without what the newer migrations added (the PostgreSQL postings, for one)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fleetmem.errors import StoreError
from fleetmem.store.base import Store


def test_a_store_a_newer_fleetmem_migrated_is_refused_naming_both_versions(
    new_store: Callable[[], Store],
) -> None:
    store = new_store()
    known = store.db.schema_version()  # type: ignore[attr-defined]
    with store.db.write() as conn:  # type: ignore[attr-defined]
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at)"
            f" VALUES ({known + 1}, 'from_a_newer_fleetmem', 0)"
        )
    store.close()
    with pytest.raises(StoreError) as refused:
        new_store()
    assert f"version {known + 1}, newer than this fleetmem's {known}" in str(refused.value)
    assert "Upgrade fleetmem" in str(refused.value)
