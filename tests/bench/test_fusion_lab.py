"""The fusion laboratory scores what the product ranks: its replay of a captured question
gives the order ``MemoryService.recall`` gives, so a weight read off the lab is the weight
the product uses."""

from __future__ import annotations

import random
import re
from pathlib import Path

from bench.bench_locomo import _app

from bench import fusion_lab as lab
from fleetmem.core.ranking import calibration_for
from fleetmem.providers.builtin import RankingOptions
from tests.conftest import ingest_text

REPO = "github.com/acme/lab"
SCOPE = f"project:{REPO}"
WORDS = (
    "ledger", "retry", "invoice", "cache", "timeout", "schema", "deploy", "parser",
    "token", "queue", "webhook", "export", "index", "migration", "billing", "search",
)  # fmt: skip


def test_the_lab_replays_the_products_ranking(tmp_path: Path) -> None:
    rng = random.Random()
    app = _app(tmp_path / "home")
    memory, provider = lab._memory(app)
    try:
        for n in range(40):
            text = " ".join(rng.sample(WORDS, 4)) + f" step {n}"
            if n % 7 == 0:
                text += " Should we keep it?"
            ingest_text(
                memory,
                f"r{n}",
                # The first half in one hour of 10 March (threads, hand-offs, a period that
                # splits the candidates), the rest on other months.
                f"2026-{3 if n < 20 else 4 + n % 6:02d}-10T10:{n:02d}:00Z",
                text,
                agent=rng.choice(("coder", "fahim-khan", "review-bot")),
                repo=REPO,
                branch=f"b{n % 5}",
            )
        fuse = lab.shipped(RankingOptions(), calibration_for(provider.embedder.model_id))  # type: ignore[union-attr]
        questions = [" ".join(rng.sample(WORDS, 2)) for _ in range(6)]
        questions += ["what did Fahim change in the ledger", "cache timeout in March"]
        for question in questions:
            captured = lab._capture_one(app, provider, question, frozenset(), "t", [SCOPE])
            found = memory.recall(question, scopes=[SCOPE], limit=20).items
            product = [h.episode_id for h in found]
            assert fuse(captured)[:20] == product, question
    finally:
        memory.close()
        app.close()


def test_package_texts_mask_the_name_and_drop_the_summary() -> None:
    texts = lab.package_texts()
    assert len(texts) >= 20  # the bench's own environment has dozens of distributions
    for name, summary, body in texts:
        forms = {name, name.replace("-", "_"), name.replace("-", "")}
        pattern = re.compile("|".join(re.escape(f) for f in forms), re.IGNORECASE)
        assert not pattern.search(summary.replace("this package", "")), name
        assert summary.strip() not in body
