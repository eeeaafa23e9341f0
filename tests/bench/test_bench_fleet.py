"""bench_fleet on a few dozen items, so the fleet benchmark never rots; and its audit, which
must see work done twice when it is.

``python -m bench.bench_fleet --tiny`` runs the quick path at tiny sizes (two kill -9s, a store
of 100 episodes) as a real subprocess, with real daemons, into a temporary results directory.
No speed figure is asserted (speed is measured in bench/, never in tests); what the product
guarantees is: no acknowledged write is lost, and every post is counted once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench.fleet_procs import Audit

from fleetmem.service.bootstrap import build
from tests import store_kinds
from tests.conftest import make_record, session, write_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_fleet_benchmark_runs_at_tiny_size(tmp_path: Path) -> None:
    url = store_kinds.required_url()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
    env |= {"HF_HUB_OFFLINE": "1", "FLEETMEM_BENCH_RESULTS": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "bench.bench_fleet", "--tiny", "--url", url],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,  # a hang guard on a busy machine, not a figure
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data: dict[str, Any] = json.loads((tmp_path / "fleet-tiny.json").read_text("utf-8"))
    assert data["benchmark"] == "fleet" and data["mode"] == "tiny"
    assert "loadavg_1m" in data["machine"]
    for kind in ("postgresql", "sqlite"):
        w = data["writes"][kind]
        assert w["acknowledged"] + w["errors"] == w["posted"] > 0, kind
        assert w["lost_acknowledged"] == 0 and w["unrecorded_episodes"] == 0, kind
        assert w["runs_per_s"] > 0 and w["latency"]["p95_ms"] > 0, kind
    k = data["kills"]
    assert k["kills"] == 2 and k["acknowledged"] > 0
    assert k["acknowledged"] + sum(k["failed_posts"].values()) == k["posted"]
    assert k["lost_acknowledged"] == 0 and k["runs_with_several_episodes"] == 0
    for key in ("jobs_ran_twice", "jobs_left_claimed_or_pending", "jobs_claimed_more_than_once"):
        assert isinstance(k[key], int), key
    r = data["recall"]
    for kind in ("sqlite", "postgresql"):
        assert r[kind]["populate"]["records"] == 100, kind
        assert r[kind]["recall"]["n"] == 2 * 6 and not r[kind]["errors_or_degraded"], kind
    assert "extrapolated" not in r["postgresql_large"]  # no larger size in quick runs
    assert "writes postgresql:" in proc.stdout and "kill -9 x2:" in proc.stdout


def test_the_audit_sees_an_episode_indexed_twice(tmp_path: Path) -> None:
    base = store_kinds.required_url()
    schema, url = store_kinds.fresh_schema(base)
    home = tmp_path / "home"
    home.mkdir()
    write_config(home, f'[model_api]\nembedding_model = ""\n[store]\nurl = "{url}"\n')
    app = build(home, {"HOME": str(tmp_path)})
    try:
        audit = Audit(url=url)
        audit.install()
        record = make_record(run_id="run-1", sessions=[session(repo="github.com/acme/api")])
        episode = app.memory.ingest_run(record).episode_id
        assert episode is not None
        assert audit.repeated("index_write") == {} and audit.repeated("job_done") == {}
        assert audit.counts() == {"index_write": 1, "index_row": 1, "job_claim": 1, "job_done": 1}
        # The provider's work for this episode done again, as a job run twice would do it.
        app.store.builtin_put(episode, "fixed the ledger", None, None, "", "")
        assert audit.repeated("index_write") == {episode: 2}
        assert audit.missing_runs(["run-1", "run-2"]) == ["run-2"]
        assert audit.jobs() == {"done": 1, "claimed": 0}
    finally:
        app.close()
        store_kinds.drop_schema(base, schema)
