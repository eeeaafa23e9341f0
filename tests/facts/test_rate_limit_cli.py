"""A rate-limited CLI write exits with its own code (7, docs/cli.md) and says when to retry."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from fleetmem.service.bootstrap import STORE_FILE
from fleetmem.service.fact_base import local_user
from fleetmem.store.sqlite.store import SqliteStore
from fleetmem.surfaces.cli.facts_cmds import EXIT_RATE_LIMITED
from tests.conftest import write_config
from tests.facts.conftest import VECTORS_OFF
from tests.surfaces.cli_helpers import run_cli, run_json


def _use_up(home: Path, bucket: str, count: int) -> None:
    """Record ``count`` recent requests of this machine's user, as earlier commands would."""
    store = SqliteStore(home / STORE_FILE)
    try:
        now = time.time()
        who = f"human:{local_user().name}"
        for i in range(count):
            store.fact_rate_add("default", who, bucket, now - 30 + i * 0.01)
    finally:
        store.close()


def test_the_61st_write_in_a_minute_exits_7_with_the_retry_time(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    fact = run_json(home, "facts", "add", "Tag releases from main.")["fact"]
    _use_up(home, "writes", 59)  # the add above was the first of the 60
    limited = run_cli(home, "facts", "pin", fact["id"], check=False)
    assert limited.returncode == EXIT_RATE_LIMITED == 7
    found = re.search(r"try again in (\d+) s \(at \d\d:\d\d:\d\d UTC\)", limited.stderr)
    assert found is not None, limited.stderr
    assert 1 <= int(found.group(1)) <= 60
    assert "at most 60 writes per minute" in limited.stderr
    # Nothing changed, and reads are not rate limited.
    assert run_json(home, "facts", "show", fact["id"])["pinned"] is False
    as_json = run_cli(home, "facts", "add", "Squash merges only.", "--json", check=False)
    assert as_json.returncode == 7
    error = json.loads(as_json.stderr)["error"]
    assert error["code"] == "rate_limited" and 1 <= error["retry_after"] <= 60


def test_forget_all_past_three_an_hour_exits_7(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    _use_up(home, "forget-alls", 3)
    limited = run_cli(home, "facts", "forget-all", "--confirm", "FORGET ALL", check=False)
    assert limited.returncode == 7
    assert "at most 3 forget-alls per hour" in limited.stderr
    assert re.search(r"try again in \d+ s", limited.stderr)
