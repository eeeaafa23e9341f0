"""Generated prompts for measuring capture: ordinary coding prompts (many of which use the
words "remember", "forget" and "note" without asking to keep anything) and requests to
remember, phrased as people phrase them.

Every template belongs to one half: ``dev`` (the half the phrasing rules were written
against), ``confirm`` (written separately, never used to tune the first rules) or ``held``
(written after the rules were widened on 2026-12-06, measured once and never used to tune
them).
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
        "Keep {thing} in memory instead of reading {file} every time.",
        "Save this file and run {tool}.",
        "Take note of the failing assertions in {file} and fix them.",
        "Memoize {thing} in {file}.",
        "Before you start, read {file}.",
        "Make sure you don't forget the edge case where {thing} is empty.",
        "Keep the session in memory instead of writing it to {file}.",
        "Store it in memory and flush it to disk on exit in {file}.",
        "Commit this to main after {tool} passes.",
        "Can you note which tests in {file} are flaky?",
        "Note down the steps to reproduce {thing} in the issue.",
        "Always run {tool} on {file} before you push.",
        "Keep in mind the memory limit when you change {thing}.",
        "Write down what {thing} does in the README.",
        "Learn how {thing} works and explain it to me.",
        "Remind me how {tool} is configured.",
        "Going forward with the refactor, split {file} first.",
        "In the future we might move {thing} to {system}; for now keep it in {file}.",
        "Next time {thing} fails, the alert should page {person}.",
        "I keep forgetting how to run {tool}; add it to the README.",
        "Did you remember to update {file}?",
        "Please remember to rebase {file} on main before you open the PR.",
        "Save the state of {thing} to memory before the reload.",
        "Note to {person}: {thing} is fixed in {file}?",
        "Remember the scroll position when the user navigates back in {file}.",
        "Don't forget anything when you migrate {thing}.",
        "Keep a note of which tests fail and report back.",
        "Save the note to {file}.",
        "The note field in {file} should be optional.",
        "Add a 'Remember this device' option to the login form in {file}.",
        "Forgetting to close the file handle in {file} leaks descriptors; fix it.",
        "Take a look at {file}, the mental model there is wrong.",
        "Next time you run {tool}, pass -v so I can see the output.",
        "From the logs, {thing} is failing on {system}.",
        "For the future feature flag, add a stub in {file}.",
        "Please remember to close the issue when {thing} is fixed.",
        "Could you keep in mind the style guide while editing {file}?",
        "Store the parsed config in memory so {thing} stops re-reading {file}.",
        "Note for the reviewer: {thing} changed its signature.",
        "Write the memory usage of {thing} to the log.",
        "We forgot to bump the version in {file}; do it now.",
        "Remind {person} that {thing} is blocked on {system}.",
        "Store it in memory: a dict keyed by id is enough for {thing}.",
        "Keep it in memory: {file} must not be written on every request.",
        "Remember-me tokens in {file} expire too early; extend them.",
        "Forget the old approach in {file} and rewrite {thing} from scratch.",
        "Can you make a note in {file} about the {thing} workaround?",
        "Please keep {thing} in mind as a follow-up, but fix {file} first.",
        "Write a test that checks the cache remembers {n} items.",
        "Note: I'm on my phone, keep answers short.",
        "The memory leak in {thing} is back; check {file}.",
        "Add {thing} to the notes section of the README.",
        "Save the output of {thing} into memory-mapped files in {file}.",
        "In future versions {thing} will be removed; add a deprecation warning.",
        "Going forward from {file}, trace where {thing} is called.",
        "Next time, could you explain why {thing} failed?",
        "Remember which branch you were on and switch back after fixing {thing}.",
        "I'll remember to review {file} tomorrow.",
        "For the record, {thing} was already broken before my change.",
        "Never mind {thing}; {person} will fix it.",
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
    # Held out like the requests' "held" half.
    "held": [
        "Remember to add the ticket number to the commit message.",
        "Did {person} remember to rotate the keys in {file}?",
        "Keep in mind this is a hotfix, so keep the diff small.",
        "Note that {tool} prints warnings; ignore them for now.",
        "Don't forget the tests.",
        "Make sure the cache forgets entries after {n} minutes in {file}.",
        "Store the user's locale in {file} and remember it between sessions.",
        "I always forget the flags for {tool}; what are they?",
        "Can you write this down in {file} as a comment?",
        "Add a note to {file} saying {thing} is deprecated.",
        "Save this as {file} and run {tool}.",
        "Next, remember the last query in {file} so the back button works.",
        "The agent should note which files it touched.",
        "Forget it, revert {file}.",
        "Remember, the goal here is to make {thing} faster, not prettier?",
        "Please jot down the timings of {thing} in the PR.",
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
        ("I want you to remember that we never push to {system} directly.", "never push"),
        ("Always remember that {file} must stay backwards compatible.", "backwards compatible"),
        ("Make sure you remember that {system} is read-only on {day}.", "read-only"),
        ("Could you please remember that {person} reviews {file}.", "reviews"),
        ("Before you start, remember that {system} has {n} shards.", "shards"),
        ("Important: remember that {tool} must pass before merge.", "must pass"),
        ("Memorize this: the deploy window for {system} is {day}.", "deploy window"),
        ("Commit to memory that {system} runs nightly backups.", "nightly backups"),
        ("Save this to memory: {person} is on call on {day}.", "on call"),
        ("Take note: {person} signs off every release of {system}.", "signs off"),
        ("In the future, always run {tool} before committing.", "before committing"),
        ("Fyi for next time: {system} needs the VPN.", "needs the VPN"),
        ("Remember this going forward: feature flags live in {file}", "feature flags live"),
        ("Can you remember that {system} uses snake_case?", "snake_case"),
        ("Keep this in mind for future sessions: {system} is behind a VPN.", "behind a VPN"),
        ("I need you to remember that {person} signs off on {file}.", "signs off"),
        ("Could you remember that {tool} is our formatter.", "our formatter"),
        ("Please memorise this: {system} restarts at 3am on {day}.", "restarts at 3am"),
        ("Make a note that {file} is owned by {person}.", "owned by"),
        ("Quick note for next time - {system} needs {n} replicas.", "replicas"),
        ("Heads up for future runs: {tool} is pinned to an old version.", "pinned"),
        ("Never forget, {system} is billed per hour.", "billed per hour"),
        ("Please always remember: {file} is shared with mobile.", "shared with mobile"),
        ("Add this to your memory: we release {system} on {day}.", "release"),
        ("You should remember that {system} rejects unsigned webhooks.", "unsigned webhooks"),
        ("Fix {thing} first. For future reference, {person} owns {system}.", "owns"),
        # the first held half (15 of 45 captured by the rules before, 33 after the first
        # widening, which was written with it in view; 0 of 54 false), then folded in
        ("Please make a mental note: {person} handles {system} incidents.", "handles"),
        ("Keep in mind for next time that {file} is autogenerated.", "autogenerated"),
        ("Remember for future runs: {tool} needs Python 3.12.", "Python 3.12"),
        ("Store this in your memory: {system} lives in eu-west-1.", "eu-west-1"),
        ("Going forward, please always run {tool} before {tool2}.", "always run"),
        ("Note for later: {person} prefers small PRs.", "small PRs"),
        ("Don't you ever forget that {system} is production.", "is production"),
        ("ok so remember that {system} uses JWT for auth.", "JWT"),
        (
            "I'd like you to keep in mind going forward that {file} must not import {tool}.",
            "must not import",
        ),
        ("From here on, use {tool} for formatting.", "for formatting"),
        ("Lesson learned for next time: {thing} breaks when {system} is down.", "breaks when"),
        ("Please remember this for the future: {person} approves releases.", "approves"),
        ("For future sessions, {system} credentials are in the vault.", "in the vault"),
        ("Remember that {person} is the owner of {file}, please.", "owner of"),
        ("Fix {thing}, and remember for next time that {tool} is slow on {system}.", "is slow"),
        ("Going forward: all PRs to {file} need {n} approvals.", "approvals"),
        ("Remember going forward that {tool} must run before merge.", "must run before"),
        ("Something to remember: {system} caches for {n} minutes.", "caches for"),
        # the second held half (27 of 45 captured, 0 of 48 false), then folded in
        ("Remember - {system} is on a {n} day retention.", "retention"),
        ("you need to remember that {person} is the DBA for {system}.", "the DBA"),
        ("Please, please remember: never run migrations on {day}.", "never run migrations"),
        ("Add to memory: {file} holds the feature flags.", "holds the feature flags"),
        ("Jot this down for next time: {tool} caches in ~/.cache.", "caches in"),
        ("So you know for the future, {system} is read-only.", "read-only"),
        ("For the next run, remember that {file} is big.", "is big"),
        ("Note to future you: {thing} lives in {file}.", "lives in"),
        ("IMPORTANT - remember that {system} is shared with {person}.", "shared with"),
        ("This is worth remembering: {tool} can't run in parallel on {system}.", "parallel"),
        ("Always keep in mind that {system} has no backups.", "no backups"),
        ("Never forget to run {tool} before tagging.", "before tagging"),
        ("Remember forever: {person} owns {system}.", "owns"),
        ("Can you please remember going forward that {file} is frozen?", "is frozen"),
        ("Keep this in your memory: {system} runs on {n} nodes.", "nodes"),
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
    # Written after the rules' third widening (2026-12-06) and never used to tune them:
    # phrasings no half above has.
    "held": [
        ("hey, remember that {system} goes down for maintenance on {day}", "maintenance"),
        ("Fix {thing}. Also, for future reference: {person} wrote {file}.", "wrote"),
        ("pls remember {tool} is broken on arm64", "broken on arm64"),
        ("Don't forget, {person} is out on {day}.", "is out on"),
        ("Make sure to remember: {file} is the source of truth.", "source of truth"),
        ("For all future sessions: {system} requires MFA.", "requires MFA"),
        ("Keep in mind from now on that {tool} is deprecated here.", "deprecated here"),
        ("You must always remember that {system} is in UTC.", "in UTC"),
        ("Reminder for future runs: {system} throttles at {n} rps.", "throttles"),
        ("Remember, {tool} and {tool2} must not be mixed in this repo.", "must not be mixed"),
        ("And don't forget: {file} is shared between teams.", "shared between teams"),
        ("Note for all future sessions \u2014 {system} has {n} regions.", "regions"),
        ("Please commit this to memory: {person} approves schema changes.", "approves"),
        ("remember {person} signs the release notes for {system}", "signs"),
        ("Bear in mind for next time: {file} takes {n} minutes to build.", "to build"),
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
