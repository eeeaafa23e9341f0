"""The right facts per run: pinned facts, then the facts relevant to the run's prompt, through
the real context assembly (real SQLite, the offline MiniLM embedder)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from fleetmem.core.facts import Actor, visible_scopes
from fleetmem.service.bootstrap import App
from fleetmem.service.context_facts import (
    MAX_RELEVANT,
    NO_MATCH,
    NO_OTHER_MATCH,
    RELEVANCE_FLOOR,
    focus_of,
    relevant_facts,
)
from tests.conftest import home_store, sql_rows

MINILM = '[model_api]\nembedding_model = "local:minilm"\n'
AGENT = "api-fixer"
REPO = "github.com/acme/api"
HUMAN = Actor("human", "marina")
# Facts about the office: nothing a coding prompt is about.
OFFICE = [
    "Parking is first come, first served.",
    "The coffee machine on floor two is descaled on Wednesdays.",
    "Lunch is catered every second Thursday.",
    "Visitors sign in at the front desk before nine.",
    "The quiet room is booked through the shared calendar.",
    "Bicycles go in the basement rack, not the lobby.",
    "The office closes at eight in the evening.",
    "Printer toner is ordered by the office manager.",
    "Plants on the terrace are watered by the facilities team.",
    "Lost and found is kept in the cupboard by reception.",
]
LEDGER = "The ledger tests are flaky on CI: rerun them with a fixed random seed."


def _exposed(home: Path, run_id: str) -> set[str]:
    with home_store(home) as store:
        rows = sql_rows(store, "SELECT fact_id FROM fact_exposures WHERE run_id = ?", (run_id,))
    return {str(r[0]) for r in rows}


def _world(app: App) -> dict[str, str]:
    ids = {"ledger": app.facts.add(LEDGER, actor=HUMAN).fact.id}
    ids["pinned"] = app.facts.add("Run make test before every push.", actor=HUMAN, pin=True).fact.id
    office = list(OFFICE)
    random.shuffle(office)
    for body in office:  # all newer than the ledger fact
        ids[body] = app.facts.add(body, actor=HUMAN).fact.id
    return ids


def test_a_one_shot_gets_its_pins_and_the_fact_its_prompt_is_about(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app(MINILM)
    ids = _world(app)
    context = app.files.assemble(
        AGENT, repo=REPO, run_id="run-ledger", about="Fix the flaky ledger test"
    )
    facts = context.text.split("## Memory facts", 1)[1] if "## Memory facts" in context.text else ""
    assert ids["ledger"] in facts and ids["pinned"] in facts
    assert facts.index(ids["pinned"]) < facts.index(ids["ledger"])  # pins first
    assert not any(ids[body] in facts for body in OFFICE)
    assert NO_MATCH not in facts
    # Exposure is recorded for everything shown, and nothing else.
    assert _exposed(home, "run-ledger") == {ids["pinned"], ids["ledger"]}


def test_a_prompt_matching_nothing_says_so_and_recall_off_has_no_block(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app(MINILM)
    ids = _world(app)
    context = app.files.assemble(
        AGENT, repo=REPO, run_id="run-none", about="Port the tokenizer benchmarks to Rust"
    )
    assert NO_OTHER_MATCH in context.text and ids["pinned"] in context.text
    assert not any(ids[body] in context.text for body in OFFICE)
    assert _exposed(home, "run-none") == {ids["pinned"]}
    off = make_app(MINILM + f"\n[agent.{AGENT}]\nmemory_recall = false\n")
    quiet = off.files.assemble(AGENT, repo=REPO, run_id="run-off", about="Fix the ledger")
    assert NO_MATCH not in quiet.text and ids["pinned"] not in quiet.text
    assert "## Memory facts" not in quiet.text


def test_relevant_facts_are_capped_filtered_and_ranked(make_app: Callable[..., App]) -> None:
    app = make_app(MINILM)
    bodies = [f"The ledger job number {n} retries failed ledger exports twice." for n in range(12)]
    ids = [app.facts.add(b, actor=HUMAN).fact.id for b in bodies]
    found = relevant_facts(app.facts, "ledger exports retries", agent=AGENT, repo=REPO)
    assert 0 < len(found) <= MAX_RELEVANT
    assert all(i.score >= RELEVANCE_FLOOR for i in found)
    assert [i.score for i in found] == sorted((i.score for i in found), reverse=True)
    seen = {found[0].fact_id}
    again = relevant_facts(
        app.facts, "ledger exports retries", agent=AGENT, repo=REPO, exclude=seen
    )
    assert found[0].fact_id not in {i.fact_id for i in again} and set(ids) >= {
        i.fact_id for i in again
    }
    assert relevant_facts(app.facts, "   ", agent=AGENT, repo=REPO) == ()


def _word(rng: random.Random) -> str:
    """A fresh word no model or fact has seen: consonant-vowel syllables."""
    return "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(4))


def test_a_prompt_naming_its_subject_finds_the_one_fact_holding_its_pair_of_words(
    make_app: Callable[..., App], rng: random.Random
) -> None:
    # Words only (no embedder), so what the prompt alone matches does not depend on how a
    # model places words it never saw.
    app = make_app('[model_api]\nembedding_model = ""\n')
    subject, state, other = _word(rng), _word(rng), _word(rng)
    target = app.facts.add(
        f"The {subject} exports are {state} after a deploy: wait for the cache to warm.",
        actor=HUMAN,
    ).fact.id
    # The same everyday words in many facts, and each rare word in other facts too.
    for n in range(12):
        app.facts.add(f"Deploy step {n}: the exports wait for the cache.", actor=HUMAN)
    app.facts.add(f"Ask {subject} owners before a rename.", actor=HUMAN)
    app.facts.add(f"Ask {subject} owners before a release.", actor=HUMAN)
    app.facts.add(f"{state.capitalize()} builds are retried once by the {other} job.", actor=HUMAN)
    prompt = f"Please fix the {state} {subject} exports problem after the deploy."
    scopes = visible_scopes(AGENT, REPO)
    # Of the pairs only the target holds, the rarest words first.
    assert focus_of(app.facts, prompt, scopes=scopes) == [f"{state} {subject}"]
    found = [i.fact_id for i in relevant_facts(app.facts, prompt, agent=AGENT, repo=REPO)]
    assert found[:1] == [target]
    # The prompt alone does not find it: the fact does not hold all of the prompt's words.
    alone = relevant_facts(app.facts, prompt, agent=AGENT, repo=REPO, focus_pairs=0)
    assert target not in [i.fact_id for i in alone]
    # A pair that two facts hold is no focus, and neither is one known word.
    assert focus_of(app.facts, f"Ask the {subject} owners.", scopes=scopes) == []
    assert focus_of(app.facts, f"Fix the {subject} problem.", scopes=scopes) == []
    holders = app.facts.facts_containing([subject, "exports", "nowhere"], scopes=scopes)
    assert {k: len(v) for k, v in holders.items()} == {subject: 3, "exports": 13, "nowhere": 0}
    assert target in holders[subject] & holders["exports"]
