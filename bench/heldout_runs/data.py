"""The held-out recall set: coding-agent runs over 10 repositories, and questions about them.

What it is: two halves of synthetic but realistic run records (the JSON a fleet of coding
agents reports when a run ends) in 10 repositories of a fictional organisation, with questions
whose answer is one run. Built by :func:`build`, a pure function of the half's seed.

Who wrote it and when: written on 2026-12-07 by a helper session of the project, from a brief
and apart from ``bench/recall_sets.py``, ``bench/recall_lexicon.py`` and ``bench/common.py``
(its own incidents, vocabulary, stop list and stemmer; only the ``RunQuestion`` / ``RunsSet``
dataclasses of :mod:`bench.recall_sets` are reused, so the benchmark's ``_ingest`` / ``_ask``
machinery runs on it). It was never used to tune the ranking: the defaults were chosen before
it existed, and it is meant to stay that way (measure on it, never choose on it).

Halves: ``"A"`` (seed 4242) and ``"B"`` (seed 777). Each half holds its own 40 incidents (the
even or odd ones of :data:`.incidents.INCIDENTS`), 12 earlier attempts by other agents on
incidents' problems ("twins"), reviewer follow-ups, and routine runs generated from
:data:`.vocab.REPOS` (26 per repository).

Questions per half: one lexical and one paraphrased question per incident (80), 12 questions
naming an agent, 10 unrelated ones (no target). Each paraphrase is the first of the
incident's candidates that shares no content word with the target's episode text and its
neighbours' on the same branch, checked here by a crude stemmer and by SQLite's FTS5 porter
tokenizer (:func:`shared_content`); an incident without such a candidate is reported in
:attr:`Info.problems`. ``python -m bench.heldout_runs.data`` prints both halves and any
problem.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.recall_sets import RunQuestion, RunsSet
from fleetmem.core.textquery import STOPWORDS

from .incidents import INCIDENTS, Incident
from .vocab import ADAPTERS, MODELS, ORG, PERSONS, REPOS, ROLES, UNRELATED

SEEDS: dict[str, int] = {"A": 4242, "B": 777}
FILLER_PER_REPO = 26
N_AGENT_Q = 12

# ------------------------------------------------------------------ word checks
_STOP_WORDS = """a an the and or but if of to in on at by for with from as is are was were be been
being it its this that these those what which who whom whose when where why how did do does
done doing we our us you your i me my they them their he she his her there here not no so then
than too very can could would should will just about into out up down over under again once all
any some each every more most other such only own same has have had get got s t one also after
before while now still ever whenever someone somebody anyone anything something way much many
well off per via whether going went go gone let lets ok yes last first"""
#: Words the crude check ignores (the word channel's own list is ``STOPWORDS``).
STOP = frozenset(_STOP_WORDS.split())


def _split(text: str) -> list[str]:
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return re.findall(r"[a-z0-9]+", text.lower())


def stem(w: str) -> str:
    for suf, rep in (
        ("ational", "ate"),
        ("ization", "ize"),
        ("ations", ""),
        ("ation", ""),
        ("ments", ""),
        ("ment", ""),
        ("ness", ""),
        ("ings", ""),
        ("ing", ""),
        ("ies", "y"),
        ("ied", "y"),
        ("ers", ""),
        ("er", ""),
        ("edly", ""),
        ("ed", ""),
        ("es", ""),
        ("ly", ""),
        ("s", ""),
    ):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)] + rep
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]
    return w


def content_words(text: str) -> set[str]:
    return {w for w in _split(text) if w not in STOP and len(w) > 1}


def shared_content(question: str, doc: str) -> set[str]:
    """Question words sharing a crude stem with the document (beyond a simple stop list), or
    found in it by FTS5's porter tokenizer (beyond the word channel's own, shorter stop list)."""
    dstems = {stem(w) for w in content_words(doc)}
    shared = {w for w in content_words(question) if stem(w) in dstems}
    con = sqlite3.connect(":memory:")
    con.execute("create virtual table t using fts5(x, tokenize='porter unicode61')")
    con.execute("insert into t values (?)", (doc,))
    # the word channel's own stop list: a word it searches with must not match either
    searched = {w for w in _split(question) if w not in STOPWORDS}
    for w in searched - shared:
        if con.execute("select count(*) from t where t match ?", (f'"{w}"',)).fetchone()[0]:
            shared.add(w)
    con.close()
    return shared


def episode_text(rec: dict[str, Any]) -> str:
    """Every string of the record that reaches the episode's indexed text."""
    s = rec["sessions"][0]
    parts = [
        rec["agent"],
        rec["model"]["served"] or "",
        s["repo"],
        s["branch"],
        rec["outcome"],
        rec["reason"],
        rec.get("pull_request") or "",
        rec["result_text"],
    ]
    parts += [e["path"] for e in s["events"] if e["type"] == "edit"]
    parts += [e["error_class"] for e in s["events"] if e["type"] == "verify" and not e["passed"]]
    return " \n".join(parts)


