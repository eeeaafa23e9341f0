"""Two held-out retrieval sets that look like fleetmem's real work, generated from a seed.

Written apart from :mod:`bench.common` (its fleet vocabulary feeds the speed benchmarks): the
texts here come from :mod:`bench.recall_lexicon`, whose hand-written incidents and facts are
split into a development half and a confirmation half. A set is built from one half and one
seed, so the confirmation set shares no target text with the set the weights were chosen on.

* :func:`runs_set`: coding-agent runs across 14 repositories in 11 languages, routine work
  and failures with their fixes, each incident asked about twice after everything is stored:
  once in the incident's own words and once in a paraphrase that shares no content word with
  the run (checked here with the same word splitting FTS5 uses, stems included).
* :func:`facts_set`: the half's facts among at least 500 generated distractors, each target
  asked about by a paraphrase sharing no content word with it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench import recall_lexicon as lex
from fleetmem.core.textquery import STOPWORDS

DEV_SEED = 1701
CONFIRM_SEED = 9277
HALVES = ("dev", "confirm")
#: Routine runs per repository around the incidents.
ROUTINE_PER_REPO = 40
DISTRACTOR_FACTS = 520
_SPLIT = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """A crude stem: enough to say two words would meet in a porter-stemmed index."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    """Stemmed words of ``text`` outside the stopword list, split like FTS5's unicode61."""
    return {stem(w) for w in _SPLIT.findall(text.lower()) if w not in STOPWORDS and len(w) > 1}


def shared_words(a: str, b: str) -> set[str]:
    return content_words(a) & content_words(b)


#: Question kinds: in the incident's words, in other words, and in other words with a cue
#: (the agent that ran it, or the day it ran) that only the cue channels can use.
KINDS = ("lexical", "paraphrase", "agent", "period")


@dataclass(frozen=True)
class RunQuestion:
    text: str
    target: str  # run_id
    repo: str
    kind: str

    @property
    def paraphrase(self) -> bool:
        return self.kind != "lexical"


@dataclass(frozen=True)
class RunsSet:
    half: str
    seed: int
    records: tuple[dict[str, Any], ...]
    questions: tuple[RunQuestion, ...]
    unrelated: tuple[str, ...]

    @property
    def repos(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r["sessions"][0]["repo"] for r in self.records))


def _record(
    run_id: str, agent: str, repo: str, branch: str, at: datetime, text: str, files: list[str]
) -> dict[str, Any]:
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    end = (at + timedelta(minutes=7)).strftime("%Y-%m-%dT%H:%M:%SZ")
    events: list[dict[str, Any]] = [{"type": "edit", "path": path, "at": end} for path in files]
    return {
        "version": 1,
        "run_id": run_id,
        "agent": agent,
        "adapter": "bench",
        "trigger": "manual",
        "started_at": stamp,
        "ended_at": end,
        "outcome": "succeeded",
        "reason": "completed",
        "spawned": True,
        "result_text": text,
        "sessions": [
            {"id": "s1", "cwd": f"/src/{repo}", "repo": repo, "branch": branch, "events": events}
        ],
    }


