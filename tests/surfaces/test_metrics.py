"""/metrics against seed 000 REQ-21: every family present after real use, no revealing label.

The provider is the reference stdio provider misbehaving with ``ignore-scope``, so one recall
returns an out-of-scope item that fleetmem drops (the REQ-21 scenario), over the real
scrape endpoint of the daemon's ASGI app.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from fleetmem import metrics
from fleetmem.service.bootstrap import App
from fleetmem.surfaces.http.app import create_app
from tests.conftest import make_record, session
from tests.providers.conftest import config, stdio_upstream

#: REQ-21's families, ``harness_`` read as ``fleetmem_`` and ``harness`` as ``agent``, with
#: the label names each must carry (histograms are checked through their ``_count``).
REQ21 = {
    "fleetmem_episodes_recorded_total": {"provider", "outcome"},
    "fleetmem_episode_summaries_total": {"outcome"},
    "fleetmem_provider_up": {"provider"},
    "fleetmem_provider_duration_seconds_count": {"provider", "op"},
    "fleetmem_recalls_total": {"provider", "outcome"},
    "fleetmem_results_dropped_total": {"provider", "reason"},
    "fleetmem_briefings_total": {"agent", "delivery", "outcome"},
    "fleetmem_briefing_bytes": {"agent"},
    "fleetmem_pending": {"provider", "kind"},
}
#: Every label name any fleetmem series may carry: each has a small, fixed set of values.
BOUNDED_LABELS = {
    "provider", "outcome", "op", "reason", "kind", "agent", "delivery", "action", "mode",
    "surface", "served_as", "stance", "source", "how", "le", "segment", "actor", "use",
}  # fmt: skip

QUERY = "quokka zanzibar ledger"
REPO = "github.com/quokka-corp/zanzibar-secret"
AGENT = "api-fixer"
PROVIDER = "mref"
SERIES = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>.*)\})? (?P<value>\S+)$")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def scrape(app: App) -> list[tuple[str, dict[str, str], float]]:
    with TestClient(create_app(app)) as client:
        response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    out = []
    for line in response.text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = SERIES.match(line)
        assert match, line
        labels = dict(LABEL.findall(match["labels"] or ""))
        out.append((match["name"], labels, float(match["value"])))
    return out


def exercise(make_app: Callable[..., App], tmp_path: Path) -> tuple[App, list[str]]:
    """Record, recall (with a scope drop), brief and forget; returns the ids it made."""
    upstream = stdio_upstream(
        PROVIDER, "--store", str(tmp_path / "ref.json"), "--misbehave", "ignore-scope"
    )
    app = make_app(
        config(upstream, f"[agent.{AGENT}]\nmemory_briefing = true\n", provider=PROVIDER)
    )
    made: list[str] = []
    for run_id, repo in (("run-quokka-home", REPO), ("run-quokka-away", "github.com/acme/web")):
        result = app.memory.ingest_run(
            make_record(run_id=run_id, sessions=[session(repo=repo, edits=("billing/x.py",))])
        )
        assert result.status == "recorded", result
        assert result.episode_id is not None
        made += [run_id, result.episode_id]
    before = metrics.sample(
        "fleetmem_results_dropped_total", {"provider": PROVIDER, "reason": "scope"}
    )
    recalled = app.memory.recall(QUERY, scopes=app.memory.scopes_for(repo=REPO))
    assert recalled.degraded is None and recalled.dropped.get("scope", 0) >= 1
    after = metrics.sample(
        "fleetmem_results_dropped_total", {"provider": PROVIDER, "reason": "scope"}
    )
    assert after == before + recalled.dropped["scope"]
    opened = app.runs.open_run(AGENT, repo=REPO, branch="main", run_id="run-quokka-live")
    made += [opened.run_id, opened.token]
    caller = app.runs.resolve_caller(opened.token)
    app.briefings.count_delivery(AGENT, "tool", app.briefings.briefing_for_caller(caller))
    app.memory.forget(made[1])
    app.memory.process_jobs()
    return app, made


def test_every_req21_family_is_scraped_with_its_labels(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    app, _ = exercise(make_app, tmp_path)
    series = scrape(app)
    for family, label_names in REQ21.items():
        found = [labels for name, labels, _ in series if name == family]
        assert found, f"{family} is missing from /metrics"
        assert all(set(labels) == label_names for labels in found), (family, found)
    ops = {
        labels["op"]
        for name, labels, _ in series
        if name == "fleetmem_provider_duration_seconds_count" and labels["provider"] == PROVIDER
    }
    assert ops >= {"record", "recall", "forget", "contract"}
    up = [
        v for n, lab, v in series if n == "fleetmem_provider_up" and lab == {"provider": PROVIDER}
    ]
    assert up == [1.0]
    pending = {
        lab["kind"]
        for n, lab, _ in series
        if n == "fleetmem_pending" and lab["provider"] == PROVIDER
    }
    assert pending == {"record", "forget"}
    delivered = [lab for n, lab, v in series if n == "fleetmem_briefings_total" and v > 0]
    assert {"agent": AGENT, "delivery": "tool", "outcome": "ok"} in delivered


def test_no_label_carries_a_query_an_id_a_repository_or_text(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    # Agents named by earlier tests in this process stay in the process-wide registry.
    earlier = {
        labels["agent"]
        for metric in metrics.REGISTRY.collect()
        for sample in metric.samples
        for labels in (sample.labels,)
        if "agent" in labels
    }
    app, made = exercise(make_app, tmp_path)
    series = scrape(app)
    secrets = [QUERY, *QUERY.split(), REPO, "quokka", "zanzibar", *made]
    for name, labels, _ in series:
        for key, value in labels.items():
            assert key in BOUNDED_LABELS, f"{name} has an unexpected label {key}"
            # Label values are short codes or configured names, never free text.
            assert re.fullmatch(r"[A-Za-z0-9_.+-]{1,40}|\+Inf", value), (name, key, value)
            for secret in secrets:
                assert secret.lower() not in value.lower(), (name, key, value)
        if name.startswith("fleetmem_") and "agent" in labels:
            declared = set(app.config.current.agents)
            assert labels["agent"] in declared | earlier | {"other"}, (name, labels)


def test_provider_up_is_absent_until_the_first_contract_check(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    name = "firstcheck"
    upstream = stdio_upstream(name, "--store", str(tmp_path / "ref.json"))
    app = make_app(config(upstream, provider=name))
    # Built, but nothing has opened the provider's session: no reading yet, no series.
    assert not [s for s in scrape(app) if s[1].get("provider") == name]
    assert app.memory.status()["provider"]["state"] == "ok"  # opens it and waits for the check
    up = [
        v for n, lab, v in scrape(app) if n == "fleetmem_provider_up" and lab == {"provider": name}
    ]
    assert up == [1.0]


def test_a_process_that_marks_its_metrics_unexposed_records_none_and_never_loads_the_client() -> (
    None
):
    """``metrics.unexposed()`` (a hook's own process) makes every series a sink that takes
    the same calls; the client is imported only by a process that reads a series."""
    script = (
        "import json, sys\n"
        "from fleetmem import metrics\n"
        "loaded_at_import = 'prometheus_client' in sys.modules\n"
        "metrics.unexposed()\n"
        "metrics.RECALLS.labels(provider='builtin', outcome='ok').inc()\n"
        "metrics.BRIEFING_BYTES.labels(agent='a').set(3)\n"
        "metrics.PROVIDER_DURATION.labels(provider='builtin', op='recall').observe(0.1)\n"
        "metrics.LIVE_RUNS.set(2)\n"
        "metrics.PENDING.labels('builtin', 'record').dec()\n"
        "print(json.dumps([loaded_at_import, 'prometheus_client' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == [False, False]
    # In this (test) process the series are real and count.
    before = metrics.sample("fleetmem_recalls_total", {"provider": "p", "outcome": "ok"})
    metrics.RECALLS.labels(provider="p", outcome="ok").inc()
    assert metrics.sample("fleetmem_recalls_total", {"provider": "p", "outcome": "ok"}) == (
        before + 1
    )
    with pytest.raises(AttributeError):
        metrics.not_a_series  # noqa: B018