# ------------------------------------------------------------------ records
def _record(
    rng: random.Random,
    run_id: str,
    agent: str,
    repo: str,
    branch: str,
    started: datetime,
    outcome: str,
    reason: str,
    text: str,
    files: list[str],
    err: str | None,
) -> dict[str, Any]:
    v = REPOS[repo]
    events: list[dict[str, Any]] = []
    for f in files:
        events.append({"type": "edit", "path": f})
        if rng.random() < 0.3:
            events.append({"type": "tool_call", "name": "bash", "args": {"cmd": "make test"}})
    if err:
        for _ in range(rng.choice((1, 1, 2, 3))):
            events.append({"type": "verify", "passed": False, "error_class": err})
    if outcome == "succeeded":
        events.append({"type": "verify", "passed": True, "error_class": "unknown"})
    dur = timedelta(minutes=rng.randint(3, 55), seconds=rng.randint(0, 59))
    pr = None
    if outcome == "succeeded" and rng.random() < 0.5:
        pr = f"https://{ORG}/{repo}/pull/{rng.randint(100, 4800)}"
    return {
        "version": 1,
        "run_id": run_id,
        "agent": agent,
        "adapter": rng.choice(ADAPTERS),
        "trace_id": f"{rng.getrandbits(128):032x}",
        "model": {"served": rng.choice(MODELS), "configured": None},
        "trigger": rng.choice(("manual", "manual", "schedule", "webhook:github")),
        "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "ended_at": (started + dur).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "outcome": outcome,
        "reason": reason,
        "cost": {"usd": round(rng.uniform(0.02, 3.5), 4), "source": "reported"},
        "spawned": True,
        "prompt": "(not part of the episode)",
        "result_text": text,
        "sessions": [
            {
                "id": "s1",
                "cwd": v["cwd"],
                "repo": f"{ORG}/{repo}",
                "branch": branch,
                "events": events,
            }
        ],
        "pull_request": pr,
    }


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:40]


