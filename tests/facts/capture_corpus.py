"""Generated prompts for measuring capture: ordinary coding prompts (many of which use the
words "remember", "forget" and "note" without asking to keep anything) and requests to
remember, phrased as people phrase them.

Every template belongs to one half: ``dev`` (the half the phrasing rules were written
against) or ``confirm`` (held out: written separately, never used to tune the rules).
Values are drawn fresh from a seeded random source, so each run measures new prompts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

FILES = [
    "ledger.py",
    "billing/api.ts",
    "src/cache.rs",
    "the Makefile",
    "tests/test_auth.py",
    "docker-compose.yml",
    "cmd/server/main.go",
    "the README",
    "config/settings.toml",
    "web/login.tsx",
    "scripts/deploy.sh",
    "the migration for invoices",
]
THINGS = [
    "the flaky ledger test",
    "the login redirect",
    "the retry loop",
    "the CSV export",
    "the rate limiter",
    "the webhook handler",
    "the search index",
    "the nightly job",
    "the pagination bug",
    "the invoice totals",
    "the session timeout",
    "the upload form",
]
DAYS = ["Mondays", "Fridays", "weekends", "the first of the month", "release days"]
TOOLS = ["pnpm", "uv", "poetry", "ruff", "black", "pytest -x", "make lint", "cargo nextest"]
SYSTEMS = ["staging", "billing", "the payments service", "prod", "the search cluster"]
PEOPLE = ["Dana", "Lee", "Priya", "the platform team", "Marco", "QA"]
NUMBERS = ["3", "10", "42", "200", "five", "two"]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        file=rng.choice(FILES),
        thing=rng.choice(THINGS),
        day=rng.choice(DAYS),
        tool=rng.choice(TOOLS),
        tool2=rng.choice(TOOLS),
        system=rng.choice(SYSTEMS),
        person=rng.choice(PEOPLE),
        n=rng.choice(NUMBERS),
    )


# Ordinary prompts: no request to keep anything, though many use the trigger words.
ORDINARY = {
    "dev": [
        "Fix {thing} in {file}.",
        "Why does {thing} fail on CI but not locally?",
        "Do you remember how we set up {thing}?",
        "I can't remember where {thing} is configured, can you find it?",
        "Add a 'remember me' checkbox to {file}.",
        "Don't forget to add a test for {thing}.",
        "Refactor {file} so {thing} is easier to follow.",
        "Note that {system} returns 404 for missing users, so handle it in {file}.",
        "Run {tool} and fix what it reports.",
        "Keep in mind that {thing} is slow; profile it before changing {file}.",
        "Rename remember_user() in {file} to persist_user().",
        "The cache should remember the last {n} entries; right now {thing} drops them.",
        "Remember to run {tool} before you commit.",
        "Write a migration for {thing} and update {file}.",
        "I remember {person} fixing {thing} once; check git log for {file}.",
        "Can you remember which flag turns off {thing}?",
        "Please review {file} and tell me what {thing} does.",
        "Don't forget the changelog entry for {thing}.",
        "remember.py crashes when {thing} is empty; fix it.",
        "Bump the version in {file} and tag a release.",
        "Explain the difference between {tool} and {tool2}.",
        "Make a note in the PR description about {thing}.",
    ],
    "confirm": [
        "Investigate {thing}; {person} says it broke after the last deploy.",
        "Could you remember the state between renders in {file}? It resets now.",
        "Add logging around {thing} in {file}, then run {tool}.",
        "Forget about {thing} for now and focus on {file}.",
        "Please don't forget to update {file} when you change {thing}.",
        "What did we decide about {thing}? I don't remember.",
        "The function should remember the user's last choice in {file}.",
        "Implement a forget-password flow in {file}.",
        "Remember when {thing} took down {system}? Make sure that can't happen again.",
        "Delete the unused code in {file} and run {tool}.",
        "Split {file} into two modules; {thing} should live on its own.",
        "Write docs for {thing} in the README.",
        "Is {thing} covered by tests? If not, add some to {file}.",
        "Move {thing} behind a feature flag in {file}.",
        "Check whether {tool} is pinned in {file}.",
        "Also, don't forget to run {tool2} on {file} when you're done.",
        "Speed up {thing}: it takes {n} seconds on {system}.",
        "Note: {file} is generated, edit the template instead.",
        "Add a NOTE comment in {file} explaining {thing}.",
        "Summarize what changed in {file} since last week.",
        "Make the form remember what was typed if {thing} fails.",
        "Upgrade {tool} and fix the deprecation warnings in {file}.",
    ],
}

# Requests to remember, each with the words that must be in the stored fact.
REMEMBER = {
    "dev": [
        ("remember that we never deploy {system} on {day}", "never deploy"),
        ("Please remember {system} is reset every {day}.", "reset every"),
        ("Don't forget: {person} owns {thing}.", "owns"),
        ("note for next time: run {tool} before {tool2}", "before"),
        ("remember: {file} is generated, never edit it by hand", "generated"),
        ("#remember we use {tool} in this repo", "we use"),
        ("Fix {thing}. Remember that {system} has a {n} second timeout.", "second timeout"),
        ("Also remember we always squash-merge into main.", "squash-merge"),
        ("Please remember to always run {tool} before pushing.", "before pushing"),
        ("For next time: {person} reviews every change to {file}.", "reviews every"),
        ("Don't forget that {system} is read-only on {day}.", "read-only"),
        ("remember this: the {system} API key rotates every {n} days", "rotates"),
    ],
    "confirm": [
        ("Please remember that {person} must approve changes to {file}.", "must approve"),
        ("Do not forget: the {system} database is shared with analytics.", "shared with"),
        ("Note for future runs: {tool} needs the VPN.", "needs the VPN"),
        ("Btw, remember that {file} must stay under {n} kB.", "must stay under"),
        ("Going forward, use {tool} instead of {tool2}.", "instead of"),
        ("Remember, {system} only accepts signed requests.", "signed requests"),
        ("Look at {thing} first. Don't forget we deploy {system} only on {day}.", "deploy"),
        ("From now on, ask {person} before touching {file}.", "ask"),
        ("Never forget that {system} bills per request.", "bills per request"),
        ("remember for next time: the {system} logs live in /var/log/app", "/var/log/app"),
        ("Don't forget to never commit secrets to {file}.", "never commit secrets"),
        ("Oh and remember {person} is on call for {system} on {day}.", "on call"),
    ],
}


@dataclass(frozen=True)
class Prompt:
    text: str
    template: str
    expected: str | None  # words the capture must contain; None: nothing to capture


def ordinary(half: str, count: int, rng: random.Random) -> list[Prompt]:
    """``count`` ordinary prompts from ``half``'s templates (each template used evenly)."""
    templates = ORDINARY[half]
    return [
        Prompt(_fill(templates[i % len(templates)], rng), templates[i % len(templates)], None)
        for i in range(count)
    ]


def requests(half: str, count: int, rng: random.Random) -> list[Prompt]:
    """``count`` requests to remember from ``half``'s templates."""
    templates = REMEMBER[half]
    out = []
    for i in range(count):
        template, words = templates[i % len(templates)]
        out.append(Prompt(_fill(template, rng), template, words))
    return out
