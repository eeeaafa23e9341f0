"""Switching embedders: stored episodes and facts are re-embedded in the background, progress
is shown, and recall answers throughout (by words for items not yet re-embedded)."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetmem.core.facts import Actor
from fleetmem.service import reembed
from fleetmem.service.bootstrap import App
from fleetmem.service.jobs import BackgroundJobs
from tests.conftest import ingest_text
from tests.fakes.openai_server import FakeOpenAI

REPO = "github.com/acme/api"
MINILM = '[model_api]\nembedding_model = "local:minilm"\n'
ALICE = Actor("human", "alice")

#: Episode texts for the corpus; each run draws a fresh sample and order.
TOPICS = [
    "Fixed the flaky checkout test by waiting for the payment iframe to load.",
    "Upgraded the Postgres driver and rewrote two queries that used removed syntax.",
    "Added retry with backoff to the S3 upload helper after timeouts in CI.",
    "Pinned the Node version in the Dockerfile so builds stop drifting.",
    "Split the monolithic settings module into per-environment files.",
    "Replaced the hand-rolled date parser with the standard library one.",
    "Raised the worker pool size after the queue backed up at peak hours.",
    "Removed the dead feature flag for the old onboarding screens.",
    "Made the CSV export stream rows instead of building the file in memory.",
    "Tightened the CORS policy to the two production origins.",
    "Cached the exchange rates for an hour to stop hammering the provider.",
    "Moved secret loading to the vault client and deleted the .env fallback.",
    "Fixed an off-by-one in pagination that skipped the last invoice.",
    "Taught the linter config about the new generated protobuf folder.",
]
FACTS = [
    "Deploys to production happen only from the release branch.",
    "Integration tests need the local Redis on port 6380.",
    "The billing service owns every table whose name starts with inv_.",
    "Never log full card numbers; the redactor keeps the last four digits.",
    "Database migrations must be reversible and reviewed by two people.",
]


def remote(base_url: str) -> str:
    return f'[model_api]\nbase_url = "{base_url}"\nembedding_model = "bow-64"\n'


def seed(app: App, rng: random.Random, count: int) -> list[str]:
    texts = rng.sample(TOPICS, count)
    for i, text in enumerate(texts):
        run_id = f"run-{rng.randrange(10**9)}-{i}"
        ingest_text(app.memory, run_id, f"2026-11-{i + 1:02d}T10:00:00Z", text)
    for body in rng.sample(FACTS, len(FACTS)):
        app.facts.add(body, actor=ALICE)
    return texts


def test_switching_embedders_reembeds_in_the_background_while_recall_answers(
    make_app: Callable[..., App],
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    rng: random.Random,
) -> None:
    count = rng.randint(9, 12)
    before = make_app(remote(fake_openai.base_url))
    texts = seed(before, rng, count)
    old = before.memory.status()["reembed"]
    assert old["model"] == "bow-64" or old["model"].endswith("bow-64")
    assert old["complete"] and old["episodes"]["done"] == count

    # The same home, now configured for the offline model.
    after = make_app(MINILM)
    progress = after.memory.status()["reembed"]
    assert progress["model"] == "local:all-MiniLM-L6-v2-onnx-int8"
    assert progress["episodes"] == {"total": count, "done": 0, "missing": count}
    assert progress["facts"]["done"] == 0 and progress["facts"]["total"] == len(FACTS)
    assert not progress["complete"]

    # Recall answers before any re-embedding: by words, since no episode has a new vector.
    target = texts[rng.randrange(count)]
    # Enough of its own words that its meaning matches too: a few-word fragment can sit under
    # the relevance floor once the episode has a vector of the new model (core.ranking).
    words = " ".join(target.split()[1:10])
    hits = after.memory.recall(words, scopes=[f"project:{REPO}"]).items
    assert hits, "recall must answer (by words) while vectors are being rebuilt"

    # One background tick with small steps and no time to spare does one step of each kind.
    monkeypatch.setattr(reembed, "EPISODE_STEP", 4)
    monkeypatch.setattr(reembed, "FACT_STEP", 2)
    jobs = BackgroundJobs(after.memory, facts=after.facts, reembed_budget_s=0.0)
    jobs.tick()
    partial = after.memory.status()["reembed"]
    assert partial["episodes"]["done"] == 4 and partial["facts"]["done"] == 2
    assert 0 < partial["percent"] < 100 and not partial["complete"]
    assert after.memory.recall(words, scopes=[f"project:{REPO}"]).items

    # Ticks with a real budget finish the work; then every episode is found by meaning too.
    jobs = BackgroundJobs(after.memory, facts=after.facts, reembed_budget_s=30.0)
    jobs.tick()
    done = after.memory.status()["reembed"]
    assert done["complete"] and done["percent"] == 100.0
    assert done["episodes"]["missing"] == 0 and done["facts"]["missing"] == 0
    assert after.memory.status()["vectors_missing"] == 0


def test_fleetmem_vectors_shows_progress_and_runs_the_rest(
    make_app: Callable[..., App],
    fake_openai: FakeOpenAI,
    home: Path,
    rng: random.Random,
) -> None:
    count = rng.randint(5, 8)
    before = make_app(remote(fake_openai.base_url))
    seed(before, rng, count)

    (home / "fleetmem.toml").write_text(MINILM, encoding="utf-8")
    env = {**os.environ, "FLEETMEM_HOME": str(home), "HOME": str(home.parent)}
    cli = [sys.executable, "-m", "fleetmem", "vectors", "--json"]

    shown = json.loads(subprocess.run(cli, env=env, check=True, capture_output=True).stdout)
    assert shown["embedder"]["state"] == "ok"
    assert shown["reembed"]["episodes"]["missing"] == count
    assert shown["embedded"] is None  # showing progress changes nothing

    ran = subprocess.run([*cli[:-1], "--run"], env=env, check=True, capture_output=True, text=True)
    assert "re-embedding" in ran.stderr  # progress lines while it works
    assert "search          local:all-MiniLM-L6-v2-onnx-int8" in ran.stdout
    # Every episode and fact has its vector: "N of N episodes, M of M facts (100.0 %, complete)".
    vectors = re.search(r"^vectors +(.*)$", ran.stdout, re.MULTILINE)
    assert vectors is not None, ran.stdout
    assert re.fullmatch(
        r"([\d,]+) of \1 episodes, ([\d,]+) of \2 facts \(100\.0 %, complete\)", vectors[1]
    ), vectors[1]
    final = json.loads(subprocess.run(cli, env=env, check=True, capture_output=True).stdout)
    assert final["reembed"]["complete"]
    assert final["reembed"]["facts"]["missing"] == 0