# ------------------------------------------------------------------ routine runs
def _filler(rng: random.Random, repo: str) -> tuple[str, list[str], str, str, str | None, str, str]:
    """One routine run: (text, files, outcome, reason, err, branch, kind)."""
    v = REPOS[repo]
    kind = rng.choices(
        [
            "dep",
            "flaky",
            "ci",
            "lint",
            "refactor",
            "docs",
            "feature",
            "tests",
            "perf",
            "investigate",
            "security",
        ],
        weights=[14, 10, 10, 8, 9, 6, 14, 8, 7, 8, 6],
    )[0]
    f1, f2 = rng.sample(v["files"], 2)
    ec, emsg = rng.choice(v["errors"])
    comp = rng.choice(v["components"])
    if kind == "dep":
        name, old, new = rng.choice(v["deps"])
        end = rng.choice(
            [
                ("All checks pass.", "succeeded", "completed", None),
                (
                    "Build and unit tests are green; no code changes were needed.",
                    "succeeded",
                    "completed",
                    None,
                ),
                (
                    f"One deprecation warning remains in {f1}; left it for a follow-up.",
                    "succeeded",
                    "completed",
                    None,
                ),
                (
                    f"CI failed on {rng.choice(v['ci_jobs'])}: {emsg}. Reverted the bump.",
                    "failed",
                    "verify_failed",
                    ec,
                ),
                ("Superseded by a grouped dependency update.", "cancelled", "superseded", None),
            ]
        )
        text = f"Bumped {name} from {old} to {new} in {v['manifest']}. {end[0]}"
        files = [v["manifest"]] + ([f1] if rng.random() < 0.4 else [])
        return text, files, end[1], end[2], end[3], f"deps/{_slug(name.split('/')[-1])}-{new}", kind
    if kind == "flaky":
        test = rng.choice(v["tests"])
        cause = rng.choice(
            [
                "It depends on test ordering: shared state left behind by an earlier test.",
                f"It sleeps {rng.choice((50, 100, 250))}ms and races a background goroutine"
                " or task.",
                "It asserts on the iteration order of an unordered map.",
                "It reads the wall clock and fails near midnight UTC.",
                f"Port {rng.randint(8000, 9999)} collides with another test when run in parallel.",
            ]
        )
        end = rng.choice(
            [
                (
                    "Fixed the test and ran it 200 times locally without a failure.",
                    "succeeded",
                    "completed",
                    None,
                ),
                (
                    "Quarantined it and opened an issue with the failure log.",
                    "succeeded",
                    "completed",
                    None,
                ),
                (
                    "Could not reproduce locally in 300 runs; added logging and gave up.",
                    "failed",
                    "agent_error",
                    ec,
                ),
            ]
        )
        text = (
            f"{test} is flaky on CI (about {rng.choice((2, 5, 8, 15))}% of runs). {cause} {end[0]}"
        )
        return text, [f1], end[1], end[2], end[3], f"fix/flaky-{_slug(test)}", kind
    if kind == "ci":
        job = rng.choice(v["ci_jobs"])
        end = rng.choice(
            [
                (
                    "Root cause was a stale cache key; bumped the cache version.",
                    "succeeded",
                    "completed",
                    None,
                ),
                (
                    "The runner image changed underneath us; pinned the image digest.",
                    "succeeded",
                    "completed",
                    None,
                ),
                (
                    f"A real regression from the previous merge in {f1}; fixed it.",
                    "succeeded",
                    "completed",
                    None,
                ),
                (
                    "Retried twice and it passed; looks like an infrastructure blip.",
                    "succeeded",
                    "completed",
                    None,
                ),
                ("Could not find the cause before the deadline.", "timed_out", "deadline", ec),
            ]
        )
        text = f"CI job {job} failed on main with: {emsg}. {end[0]}"
        return text, [f1] if end[1] == "succeeded" else [], end[1], end[2], end[3], "main", kind
    if kind == "lint":
        linter = rng.choice(v["linters"])
        kinds = ", ".join(rng.sample(v["lint_kinds"], 2))
        d = rng.choice(v["dirs"])
        text = (
            f"Ran {linter} across {d} and fixed {rng.randint(3, 60)} warnings ({kinds})."
            " No behaviour change."
        )
        return (
            text,
            [f1, f2],
            "succeeded",
            "completed",
            None,
            f"chore/{_slug(linter)}-cleanup",
            kind,
        )
    if kind == "refactor":
        note = rng.choice(
            [
                "no behaviour change, tests unchanged",
                "added unit tests for the extracted code",
                "the public API stays the same",
                "reviewers asked for smaller functions",
            ]
        )
        end = rng.choice(
            [
                ("", "succeeded", "completed", None),
                ("", "succeeded", "completed", None),
                (f" Tests failed afterwards: {emsg}.", "failed", "verify_failed", ec),
            ]
        )
        text = f"Refactored {comp}: moved logic out of {f1} into {f2}; {note}.{end[0]}"
        return text, [f1, f2], end[1], end[2], end[3], f"refactor/{_slug(comp)}", kind
    if kind == "docs":
        doc = rng.choice(v["docs"])
        text = f"Documented {comp} in {doc}: " + rng.choice(
            [
                "added a section on configuration and defaults.",
                "rewrote the setup steps for new contributors.",
                "added a troubleshooting section with common errors.",
                "described the release process step by step.",
            ]
        )
        return text, [doc], "succeeded", "completed", None, f"docs/{_slug(comp)}", kind
    if kind == "feature":
        feat = rng.choice(v["features"])
        end = rng.choice(
            [
                (f"Added {feat}. Tests added in {f2}.", "succeeded", "completed", None),
                (
                    f"Added {feat}; behind a flag until product signs off.",
                    "succeeded",
                    "completed",
                    None,
                ),
                (
                    f"Started adding {feat}, but {emsg}; stopped there.",
                    "failed",
                    "verify_failed",
                    ec,
                ),
                (
                    f"Partially added {feat}: the backend part is done, the UI and docs are not.",
                    "failed",
                    "agent_error",
                    None,
                ),
            ]
        )
        return end[0], [f1, f2], end[1], end[2], end[3], f"feat/{_slug(feat)}", kind
    if kind == "tests":
        a = rng.randint(35, 70)
        text = (
            f"Added tests for {comp}: coverage of {f1} went from {a}% to {a + rng.randint(5, 25)}%."
        )
        return text, [f1, f2], "succeeded", "completed", None, f"test/{_slug(comp)}", kind
    if kind == "perf":
        sym = rng.choice(v["symptoms"])
        end = rng.choice(
            [
                (
                    f"Profiled {sym}: most time goes to {comp}; cached the result and cut it"
                    f" by {rng.randint(20, 70)}%.",
                    "succeeded",
                    "completed",
                    None,
                ),
                (
                    f"Profiled {sym}: nothing obvious in {comp}; recorded the flame graph"
                    " in the issue.",
                    "failed",
                    "agent_error",
                    None,
                ),
                (
                    f"Looked at {sym}; the change in {f1} helped in benchmarks but {emsg}.",
                    "failed",
                    "verify_failed",
                    ec,
                ),
            ]
        )
        return end[0], [f1], end[1], end[2], end[3], f"perf/{_slug(sym)}", kind
    if kind == "investigate":
        sym = rng.choice(v["symptoms"])
        end = rng.choice(
            [
                (
                    "Reproduced it and wrote up the steps; no fix yet.",
                    "failed",
                    "agent_error",
                    None,
                ),
                ("Ran out of time while bisecting.", "timed_out", "deadline", None),
                (f"Found the cause in {f1} and fixed it.", "succeeded", "completed", None),
                (
                    "Stopped by the operator: a duplicate of an open issue.",
                    "cancelled",
                    "operator_cancelled",
                    None,
                ),
            ]
        )
        text = f"Triage of {sym} reported by support. {end[0]}"
        return (
            text,
            [f1] if end[1] == "succeeded" else [],
            end[1],
            end[2],
            end[3],
            f"triage/{_slug(sym)}",
            kind,
        )
    # security
    name, old, new = rng.choice(v["deps"])
    adv = (
        f"GHSA-{rng.choice('2345679cfghjmpqrvwx')}{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
    )
    end = rng.choice(
        [
            (
                f"Dependency audit flagged {adv} in {name} {old}; upgraded to {new}.",
                "succeeded",
                "completed",
                None,
            ),
            (
                f"Dependency audit flagged {adv} in {name} {old}; not reachable from our code,"
                " added an ignore with a justification.",
                "succeeded",
                "completed",
                None,
            ),
            (
                f"Dependency audit flagged {adv} in {name} {old}; the fixed release breaks"
                f" the build: {emsg}.",
                "failed",
                "verify_failed",
                ec,
            ),
        ]
    )
    return (
        end[0],
        [v["manifest"]],
        end[1],
        end[2],
        end[3],
        f"sec/{_slug(name.split('/')[-1])}",
        kind,
    )