def runs_set(half: str, seed: int) -> RunsSet:
    """Routine runs in every repository, the half's incidents scattered among them (each
    followed by a verification run on its branch), two questions per incident."""
    if half not in HALVES:
        raise ValueError(f"half: {half!r} is not one of {HALVES}")
    rng = random.Random(seed)
    start = datetime(2026, 9, 1, tzinfo=UTC)
    records: list[dict[str, Any]] = []
    questions: list[RunQuestion] = []
    counter = 0

    def next_id() -> str:
        nonlocal counter
        counter += 1
        return f"run-{half}-{seed}-{counter:05d}"

    for repo in lex.REPOS:
        for _ in range(ROUTINE_PER_REPO):
            mod = rng.choice(repo.modules)
            text = rng.choice(lex.ROUTINE).format(**lex.routine_slots(rng, repo, mod))
            at = start + timedelta(minutes=rng.randrange(0, 60 * 24 * 60))
            branch = rng.choice(("main", "develop", f"feat/{rng.randrange(100, 999)}"))
            agent = rng.choice(lex.AGENTS)
            records.append(_record(next_id(), agent, repo.key, branch, at, text, [mod]))
    incidents = list(lex.INCIDENTS[half])
    rng.shuffle(incidents)
    for i, incident in enumerate(incidents):
        # A module whose path words would meet the paraphrase is not drawn for it.
        fits = [
            (repo, mod)
            for repo in lex.REPOS
            for mod in repo.modules
            if not shared_words(incident.paraphrase, incident.doc.format(mod=mod, tool=repo.tool))
        ]
        if not fits:
            raise ValueError(f"paraphrase of {incident.doc[:40]!r} meets every repository's words")
        repo, mod = rng.choice(fits)
        text = incident.doc.format(mod=mod, tool=repo.tool)
        at = start + timedelta(minutes=rng.randrange(0, 60 * 24 * 60))
        branch = f"fix/{half}-{i}"
        agent = rng.choice(lex.AGENTS)
        run_id = next_id()
        records.append(_record(run_id, agent, repo.key, branch, at, text, [mod]))
        verify = rng.choice(lex.VERIFY).format(tool=repo.tool, mod=mod)
        records.append(
            _record(next_id(), agent, repo.key, branch, at + timedelta(minutes=20), verify, [])
        )
        lexical = incident.lexical.format(mod=mod)
        overlap = shared_words(incident.paraphrase, text)
        if overlap:
            raise ValueError(f"paraphrase of {incident.doc[:40]!r} shares {sorted(overlap)}")
        questions.append(RunQuestion(lexical, run_id, repo.key, "lexical"))
        questions.append(RunQuestion(incident.paraphrase, run_id, repo.key, "paraphrase"))
        # Cued questions: the agent as people write it (display name or first name), or the
        # day the run started, with the paraphrase.
        if i % 2 == 0:
            parts = agent.split("-")
            who = " ".join(p.capitalize() for p in parts) if rng.random() < 0.5 else parts[0]
            who = who[0].upper() + who[1:]
            cued = f"{who}: {incident.paraphrase}"
            questions.append(RunQuestion(cued, run_id, repo.key, "agent"))
        else:
            day = f"{at.day} {at.strftime('%B')}"
            cued = f"On {day}, {incident.paraphrase}"
            questions.append(RunQuestion(cued, run_id, repo.key, "period"))
    records.sort(key=lambda r: str(r["started_at"]))
    return RunsSet(half, seed, tuple(records), tuple(questions), lex.UNRELATED[half])


@dataclass(frozen=True)
class FactQuestion:
    text: str
    target: str  # the fact body


@dataclass(frozen=True)
class FactsSet:
    half: str
    seed: int
    bodies: tuple[str, ...]
    questions: tuple[FactQuestion, ...]
    unrelated: tuple[str, ...]


def facts_set(half: str, seed: int, distractors: int = DISTRACTOR_FACTS) -> FactsSet:
    """The half's target facts among ``distractors`` generated ones, shuffled."""
    if half not in HALVES:
        raise ValueError(f"half: {half!r} is not one of {HALVES}")
    rng = random.Random(seed)
    targets = lex.FACTS[half]
    seen = {fact for fact, _ in targets}
    bodies: list[str] = []
    while len(bodies) < distractors:
        body = lex.distractor_fact(rng)
        if body not in seen:
            seen.add(body)
            bodies.append(body)
    questions = []
    for fact, question in targets:
        overlap = shared_words(fact, question)
        if overlap:
            raise ValueError(f"question {question!r} shares {sorted(overlap)} with its fact")
        questions.append(FactQuestion(question, fact))
    bodies.extend(fact for fact, _ in targets)
    rng.shuffle(bodies)
    return FactsSet(half, seed, tuple(bodies), tuple(questions), lex.UNRELATED[half])
