"""The embedded SQLite implementation of :class:`fleetmem.store.base.Store`."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from fleetmem.store.sqlite.archive import ArchiveMixin
from fleetmem.store.sqlite.briefing_deliveries import BriefingDeliveriesMixin
from fleetmem.store.sqlite.builtin_index import BuiltinIndexMixin
from fleetmem.store.sqlite.call_log import CallLogMixin
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.degraded_recalls import DegradedRecallsMixin
from fleetmem.store.sqlite.facts import FactsMixin
from fleetmem.store.sqlite.files import FilesMixin
from fleetmem.store.sqlite.provider_health import ProviderHealthMixin
from fleetmem.store.sqlite.records import RecordsMixin
from fleetmem.store.sqlite.run_briefings import RunBriefingsMixin
from fleetmem.store.sqlite.run_forget import RunForgetMixin
from fleetmem.store.sqlite.runs_live import LiveRunsMixin
from fleetmem.store.sqlite.utility_calls import UtilityCallsMixin


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
):
    """All persistence in one SQLite file (WAL), safe to share between processes."""

    def __init__(self, path: Path | str) -> None:
        self.db = Database(path)
        self._init_builtin_index()

    def transaction(self) -> AbstractContextManager[object]:
        return self.db.write()

    def close(self) -> None:
        self.db.close()