FILLER_AGENT_BIAS = {
    "dep": "dep-updater",
    "ci": "ci-fixer",
    "security": "sec-scanner",
    "investigate": "triage-agent",
    "lint": "codex",
}
TWIN_ENDS = [
    (
        "Could not reproduce it locally after several attempts; handing it back with notes.",
        "failed",
        "agent_error",
    ),
    ("Stopped when the staging environment went down; no changes pushed.", "timed_out", "deadline"),
    ("Wrote a failing test for it but ran out of time before a change.", "timed_out", "deadline"),
    ("Superseded by another run assigned to the same ticket.", "cancelled", "superseded"),
]
TWIN_STARTS = ["Picked up the ticket about {t}.", "Started on {t}.", "Looked into {t}."]
REVIEW_NOTES = [
    "approved; asked for a changelog entry.",
    "approved after one round of comments.",
    "requested a test for the failure path.",
    "left two nits about naming; approved.",
]


# ------------------------------------------------------------------ the set
@dataclass(frozen=True)
class Info:
    """What :func:`build` knows beside the :class:`RunsSet`, for reports and checks."""

    #: one entry per question, in order: kind, the incident's slug, and for lexical questions
    #: the words shared with the target; for agent questions the agent named and whether the
    #: target is the incident's run or its twin
    meta_q: list[dict[str, Any]]
    #: data problems found while building (a lexical question sharing under two words with its
    #: target, an incident without a paraphrase sharing none); empty for a sound set
    problems: list[str]
    #: per run id: kind (incident, twin, review, filler:<kind>) and the incident's slug
    runs_meta: dict[str, dict[str, Any]]
    #: per run id: the run's result text
    texts: dict[str, str]
    #: per run id: the agent that ran it
    agents: dict[str, str]
    #: per question (same order as ``meta_q``): the text the paraphrase check read, the target's
    #: episode text and its neighbours' on the same branch
    docs: list[str]


