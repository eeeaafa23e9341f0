"""The embedded SQLite implementation of :class:`fleetmem.store.base.Store`."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from fleetmem.store.file_proposals import ProposalStore
from fleetmem.store.sqlite.archive import ArchiveMixin
from fleetmem.store.sqlite.briefing_deliveries import BriefingDeliveriesMixin
from fleetmem.store.sqlite.builtin_index import BuiltinIndexMixin
from fleetmem.store.sqlite.call_log import CallLogMixin
from fleetmem.store.sqlite.copying import CopyMixin
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.degraded_recalls import DegradedRecallsMixin
from fleetmem.store.sqlite.facts import FactsMixin
from fleetmem.store.sqlite.file_proposals import SqliteProposals
from fleetmem.store.sqlite.files import FilesMixin
from fleetmem.store.sqlite.leases import LeasesMixin
from fleetmem.store.sqlite.migrations import MIGRATIONS
from fleetmem.store.sqlite.provider_health import ProviderHealthMixin
from fleetmem.store.sqlite.records import RecordsMixin
from fleetmem.store.sqlite.run_briefings import RunBriefingsMixin
from fleetmem.store.sqlite.run_forget import RunForgetMixin
from fleetmem.store.sqlite.runs_live import LiveRunsMixin
from fleetmem.store.sqlite.utility_calls import UtilityCallsMixin
from fleetmem.store.sqlite.workspaces import WorkspacesMixin
from fleetmem.store.status import StoreHealth


class SqliteStore(
    RecordsMixin,
    RunForgetMixin,
    BuiltinIndexMixin,
    CallLogMixin,
    LiveRunsMixin,
    FilesMixin,
    FactsMixin,
    RunBriefingsMixin,
    DegradedRecallsMixin,
    ArchiveMixin,
    UtilityCallsMixin,
    ProviderHealthMixin,
    BriefingDeliveriesMixin,
    WorkspacesMixin,
    CopyMixin,
    LeasesMixin,
):
    """All persistence in one SQLite file (WAL), safe to share between processes."""

    kind = "sqlite"

    def __init__(self, path: Path | str) -> None:
        self.db = Database(path)
        self._init_builtin_index()
        self._proposals = SqliteProposals(self.db)

    @property
    def location(self) -> str:
        """Where the store lives, for people: the database file's path."""
        return self.db.path

    @property
    def proposals(self) -> ProposalStore:
        return self._proposals

    def schema_version(self) -> int:
        return self.db.schema_version()

    def health(self) -> StoreHealth:
        """What the doctor reports: schema, journal mode and SQLite's quick check."""
        latest = MIGRATIONS[-1][0]
        try:
            version = self.db.schema_version()
            mode = self.db.conn.execute("PRAGMA journal_mode").fetchone()[0]
            quick = self.db.conn.execute("PRAGMA quick_check").fetchone()[0]
        except Exception as exc:  # the doctor reports, it does not crash
            return StoreHealth(self.kind, self.location, None, latest, "SQLite", str(exc))
        problem = None if quick == "ok" else f"integrity check says {quick}"
        return StoreHealth(self.kind, self.location, version, latest, f"SQLite, {mode}", problem)

    def transaction(self) -> AbstractContextManager[object]:
        return self.db.write()

    def close(self) -> None:
        self.db.close()
