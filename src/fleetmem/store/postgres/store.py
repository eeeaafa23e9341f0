"""The PostgreSQL implementation of :class:`fleetmem.store.base.Store` (docs/postgres.md).

Selected by ``[store] url = "postgresql://…"`` (or ``FLEETMEM_STORE_URL``): a fleet's shared
store, several daemons on several hosts against one database. The same protocol, rows and
contract tests as :class:`fleetmem.store.sqlite.store.SqliteStore`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from fleetmem.store.file_proposals import ProposalStore
from fleetmem.store.postgres.archive import ArchiveMixin
from fleetmem.store.postgres.bookkeeping import BookkeepingMixin
from fleetmem.store.postgres.builtin_index import BuiltinIndexMixin
from fleetmem.store.postgres.copying import CopyMixin
from fleetmem.store.postgres.db import PgDatabase
from fleetmem.store.postgres.facts import FactsMixin
from fleetmem.store.postgres.files import FilesMixin
from fleetmem.store.postgres.leases import LeasesMixin
from fleetmem.store.postgres.migrations import MIGRATIONS
from fleetmem.store.postgres.records import CLAIM_S, RecordsMixin
from fleetmem.store.postgres.run_forget import RunForgetMixin
from fleetmem.store.postgres.runs_live import LiveRunsMixin
from fleetmem.store.postgres.workspaces import WorkspacesMixin
from fleetmem.store.status import StoreHealth


class PostgresStore(
    RecordsMixin,
    RunForgetMixin,
    BuiltinIndexMixin,
    LiveRunsMixin,
    FilesMixin,
    FactsMixin,
    ArchiveMixin,
    BookkeepingMixin,
    WorkspacesMixin,
    CopyMixin,
    LeasesMixin,
):
    """All persistence in one PostgreSQL database (with pgvector), shared by every daemon."""

    kind = "postgresql"

    def __init__(self, url: str, *, claim_s: float = CLAIM_S) -> None:
        #: How long a job handed to this daemon stays its own (``[store] claim_timeout``).
        self.claim_s = float(claim_s)
        self.db = PgDatabase(url)
        self._init_builtin_index()
        self._init_facts()

    @property
    def location(self) -> str:
        """Where the store lives, for people: the URL without its password."""
        return self.db.path

    @property
    def proposals(self) -> ProposalStore:
        return self

    def schema_version(self) -> int:
        return self.db.schema_version()

    def health(self) -> StoreHealth:
        """What the doctor reports: reachable, schema current, server version."""
        try:
            version = self.db.schema_version()
            server = str(self.db.value("SHOW server_version"))
            vector = self.db.value("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        except Exception as exc:  # the doctor reports, it does not crash
            latest = MIGRATIONS[-1][0]
            return StoreHealth(self.kind, self.location, None, latest, "PostgreSQL", str(exc))
        detail = f"PostgreSQL {server}, pgvector {vector}"
        return StoreHealth(self.kind, self.location, version, MIGRATIONS[-1][0], detail)

    def transaction(self) -> AbstractContextManager[object]:
        return self.db.write()

    def close(self) -> None:
        self.db.close()