def _display(agent: str, rng: random.Random) -> str:
    if agent in PERSONS:
        first, last = agent.split("-", 1)
        return rng.choice(
            [
                first.capitalize(),
                first.capitalize(),
                f"{first.capitalize()} {last.replace('-', ' ').title()}",
            ]
        )
    return agent


def build(half: str) -> tuple[RunsSet, Info]:
    """One half of the set (``"A"`` or ``"B"``) and what was known while building it."""
    seed = SEEDS[half]
    rng = random.Random(seed)
    mine = [inc for i, inc in enumerate(INCIDENTS) if i % 2 == (0 if half == "A" else 1)]
    teams = {repo: rng.sample(PERSONS, 4) + rng.sample(ROLES, 3) for repo in REPOS}
    base = datetime(2026, 7, 1, tzinfo=UTC)
    used_times: set[datetime] = set()

    def when(lo_day: int = 0, hi_day: int = 150) -> datetime:
        while True:
            t = base + timedelta(
                days=rng.randint(lo_day, hi_day),
                hours=rng.randint(6, 22),
                minutes=rng.randint(0, 59),
                seconds=rng.randint(0, 59),
            )
            if t not in used_times:
                used_times.add(t)
                return t

    # (record, meta) before run ids are assigned; sorted by time at the end
    items: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def add(
        agent: str,
        repo: str,
        branch: str,
        started: datetime,
        outcome: str,
        reason: str,
        text: str,
        files: list[str],
        err: str | None,
        meta: dict[str, Any],
    ) -> dict[str, Any]:
        rec = _record(
            rng, "pending", agent, repo, branch, started, outcome, reason, text, files, err
        )
        items.append((rec, meta))
        return rec

    # incidents
    incident_recs: list[tuple[Incident, dict[str, Any]]] = []
    for inc in mine:
        team = teams[inc.repo]
        agent = rng.choice(team[:4]) if rng.random() < 0.75 else rng.choice(team[4:])
        t = when(20, 150)
        branch = ("fix/" if inc.outcome == "succeeded" else "wip/") + inc.slug
        rec = add(
            agent,
            inc.repo,
            branch,
            t,
            inc.outcome,
            inc.reason,
            inc.text,
            list(inc.files),
            inc.err,
            {"kind": "incident", "slug": inc.slug},
        )
        incident_recs.append((inc, rec))
        if rng.random() < 0.25:  # a reviewer's run on the same branch within the hour
            rt = t + timedelta(minutes=rng.randint(25, 50))
            used_times.add(rt)
            add(
                "review-bot",
                inc.repo,
                branch,
                rt,
                "succeeded",
                "completed",
                f"Reviewed {branch}: {rng.choice(REVIEW_NOTES)}",
                [],
                None,
                {"kind": "review"},
            )

    # twins: another agent's earlier attempt on the same problem, for the named-agent questions
    agent_qs: list[tuple[str, dict[str, Any], Incident, str]] = []
    chosen = rng.sample(incident_recs, N_AGENT_Q)
    for j, (inc, rec) in enumerate(chosen):
        team = teams[inc.repo]
        other = rng.choice([a for a in team if a != rec["agent"]])
        t0 = datetime.strptime(rec["started_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        tt = t0 - timedelta(days=rng.randint(1, 12), minutes=rng.randint(0, 300))
        used_times.add(tt)
        end = rng.choice(TWIN_ENDS)
        text = (
            rng.choice(TWIN_STARTS).format(t=inc.topic)
            + " "
            + f"Read through {inc.files[0]} and the recent commits. "
            + end[0]
        )
        twin = add(
            other,
            inc.repo,
            f"wip/{inc.slug}-{other}",
            tt,
            end[1],
            end[2],
            text,
            [],
            None,
            {"kind": "twin", "slug": inc.slug},
        )
        # two of three ask about the resolution by its agent, one in three about the attempt
        if j % 3 == 2:
            agent_qs.append(("twin", twin, inc, other))
        else:
            agent_qs.append(("incident", rec, inc, rec["agent"]))

    # routine runs
    for repo in REPOS:
        team = teams[repo]
        for _ in range(FILLER_PER_REPO):
            text, files, outcome, reason, err, branch, kind = _filler(rng, repo)
            bias = FILLER_AGENT_BIAS.get(kind)
            agent = bias if bias in team and rng.random() < 0.6 else rng.choice(team)
            t = when()
            add(
                agent,
                repo,
                branch,
                t,
                outcome,
                reason,
                text,
                files,
                err,
                {"kind": "filler:" + kind},
            )
            if kind == "feature" and rng.random() < 0.15 and branch != "main":
                rt = t + timedelta(minutes=rng.randint(20, 50))
                used_times.add(rt)
                add(
                    "review-bot",
                    repo,
                    branch,
                    rt,
                    "succeeded",
                    "completed",
                    f"Reviewed {branch}: {rng.choice(REVIEW_NOTES)}",
                    [],
                    None,
                    {"kind": "review"},
                )

    items.sort(key=lambda it: it[0]["started_at"])
    for n, (rec, meta) in enumerate(items, 1):
        rec["run_id"] = f"{half.lower()}-{n:04d}-{rng.getrandbits(24):06x}"
        meta["run_id"] = rec["run_id"]

    # questions
    questions: list[RunQuestion] = []
    meta_q: list[dict[str, Any]] = []
    docs: list[str] = []
    problems: list[str] = []
    by_branch: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r, _ in items:
        by_branch.setdefault((r["sessions"][0]["repo"], r["sessions"][0]["branch"]), []).append(r)
    for inc, rec in incident_recs:
        # the run's own text, and its neighbours' on the same branch (the context column)
        doc = " \n".join(
            episode_text(r)
            for r in by_branch[(rec["sessions"][0]["repo"], rec["sessions"][0]["branch"])]
        )
        lex_shared = shared_content(inc.lex, doc)
        if len(lex_shared) < 2:
            problems.append(f"lexical {inc.slug}: shares only {lex_shared}")
        questions.append(RunQuestion(inc.lex, rec["run_id"], f"{ORG}/{inc.repo}", "lexical"))
        meta_q.append({"kind": "lexical", "slug": inc.slug, "shared": sorted(lex_shared)})
        docs.append(doc)
        para = None
        tried = []
        for cand in inc.paras:
            sh = shared_content(cand, doc)
            if not sh:
                para = cand
                break
            tried.append(f"{cand!r} shares {sorted(sh)}")
        if para is None:
            problems.append(f"paraphrase {inc.slug}: " + " | ".join(tried))
        if para is not None:
            questions.append(RunQuestion(para, rec["run_id"], f"{ORG}/{inc.repo}", "paraphrase"))
            meta_q.append({"kind": "paraphrase", "slug": inc.slug, "shared": []})
            docs.append(doc)
    verbs = [
        "What did {n} do about {t}?",
        "What did {n} find out about {t}?",
        "How did {n} handle {t}?",
        "What happened when {n} worked on {t}?",
    ]
    for which, rec, inc, agent in agent_qs:
        text = rng.choice(verbs).format(n=_display(agent, rng), t=inc.topic)
        questions.append(RunQuestion(text, rec["run_id"], f"{ORG}/{inc.repo}", "agent"))
        meta_q.append({"kind": "agent", "slug": inc.slug, "target_is": which, "agent": agent})
        docs.append(episode_text(rec))

    data = RunsSet(
        half=half,
        seed=seed,
        records=tuple(r for r, _ in items),
        questions=tuple(questions),
        unrelated=tuple(UNRELATED[half]),
    )
    info = Info(
        meta_q=meta_q,
        problems=problems,
        runs_meta={m["run_id"]: m for _, m in items},
        texts={r["run_id"]: r["result_text"] for r, _ in items},
        agents={r["run_id"]: r["agent"] for r, _ in items},
        docs=docs,
    )
    return data, info


def main(argv: Sequence[str] = ()) -> int:
    """Print both halves' sizes and any data problem; 1 when there is one."""
    from collections import Counter

    bad = 0
    for half in argv or tuple(SEEDS):
        data, info = build(half)
        kinds = dict(Counter(q.kind for q in data.questions))
        print(
            f"{half} (seed {data.seed}): {len(data.records)} runs, {len(data.repos)} repos,"
            f" questions {kinds}, unrelated {len(data.unrelated)}"
        )
        print("  outcomes", dict(Counter(r["outcome"] for r in data.records)))
        print("  agents", len({r["agent"] for r in data.records}))
        for problem in info.problems:
            print("  !", problem)
        bad += len(info.problems)
    return 1 if bad else 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
