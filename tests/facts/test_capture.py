"""Capture as people speak: the rules of :mod:`fleetmem.core.capture` measured on generated
prompts (a dev half the rules were written against, and a held-out confirm half), plus the
cases each rule exists for."""

from __future__ import annotations

import random

import pytest

from fleetmem.core.capture import MAX_CAPTURES, captured_facts, without_requests
from tests.facts import capture_corpus as corpus

#: The issue's targets: at most 1 % false captures, at least 95 % of requests captured.
MAX_FALSE_RATE = 0.01
MIN_CAPTURE_RATE = 0.95
#: The held half was measured once, after the rules' last change, at 42 of 45 (93 %): it is
#: kept as written, below the target, so that a regression on unseen phrasings shows.
HELD_MIN_CAPTURE_RATE = 0.9


def _rates(half: str, seed: int) -> tuple[float, float, list[str]]:
    rng = random.Random(seed)
    plain = corpus.ordinary(half, 120, rng)
    asks = corpus.requests(half, 36, rng)
    misses = []
    false = 0
    for p in plain:
        if captured_facts(p.text):
            false += 1
            misses.append(f"captured from an ordinary prompt: {p.text!r}")
    caught = 0
    for p in asks:
        got = captured_facts(p.text)
        assert p.expected is not None
        if len(got) == 1 and p.expected.lower() in got[0].lower():
            caught += 1
        else:
            misses.append(f"request {p.text!r} gave {got!r}")
    return false / len(plain), caught / len(asks), misses


@pytest.mark.parametrize("half", ["dev", "confirm", "held"])
def test_capture_rates_on_generated_prompts(half: str) -> None:
    seed = random.SystemRandom().randrange(2**32)
    false_rate, capture_rate, misses = _rates(half, seed)
    print(f"capture {half} seed={seed}: false={false_rate:.3f} captured={capture_rate:.3f}")
    assert false_rate <= MAX_FALSE_RATE, (seed, misses)
    floor = HELD_MIN_CAPTURE_RATE if half == "held" else MIN_CAPTURE_RATE
    assert capture_rate >= floor, (seed, misses)


def test_the_corpus_is_the_size_the_issue_asks_for() -> None:
    rng = random.Random(1)
    plain = corpus.ordinary("dev", 120, rng) + corpus.ordinary("confirm", 120, rng)
    asks = corpus.requests("dev", 36, rng) + corpus.requests("confirm", 36, rng)
    held = corpus.ordinary("held", 120, rng), corpus.requests("held", 36, rng)
    assert len(held[0]) >= 100 and len(held[1]) >= 36
    assert len(plain) >= 200 and len(asks) >= 50
    assert len({p.template for p in plain}) >= 40  # varied, not one template repeated


@pytest.mark.parametrize(
    ("prompt", "stored"),
    [
        ("remember that we never deploy billing on Fridays", "we never deploy billing on Fridays"),
        (
            "Fix the ledger test. Please remember the ledger uses UTC. Thanks!",
            "the ledger uses UTC.",
        ),
        ("don't forget: staging resets on Monday", "staging resets on Monday"),
        ("note for next time: run make lint first", "run make lint first"),
        ("remember:   we   squash merge", "we squash merge"),
        ("Please remember to always run ruff first.", "always run ruff first."),
        # the time words stay out of the wording; a request shaped as a question counts
        (
            "Remember this going forward: feature flags live in flags.yaml",
            "feature flags live in flags.yaml",
        ),
        ("Can you remember that prod uses snake_case?", "prod uses snake_case"),
        ("Before you start, remember that prod has five shards.", "prod has five shards."),
        ("I'd like you to remember that Priya owns billing.", "Priya owns billing."),
        ("Never forget to run make lint before tagging.", "run make lint before tagging."),
        ("Save this to memory: QA signs off releases.", "QA signs off releases."),
        ("Add to memory: the Makefile holds the flags.", "the Makefile holds the flags."),
        ("Note for all future sessions \u2014 prod has 3 regions.", "prod has 3 regions."),
        # time words with no comma after them, before an instruction or a subject
        (
            "From now on always squash merge feature branches.",
            "always squash merge feature branches.",
        ),
        ("going forward please tag releases with a v prefix", "tag releases with a v prefix"),
        ("Going forward, please pin every base image.", "pin every base image."),
        ("from now on we review schema changes in pairs", "we review schema changes in pairs"),
        # rules, lessons and other labels people open a standing fact with
        (
            "Rule: every migration ships with a down step.",
            "every migration ships with a down step.",
        ),
        ("Rule: use ruff, not flake8.", "use ruff, not flake8."),
        ("House rule: no force pushes to shared branches.", "no force pushes to shared branches."),
        ("Rule of thumb for the API: return 422 on bad input.", "return 422 on bad input."),
        (
            "Let's make it a rule that schema changes get two reviewers.",
            "schema changes get two reviewers.",
        ),
        (
            "Lesson learned from the outage: the cron host has no swap.",
            "the cron host has no swap.",
        ),
        (
            "One more thing to remember: the VPN drops idle SSH sessions.",
            "the VPN drops idle SSH sessions.",
        ),
        (
            "Heads-up for later: the mock server listens on 9090.",
            "the mock server listens on 9090.",
        ),
        (
            "Stash this for later: the beta flag is beta_checkout.",
            "the beta flag is beta_checkout.",
        ),
        ("For future deploys, the canary takes ten minutes.", "the canary takes ten minutes."),
        ("Remember it: the kiosk build targets Android 12.", "the kiosk build targets Android 12."),
        (
            "Remember this about me: I review code in the mornings.",
            "I review code in the mornings.",
        ),
        # a request after the fact it points back at
        (
            "Our staging cluster is in us-east-2, please remember that.",
            "Our staging cluster is in us-east-2",
        ),
        ("You must never push tags by hand. Remember that.", "You must never push tags by hand."),
        # bullets, emphasis and emoji before the request; a request after a lower-case stop
        ("- remember: the docs site builds from main", "the docs site builds from main"),
        ("**Remember:** the worker pool size is 8.", "the worker pool size is 8."),
        (
            "Looks good. \U0001f4cc note for future: seed data lives in fixtures/",
            "seed data lives in fixtures/",
        ),
        (
            "sounds good. from now on please prefer httpx over requests",
            "prefer httpx over requests",
        ),
        ("remember!! the cron timezone is UTC", "the cron timezone is UTC"),
        # more labels and verbs
        (
            "A standing rule: no direct writes to the ledger table.",
            "no direct writes to the ledger table.",
        ),
        ("Remember the rule: one migration per PR.", "one migration per PR."),
        (
            "Keep a note of this for later: the CDN purge takes five minutes.",
            "the CDN purge takes five minutes.",
        ),
        (
            "Record this for future sessions: billing uses Stripe test keys in dev.",
            "billing uses Stripe test keys in dev.",
        ),
        (
            "Also for future reference the export job runs at 02:00 UTC.",
            "the export job runs at 02:00 UTC.",
        ),
        (
            "From now on when a deploy fails, page the on-call first.",
            "when a deploy fails, page the on-call first.",
        ),
        ("Team rule, please remember it: no Friday deploys.", "no Friday deploys."),
        ("Remember for future: Dana owns the billing service.", "Dana owns the billing service."),
        (
            "Please memorize the runbook location: docs/runbook.md",
            "the runbook location: docs/runbook.md",
        ),
        (
            "Write down for future reference that the SMTP relay is on port 2525.",
            "the SMTP relay is on port 2525.",
        ),
        # memory wrappers without "remember", time words before the verb, polite frames
        ("For your notes: invoices are numbered per tenant.", "invoices are numbered per tenant."),
        (
            "add to your knowledge: the GPU runners are labelled gpu-xl",
            "the GPU runners are labelled gpu-xl",
        ),
        (
            "Keep this in your long-term memory: Renovate opens PRs on Mondays.",
            "Renovate opens PRs on Mondays.",
        ),
        (
            "Please save this as a permanent note: the search cache lives 10 minutes.",
            "the search cache lives 10 minutes.",
        ),
        (
            "Memo for future you: the seed script wipes the local db.",
            "the seed script wipes the local db.",
        ),
        ("from now on remember that we ship on Thursdays", "we ship on Thursdays"),
        ("Moving forward, please use squash merges.", "use squash merges."),
        (
            "For all future tasks in this repo, remember that make up starts the stack.",
            "make up starts the stack.",
        ),
        (
            "It would be great if you could remember that QA owns the e2e suite.",
            "QA owns the e2e suite.",
        ),
        ("Kindly remember that the build box has 4 GB of RAM.", "the build box has 4 GB of RAM."),
        (
            "can you remember that the gateway drops idle sockets after 5 minutes?",
            "the gateway drops idle sockets after 5 minutes",
        ),
        (
            "Remember this rule: no new dependencies without a review.",
            "no new dependencies without a review.",
        ),
        (
            "This is important to remember: the orders table is partitioned.",
            "the orders table is partitioned.",
        ),
        ("rememeber that we use vitest", "we use vitest"),
        ("## Note for future sessions\n\nWe use uv; never call pip.", "We use uv; never call pip."),
        ("**Please remember** that tokens.json is generated", "tokens.json is generated"),
        # courtesy and brackets around the request stay out of the wording
        ("Remember that the docs build runs nightly, thanks!", "the docs build runs nightly"),
        ("(btw remember that e2e needs the VPN.)", "e2e needs the VPN."),
        (
            "Remember that PR titles carry the ticket, e.g. OPS-12: fix it.",
            "PR titles carry the ticket, e.g. OPS-12: fix it.",
        ),
        # requests after their fact, without punctuation or as a question
        ("the nightly backup runs at 3am, please remember", "the nightly backup runs at 3am"),
        (
            "The search API caps pages at 100. Remember that for future backend tasks.",
            "The search API caps pages at 100.",
        ),
        ("the sandbox url is sb.acme.io, can you remember that?", "the sandbox url is sb.acme.io"),
        (
            "we always lint in pre-commit so skip it remember that",
            "we always lint in pre-commit so skip it",
        ),
        # more labels, frames and statements
        (
            "Save this as a preference: I like short commit subjects.",
            "I like short commit subjects.",
        ),
        (
            "Log this in your memory: the perf suite lives in perf/.",
            "the perf suite lives in perf/.",
        ),
        (
            "Lesson for the future: the date helper is not timezone safe.",
            "the date helper is not timezone safe.",
        ),
        (
            "Remember where the seeds are: db/seeds, loaded by bin/seed.",
            "where the seeds are: db/seeds, loaded by bin/seed.",
        ),
        (
            "pls remember the auth service issues tokens that expire in 15 minutes",
            "the auth service issues tokens that expire in 15 minutes",
        ),
        ("remember that our dates are always ISO 8601, ok?", "our dates are always ISO 8601."),
        (
            "codex remember for next time the simulator needs Xcode 15",
            "the simulator needs Xcode 15",
        ),
        (
            "Please keep in memory that the client wants CSV with semicolons.",
            "the client wants CSV with semicolons.",
        ),
        # round five: rules pointed back at, time words after, more frames and labels
        (
            "Never edit generated files. Treat that as a permanent rule.",
            "Never edit generated files.",
        ),
        ("Data stays in eu-west-1. That's a hard rule, remember it.", "Data stays in eu-west-1."),
        (
            "new rule for this repo: every script gets a --help flag",
            "every script gets a --help flag",
        ),
        (
            "Permanent preference: show me the plan before editing infra/.",
            "show me the plan before editing infra/.",
        ),
        (
            "from now on please plot with a colorblind-safe palette",
            "plot with a colorblind-safe palette",
        ),
        ("Would you mind remembering that I review PRs after lunch?", "I review PRs after lunch"),
        (
            "can u remember my team wants docstrings with examples",
            "my team wants docstrings with examples",
        ),
        ("Please keep in the memory that our servers run CET.", "our servers run CET."),
        (
            "so going forward uh whenever you write python use type hints okay",
            "whenever you write python use type hints",
        ),
        ("- [ ] remember for future: badges come from shields.io", "badges come from shields.io"),
        ("# Preferences (please remember)\n\nI want terse answers.", "I want terse answers."),
        (
            "This matters and I want it to stick across sessions: prod runs Postgres 16.",
            "prod runs Postgres 16.",
        ),
        (
            "Burn this into your memory: staging is staging.acme.dev.",
            "staging is staging.acme.dev.",
        ),
        # round six: the fact after the request, more pointers back, frames, labels
        (
            "Can you remember something for me? The VPN guide is in the IT wiki.",
            "The VPN guide is in the IT wiki.",
        ),
        ("New thing to remember. Invoices are rendered by pdfy.", "Invoices are rendered by pdfy."),
        ("Our error tracker is Rollbar. Add that to your memory.", "Our error tracker is Rollbar."),
        (
            "The firewall only allows port 443. Don't forget that next time.",
            "The firewall only allows port 443.",
        ),
        ("Is it possible for you to remember that we deploy with ArgoCD?", "we deploy with ArgoCD"),
        (
            "Any chance you could remember that I dislike one-letter names?",
            "I dislike one-letter names",
        ),
        (
            "Please, can you store for future sessions that the locale is de-AT?",
            "the locale is de-AT",
        ),
        (
            "Hold on to this for future sessions: our main DB is Aurora MySQL.",
            "our main DB is Aurora MySQL.",
        ),
        (
            "From this point on, please never edit vendor/ -- that's a standing rule.",
            "never edit vendor/",
        ),
        (
            "Remember:\n\nAll services expose metrics on :9102.",
            "All services expose metrics on :9102.",
        ),
        (
            "Next time you work in this repo, keep in mind that tests need TZ=UTC.",
            "tests need TZ=UTC.",
        ),
        # round seven: more ways to point back, openings that ask to keep, frames
        (
            "The Grafana boards live in grafana/. I'd appreciate it if you remembered that.",
            "The Grafana boards live in grafana/.",
        ),
        (
            "Topics are made in topic-registry, never by apps \u2014 remember that one.",
            "Topics are made in topic-registry, never by apps",
        ),
        (
            "Our tokens expire after 15 minutes (keep that in your memory).",
            "Our tokens expire after 15 minutes",
        ),
        (
            "The SMS vendor is smsly \u2014 remember that for when things break.",
            "The SMS vendor is smsly",
        ),
        (
            "Here's a preference I want you to keep: uppercase SQL keywords.",
            "uppercase SQL keywords.",
        ),
        (
            "I'm going to say this once so please remember it: the SDK is not thread-safe.",
            "the SDK is not thread-safe.",
        ),
        ("Make sure this sticks for next time: prod Redis needs TLS.", "prod Redis needs TLS."),
        ("Keep this on file: certs come from cert-manager.", "certs come from cert-manager."),
        (
            "Can I ask you to remember that hotfixes need a second approver?",
            "hotfixes need a second approver",
        ),
        (
            "Please store the fact that Postgres is version 14 everywhere.",
            "Postgres is version 14 everywhere.",
        ),
        (
            "Could you retain this for future chats? The registry is npm.acme.dev.",
            "The registry is npm.acme.dev.",
        ),
        # round 8 (corpus h, 2026-12-07): typos, labels and openings it showed
        ("rmember: the wiki lives at wiki.lan/eng", "the wiki lives at wiki.lan/eng"),
        ("pls rmbr we pin node to 20.11", "we pin node to 20.11"),
        ("As a house rule, never force-push shared branches", "never force-push shared branches"),
        (
            "Keep in mind in all our future chats that I read code on a phone.",
            "I read code on a phone.",
        ),
        (
            "Memory update: Priya now owns the billing service.",
            "Priya now owns the billing service.",
        ),
        (
            "Something to remember about the monorepo: lib/legacy is frozen.",
            "lib/legacy is frozen.",
        ),
        ("ok new rule from now on no wildcard imports", "no wildcard imports"),
        (
            "going forward can you always add type hints to new functions",
            "can you always add type hints to new functions",
        ),
        ("From now on show the plan before editing.", "show the plan before editing."),
        (
            "remember this one the nightly job starts at 02:00 UTC",
            "the nightly job starts at 02:00 UTC",
        ),
        ("Etch this into your brain: prod reads from replica-2.", "prod reads from replica-2."),
        ("Save this: the support rota flips on Mondays.", "the support rota flips on Mondays."),
        (
            "The fixtures get rebuilt by `make fx` — worth remembering.",
            "The fixtures get rebuilt by `make fx`",
        ),
        (
            "Write logs as JSON. That goes for every service from now on.",
            "Write logs as JSON.",
        ),
        (
            "ugh CI again. remember that the arm runner times out on cold cache, rerun it. "
            "anyway, can you look at the failing unit test?",
            "the arm runner times out on cold cache, rerun it.",
        ),
        (
            "## Note for memory\nRelease branches are cut on the 1st.",
            "Release branches are cut on the 1st.",
        ),
        # round 9 (corpus i): typos, statements before a request, lasting instructions
        ("rembr the linter runs in CI only", "the linter runs in CI only"),
        ("rmemeber the queue is FIFO per tenant", "the queue is FIFO per tenant"),
        (
            "the cache is warmed at boot, remember that for perf questions",
            "the cache is warmed at boot",
        ),
        (
            "we ship through argo now. remember that, helm charts are gone",
            "we ship through argo now",
        ),
        ("stop using requests, use httpx going forward", "stop using requests, use httpx"),
        ("never hand-edit the lockfile again", "never hand-edit the lockfile again"),
        (
            "pin every image by digest, never by tag. rmbr",
            "pin every image by digest, never by tag",
        ),
        ("Would you be able to remember that I review on Fridays?", "I review on Fridays"),
        ("@codex remember the docs site builds from /site", "the docs site builds from /site"),
        (
            "pls remember \U0001f64f our API is versioned in the path",
            "our API is versioned in the path",
        ),
        (
            "Fix the flaky test and remember, all timestamps are stored in UTC.",
            "all timestamps are stored in UTC.",
        ),
        (
            "don't forget, in future chats too, that staging is reset nightly",
            "staging is reset nightly",
        ),
        (
            "Here is how we decided to do it, please remember it from now on:\n\n"
            "feature flags live in flags.yaml, never in code",
            "feature flags live in flags.yaml, never in code",
        ),
        (
            "# Conventions (remember these)\n## Naming\nservices are named <team>-<thing>",
            "services are named <team>-<thing>",
        ),
        ("Pref: I like early returns over nested ifs", "I like early returns over nested ifs"),
        (
            "remember I want `from __future__ import annotations` everywhere",
            "I want `from __future__ import annotations` everywhere",
        ),
        # round 10 (corpus j): "keep in mind" a statement, standing instructions, labels
        ("Keep in mind that our e2e suite needs a seeded DB.", "our e2e suite needs a seeded DB."),
        (
            "Could you keep in mind that the ledger table is sharded by year?",
            "the ledger table is sharded by year",
        ),
        (
            "Whenever you change a proto file, regenerate the stubs with `buf generate`.",
            "Whenever you change a proto file, regenerate the stubs with `buf generate`.",
        ),
        (
            "every time you add a route make sure it has an auth check",
            "every time you add a route make sure it has an auth check",
        ),
        (
            "Always use UTC timestamps in this codebase, never local time.",
            "Always use UTC timestamps in this codebase, never local time.",
        ),
        (
            "Memory: the nightly export lands in s3://exports/nightly.",
            "the nightly export lands in s3://exports/nightly.",
        ),
        (
            "[memory] the wiki is the source of truth for runbooks",
            "the wiki is the source of truth for runbooks",
        ),
        ("As a rule, we squash feature branches.", "we squash feature branches."),
        (
            "Our convention is kebab-case for CSS classes. Stick to it.",
            "Our convention is kebab-case for CSS classes.",
        ),
        (
            "Can you make a note in your memory that Lena owns the iOS app?",
            "Lena owns the iOS app",
        ),
        (
            "Remember for the rest of this project that prices are stored in cents.",
            "prices are stored in cents.",
        ),
        # round 11 (corpora k and l): openings for later sessions, "always" instructions
        (
            "To be clear for future sessions: releases are cut from the `release/*` branches.",
            "releases are cut from the `release/*` branches.",
        ),
        (
            "Just so you have it for future chats - the VPN profile is in 1Password.",
            "the VPN profile is in 1Password.",
        ),
        (
            "Always run the e2e suite on Firefox too, our users are mostly on it.",
            "Always run the e2e suite on Firefox too, our users are mostly on it.",
        ),
        (
            "I'd like you to always use ISO dates in anything you write for me.",
            "I'd like you to always use ISO dates in anything you write for me.",
        ),
        (
            "Reminder for you going forward: queue consumers must be idempotent.",
            "queue consumers must be idempotent.",
        ),
        (
            "The api crate must not depend on diesel. It has to stay storage-agnostic. "
            "Keep that in mind.",
            "The api crate must not depend on diesel. It has to stay storage-agnostic.",
        ),
        (
            "Let me give you some context you should keep for future sessions. The old "
            "billing repo is frozen.",
            "The old billing repo is frozen.",
        ),
        (
            "wrong host again. it's db2 for reporting. remember it!!",
            "wrong host again. it's db2 for reporting",
        ),
        ("Wait, remember this. Our JDK is 21 everywhere.", "Our JDK is 21 everywhere."),
        (
            "A standing instruction, please: when a build takes long, tell me first.",
            "when a build takes long, tell me first.",
        ),
        # round 12
        (
            "Standing instruction for this repo: run `make fmt` before every commit.",
            "run `make fmt` before every commit.",
        ),
        ("Persist this please: the docs site builds with Hugo.", "the docs site builds with Hugo."),
        (
            "The endpoint needs the X-Org header on each call. Please remember that about our API.",
            "The endpoint needs the X-Org header on each call.",
        ),
        (
            "Going forward, image tags must be lowercase.",
            "image tags must be lowercase.",
        ),
        # round 13 (corpus n): what a long session slips in
        (
            "add this to what you know about me: I work on a 13-inch laptop",
            "I work on a 13-inch laptop",
        ),
        (
            "I've told you this before: we deploy with Argo, not Helm. don't forget it again.",
            "we deploy with Argo, not Helm. don't forget it again.",
        ),
        ("also (note for later) the load tests live in perf/", "the load tests live in perf/"),
        ("# our CI runners are ARM64 machines", "our CI runners are ARM64 machines"),
        (
            "quick one \u2014 going forward, when you open a PR, tag me as reviewer.",
            "when you open a PR, tag me as reviewer.",
        ),
        (
            "Remember that I hate the word 'basically' in docs. Never write it.",
            "I hate the word 'basically' in docs. Never write it.",
        ),
        (
            "The Go side: Go 1.22, no generics in public APIs. Remember those versions for "
            "future sessions since you keep suggesting 1.23 syntax.",
            "The Go side: Go 1.22, no generics in public APIs.",
        ),
        # round 14 (corpus r): many voices
        (
            "Snippet for your memory bank \u2014 the nightly export lands in s3://acme-exports/raw",
            "the nightly export lands in s3://acme-exports/raw",
        ),
        (
            "worth keeping long-term -> staging resets every Sunday at 02:00 UTC",
            "staging resets every Sunday at 02:00 UTC",
        ),
        (
            "Kindly make a permanent note that invoices are numbered per legal entity.",
            "invoices are numbered per legal entity.",
        ),
        (
            "It would help me a lot if you remembered that our pager rota starts on Mondays.",
            "our pager rota starts on Mondays.",
        ),
        (
            "For subsequent chats, recall that the mobile app ships through Fastlane.",
            "the mobile app ships through Fastlane.",
        ),
        (
            "As a general rule for you from today onward, run the linter before committing.",
            "run the linter before committing.",
        ),
        (
            "For all future work in this repo the API schema lives in openapi/main.yaml.",
            "the API schema lives in openapi/main.yaml.",
        ),
        (
            "Pardon my German, auf Englisch: please remember that builds run on Debian 12.",
            "builds run on Debian 12.",
        ),
        (
            "My lead asked me to tell you to remember that releases are cut on Thursdays.",
            "releases are cut on Thursdays.",
        ),
        (
            "Please remember that payroll exports are CSV in ISO-8859-1. It is a bank requirement.",
            "payroll exports are CSV in ISO-8859-1. It is a bank requirement.",
        ),
        (
            "Remember that the admin panel is for staff. No customer ever sees it.",
            "the admin panel is for staff. No customer ever sees it.",
        ),
        (
            "Note it in your memory, the design tokens are generated from tokens.yaml.",
            "the design tokens are generated from tokens.yaml.",
        ),
        ("One rule forever: migrations are reversible.", "migrations are reversible."),
        (
            "Please keep in mind for all our future interactions that Dr. Ibe owns the ML stack.",
            "Dr. Ibe owns the ML stack.",
        ),
        # round 15 (corpus q): a request inside the work
        (
            "payouts are batched hourly. remember that pls. now fix the retry loop",
            "payouts are batched hourly.",
        ),
        (
            "reports use the replica, remember that for the future. for now, add the filter",
            "reports use the replica",
        ),
        (
            "we keep fixtures in tests/data. keep that in mind going forward and move the file",
            "we keep fixtures in tests/data",
        ),
        (
            "Refund amounts are negative in the ledger. That's the house convention, remember it.",
            "Refund amounts are negative in the ledger.",
        ),
        (
            "Fix the header. Save it as a preference that I like dark charts in every report.",
            "I like dark charts in every report.",
        ),
        (
            "don't ever run the seed script in this repo, it wipes the audit table",
            "don't ever run the seed script in this repo, it wipes the audit table",
        ),
        (
            "Something to keep in mind whenever we touch billing: amounts are integer cents.",
            "amounts are integer cents.",
        ),
        # round 18 (corpora w and x): shorthand and pointing back with the task after it
        ("/remember the docs site builds with Astro", "the docs site builds with Astro"),
        ("mem: every table has a created_at column", "every table has a created_at column"),
        ("remember ask before dropping any table", "ask before dropping any table"),
        (
            "the queue is SQS FIFO. please remember the convention from now on and add the DLQ",
            "the queue is SQS FIFO",
        ),
        (
            "Whenever you touch the schema in this repo, bump the version. Remember that.",
            "Whenever you touch the schema in this repo, bump the version.",
        ),
        (
            "Can you remember something about how I review? Blocking comments come first.",
            "Blocking comments come first.",
        ),
        (
            "Keep in memory: the CDN is Bunny and purges use the API.",
            "the CDN is Bunny and purges use the API.",
        ),
        # round 19 (corpora y and z): the rule goes on in a short step, an exception or what
        # it rules out; openings and pointers that ask to keep in other words
        (
            "Remember that webhooks are signed with HMAC. Verify them.",
            "webhooks are signed with HMAC. Verify them.",
        ),
        (
            "Store this as a house rule: no raw SQL in views. If a query is complex, move it to "
            "a repository class.",
            "no raw SQL in views. If a query is complex, move it to a repository class.",
        ),
        (
            "Add to your memory that I like terse commit messages. Imperative mood, no emoji.",
            "I like terse commit messages. Imperative mood, no emoji.",
        ),
        (
            "Please remember that invoice ids are ULIDs. Sorting needs a decode.",
            "invoice ids are ULIDs. Sorting needs a decode.",
        ),
        (
            "I'll keep saying it until it sticks: the worker queue is Redis Streams, not Kafka.",
            "the worker queue is Redis Streams, not Kafka.",
        ),
        (
            "ok. general rule to keep: fixtures live next to the tests that use them",
            "fixtures live next to the tests that use them",
        ),
        (
            "Make this the default: run the linter before you show me a diff.",
            "run the linter before you show me a diff.",
        ),
        (
            "you'll want to remember this \u2014 the mobile app reads flags from ConfigCat",
            "the mobile app reads flags from ConfigCat",
        ),
        (
            "Every new endpoint gets a rate limit. Please make that a standing rule.",
            "Every new endpoint gets a rate limit.",
        ),
        (
            "Migrations run in a separate job. I'd like that to stick.",
            "Migrations run in a separate job.",
        ),
        (
            "The docs are built with MkDocs. Not Sphinx, not Docusaurus. MkDocs. Remember that.",
            "The docs are built with MkDocs. Not Sphinx, not Docusaurus. MkDocs.",
        ),
        (
            "Never merge on red CI. Only squash. I'll tag releases. Remember this.",
            "Never merge on red CI. Only squash. I'll tag releases.",
        ),
        (
            "You can skip asking before formatting files. Just format them. That applies to "
            "every session.",
            "You can skip asking before formatting files. Just format them.",
        ),
        (
            "Remember! Feature flags are read once at start-up.",
            "Feature flags are read once at start-up.",
        ),
        ("from now on seed everything with 42. remember that", "seed everything with 42"),
        (
            "i need u to remember that the design review is every second Wednesday",
            "the design review is every second Wednesday",
        ),
        (
            "It'd really help if you remembered that I read diffs on a phone.",
            "I read diffs on a phone.",
        ),
        (
            "The metrics port is 9464 and I'd like you to remember it.",
            "The metrics port is 9464",
        ),
        ("deploys wait for my ok. remember that", "deploys wait for my ok"),
        # requests in other languages, as people who work in them ask
        ("Recuerda que el deploy de la API es los martes", "el deploy de la API es los martes"),
        (
            "Merk dir für die Zukunft, dass die Tests mit pytest laufen",
            "die Tests mit pytest laufen",
        ),
        ("Lembra pra sempre que o staging fica em São Paulo", "o staging fica em São Paulo"),
        (
            "N'oublie pas pour la prochaine fois : la base de test est sur le port 5433",
            "la base de test est sur le port 5433",
        ),
        ("Ricordati che i log vanno in UTC", "i log vanno in UTC"),
        ("Onthoud dat de API versie 2 gebruikt", "de API versie 2 gebruikt"),
        ("Zapamiętaj, że testy uruchamiamy w kontenerze", "testy uruchamiamy w kontenerze"),
        ("Die Logs gehen nach Loki. Bitte merken.", "Die Logs gehen nach Loki."),
        (
            "Pra você lembrar nas próximas: o banco de testes é um Postgres 16",
            "o banco de testes é um Postgres 16",
        ),
        (
            "Uma regra pra sempre: nunca usar float pra dinheiro",
            "nunca usar float pra dinheiro",
        ),
        (
            "Ab jetzt bitte immer Docstrings auf Englisch schreiben.",
            "immer Docstrings auf Englisch schreiben.",
        ),
        (
            "Arregla el test y, por cierto, recuerda para las próximas veces que los DTOs van "
            "en api.dto.",
            "los DTOs van en api.dto.",
        ),
        (
            "Kannst du dir merken, dass Frau Keller alle Releases freigibt?",
            "Frau Keller alle Releases freigibt",
        ),
        ("merk dir mal der Ticketprefix ist OPS", "der Ticketprefix ist OPS"),
        (
            "Il freeze inizia il 3 marzo \u2014 tienilo a mente anche le prossime volte.",
            "Il freeze inizia il 3 marzo",
        ),
        ("Daqui pra frente, sempre usa record pra DTO, beleza?", "sempre usa record pra DTO."),
        (
            "Außerdem, für alle künftigen Sessions:\nVersionen stehen nur im Parent-POM",
            "Versionen stehen nur im Parent-POM",
        ),
        # the Río de la Plata's, Mexico's, Brazil's and Nigeria's ways
        (
            "Las llaves de Redis llevan el prefijo del país. Acordate de eso para la próxima.",
            "Las llaves de Redis llevan el prefijo del país.",
        ),
        (
            "Grabátelo: los viernes no se mergea nada a main.",
            "los viernes no se mergea nada a main.",
        ),
        (
            "Ya te lo dije, que se te quede: no hay deploys en viernes.",
            "no hay deploys en viernes.",
        ),
        ("Salva na memória: a gente usa Zustand, não Redux.", "a gente usa Zustand, não Redux."),
        (
            "Oga, make you no forget this one: payments go through Paystack",
            "payments go through Paystack",
        ),
        # and more English ways to ask
        (
            "I'm saying it once and you keep it: the release train leaves on Thursdays",
            "the release train leaves on Thursdays",
        ),
        (
            "take into account from now on: Ana reviews every schema change",
            "Ana reviews every schema change",
        ),
        ("from this point on, prefer small pure functions", "prefer small pure functions"),
        ("for future ref the VPN is WireGuard", "the VPN is WireGuard"),
        (
            "Remind yourself next time: the mobile app caches flags for an hour",
            "the mobile app caches flags for an hour",
        ),
        (
            "Hey, last thing, can you remember our pager schedule is called Primary",
            "our pager schedule is called Primary",
        ),
        ("Also (for future reference) charts use Recharts, not D3", "charts use Recharts, not D3"),
        (
            "the admin app is a separate Vite project. keep this info for next time",
            "the admin app is a separate Vite project",
        ),
        (
            "The exporter writes to S3 first. Don't lose that.",
            "The exporter writes to S3 first.",
        ),
        (
            "Standing order: never print tokens in the terminal.",
            "never print tokens in the terminal.",
        ),
        ("hang onto this for later: the sandbox resets nightly", "the sandbox resets nightly"),
        (
            "Keep this for next time \U0001f64f the app deploys to Fly.io, not Heroku",
            "the app deploys to Fly.io, not Heroku",
        ),
        ("from today onward tag releases as api/vX.Y.Z", "tag releases as api/vX.Y.Z"),
        (
            "Webhooks are signed with Ed25519. got it? keep that one for good.",
            "Webhooks are signed with Ed25519.",
        ),
        (
            "don't forget that the menu must work with a gamepad. anyway, build the menu now.",
            "the menu must work with a gamepad.",
        ),
        # a paste after a question about it is skipped, not what comes after the paste
        (
            "We run the posting at REPEATABLE READ. Can you add a retry?\n\nAlso keep this in "
            "long-term memory: 40001 errors are expected and retried.",
            "40001 errors are expected and retried.",
        ),
        (
            'Remember: I work on a 13" laptop, so keep lines under 100 chars.',
            'I work on a 13" laptop, so keep lines under 100 chars.',
        ),
        (
            "Can you explain what this plan is telling me?\n\nFYI for all future sessions: "
            "the tokenizer service has its own VPC.",
            "the tokenizer service has its own VPC.",
        ),
        # ... and not the task after it
        ("Remember that the cache is warm. Clear it.", "the cache is warm."),
        (
            "Remember that the retry helper exists. I need the jump to feel snappier.",
            "the retry helper exists.",
        ),
        (
            "Remember that our images are multi-arch. The build should push both tags.",
            "our images are multi-arch.",
        ),
    ],
)
def test_the_stored_wording_is_the_persons(prompt: str, stored: str) -> None:
    assert captured_facts(prompt) == [stored]


@pytest.mark.parametrize(
    "prompt",
    [
        "Do you remember how the cache works?",
        "Remember when staging went down?",  # a question
        "Don't forget to add a test.",  # a step of this task
        "Don't forget the changelog.",  # a thing, not a statement
        "```\nremember: this is pasted code\n```",
        "> remember: quoted from the agent's answer",
        "remember: ok",  # too short to be a fact
        "Add a remember-me checkbox.",
        "Make sure you don't forget the edge case where the list is empty.",  # a thing
        "Keep the session in memory instead of writing it to disk.",  # RAM, not memory
        "Store it in memory: a dict keyed by id is enough.",
        "From here, run the tests in ledger.py.",  # a place, not a time
        "Keep in mind that the endpoint is slow; profile it first.",  # this task
        "Note that the API returns 404 for missing users.",
        "Can you remember which flag turns the cache off?",
        "Could you remember that bug we fixed last week?",  # "that" names a thing
        "From now on the handler should return 201.",  # specifies this change
        "In the future we may split this module.",  # a plan, not a rule
        "Going forward the tests in this file use the new fixture.",
        "Rule: no-unused-vars 'tmp' is assigned a value but never used",  # linter output
        "Rule: Unexpected any. Specify a different type.",
        "Remember, this branch is a draft, so skip the docs.",  # about this task
        "Note to self: check whether the retry hides the error.",  # to find out, not a fact
        "Remember it is late, so I only want a small patch?",
        "Memorize the result of parse_config() with lru_cache.",  # caching
        "this ticket is a spike, remember \u2014 keep it rough",  # about this task
        "Going forward, load_user should raise NotFound; please implement that change.",
        "Write this down as a TODO comment: the timeout is hardcoded.",
        "Fix the import. Remember that?",  # a question
        "For this task, remember that staging is down, so mock the calls.",  # this task only
        "just for this session, remember that I'm on the feature/x branch",
        "Going forward, what's the plan? list the open TODOs",
        "From now on the API returns 404 for hidden rows - update the tests to match.",
        "Moving forward, the plan is: 1) split the parser 2) add tests.",
        "Docstring I wrote:\n\n    Remember that this is not thread-safe; hold the lock.",
        "the changelog draft says:\n\n- Remember: the --legacy flag was removed.\n\nok?",
        "Things to note: the API changed and the tests moved.",
        "Store in memory: a dict keyed by id is fine here.",
        "remember the last command you ran? run it again with -v",  # a question
        "Remember, we're only touching the frontend in this PR.",  # this task
        "Remember that the API is rate limited right now, so space out the calls.",
        "Don't forget we still need to update the fixtures before we're done here.",
        "this is the output i get\n\nkeepalived[812]: Remember: priority 100\n\nwhy?",
        "Next, remember the last query in the README so the back button works.",
        "What did we decide about the export? I don't remember.",
        "From now on, for the rest of this task, show me the diff first.",
        "remember we're only doing the backend part today",
        "Remember, the goal of this PR is only to add logging.",
        "Summarize this changelog for the release notes:\n\n- Going forward, config is TOML\n",
        "Rules for the bracket generator:\n- always seed the top players apart\nWrite it.",
        "Write it down in CLAUDE.md: we use pnpm.",
        "Remembering the scroll position breaks on Safari. Investigate.",
        "Going forward, the scheduler should skip weekends. Implement that in next_run().",
        "The terminal prints `hint: Remember to set user.name` on commit. How do I fix it?",
        "Just so you know, this branch is based on an old main, so expect conflicts.",
        "Note to self: I should ask Ravi about the quota. Anyway, fix the lint errors.",
        "Remember this. Remember this.",
        "If I remember correctly, the retry count is in settings.py \u2014 check that.",
        "Add a comment saying 'remember: this must run before migrations'.",
        "Can you remember things between sessions, or do I have to repeat them?",
        "Write a Slack announcement: from now on, all deploys go through the bot.",
        "see\n\n--- a/CONTRIBUTING.md\n+++ b/CONTRIBUTING.md\n@@ -1 +1,2 @@\n+Remember: rebase",
        "Why does it fail?\n\n// Remember: tabs are 0-indexed from now on\nexpect(tab()).toBe(0)",
        "from now on the sidebar should read the filters from the session - change the code",
        "Remember the user might be on a slow link when you design this loading state.",
        # round 8: what its new rules must leave alone
        "Fix both files, and remember that the second one still uses CRLF.",
        "Remember that the module you're editing is loaded by the cron job too.",
        "Add a changelog entry: going forward, the `tier` field replaces `plan`.",
        "Draft the upgrade email. Main point: from now on, tokens expire after 30 days.",
        'Save this: {"port": 8080, "debug": true}',
        "Make it reversible. That goes for the other migration too.",
        "Going forward, load_user should raise NotFound. please implement that change.",
        "remember the last tab in src/ui/tabs.tsx so the refresh works.",
        "Remember the schema I pasted earlier in this thread, and write the inserts for it.",
        # round 9: what its new rules must leave alone
        "Make it so that from now on new accounts get the trial plan.",
        "never ever do I want to see this warning again, fix it",
        "Use this commit message: `chore: from now on lint runs in CI`",
        "Add a banner telling users that from now on exports are CSV.",
        "Save the draft and remember it between page loads.",
        "Edit the README, the section is outdated:\n\n## Remember\n- run make setup",
        "note to self, not to you: renew the domain. anyway, fix the header",
        "our .editorconfig has this, is it right?\n\n# Rule: tabs in makefiles\n[Makefile]",
        'Why does `remember("x")` return None? Here\'s the test:\n\ndef test_it():\n    pass',
        "For the future feature flag, add a stub in flags.py.",
        # round 10: what its new rules must leave alone
        "Keep in mind the function is called from two places when you change it.",
        "Keep in mind that I've already run the migration locally.",
        "Keep in mind the import is 3GB, so stream it for this script.",
        "Whenever you're ready, run the full test suite.",
        "Memory: 4096",
        "Set the lifecycle rule so that, going forward, logs older than a week are deleted.",
        "Update the fee in `fees.yaml` — going forward, Basic costs $9. Fix the tests too.",
        "Always close the file handle in the finally block here.",
        "Implement a 'remember this device' checkbox: on login, skip MFA for 30 days.",
        'Translate these strings to German:\n\n"remember": "Remember me"',
        # round 11: what its new rules must leave alone
        "Always return an empty list from this function when nothing matches.",
        "Always run make lint on src/app.py before you push.",
        "Explain this Dockerfile:\n\nFROM node:20\n# Always pin npm, never upgrade it\nRUN npm i",
        "What does this mean?\n\n# NOTE: always call setup() first.\n# never share the client.",
        "Our checklist has these lines:\n\n- [ ] Always tag from main\n\nMake it a template.",
        "Remember what I said earlier: only touch the parser.",
        "Here's a Slack thread from today:\n\nAna: remember that the demo is at 3\n\nMake a timer.",
        "Summarize this email: 'Hi. Please remember our logo goes on the cover. Thanks.'",
        "Write a test for this function:\n\ndef remember(key, value):\n    return key",
        "No need to keep this for later: I'm on a train today.",
        "Add a long-term memory table for the chat feature: user_id, key, value.",
        "Write a notice for customers: 'Please note that from now on, fees are monthly.'",
        # round 12 (corpus m): changes specified with "from now on", code beside a comment
        "From now on, new accounts should start on the free tier. Update the signup flow.",
        "Going forward, refunds should be batched nightly. Write the cron job.",
        "Is this right?\n# remember: never cache /auth\nlocation /auth { proxy_pass http://a; }",
        "The config has `remember_tabs: true` but tabs still reset. Why?",
        "Remember, in this refactor we only move code.",
        "Help me write a note to the team: from now on standup is at 10.",
        # round 13: what its new rules must leave alone
        "Create `docs/style.md` with these points:\n- never use tabs\n- always sort imports",
        "I don't want you to remember this as a preference: skip the type hints here.",
        "write a review comment telling Ana that we use ruff and she should remember it",
        "from now on, failed uploads should be retried three times before giving up",
        "Spec for the new export:\n\n1. always include a header row\n2. never quote numbers",
        "# Fix the login redirect",
        "# TODO: the cache is always cold on boot",
        # rounds 14 and 15: what their new rules must leave alone
        "keep in mind the build server is down today, so skip the e2e job",
        "Got it, I'll keep that in mind. Now show me the failing test.",
        "Write a welcome email for new hires. Keep in mind the tone should be warm.",
        "For this task: please remember that the sandbox is offline, mock the gateway.",
        "Our wiki says: please remember that staging is shared. Move that line up.",
        "I was going to tell you to remember that the port is 5433, but it changes daily.",
        "this PR is a draft, remember \u2014 only high-level feedback please",
        "Don't add this to your memory, it changes weekly: the on-call is Ravi.",
        "will you remember this next time, or should I put it in the README?",
        "note to self: ask Priya for the VPN config. anyway, can you fix the import?",
        "Remember to close the cursor in the finally block \u2014 you forgot",
        "remember to run the tests - they are flaky",
        "Fix the parser. From now on the parser should reject empty input.",
        "Permanently delete the branch feature/old-login on the remote",
        "Make this banner less permanent-sounding \u2014 it is only a 2h lock.",
        "Note to self: this is getting long. Anyway, implement the header parser first.",
        "Keep in mind I haven't merged the fix yet, so main is still broken. Rebase on it.",
        # round 19: the same words about this task
        "Please make that change in both files.",
        "Recuerdas el error de ayer? Ha vuelto.",
        "Recuerda el bug de ayer",
        "Guarda questo diff e dimmi se ci sono problemi di concorrenza.",
        "Fica a dica: o problema tá no serializer, olha lá primeiro.",
        "Lembrando que esse código roda no celular, então nada pesado no Update, tá?",
        "Tieni presente che il DB di test adesso è vuoto, quindi fai il seed prima.",
        "Fica ligado que o banco de teste tá vazio, roda o seed antes da query.",
        "Pode gravar na memória, por favor?",
        "I'm not asking you to remember this, it's just for the next 10 minutes: Kafka restarts.",
        "Not sure if this is worth remembering: the IT test failed once with a deadlock.",
        "don't bother remembering this, just do it now: rename utils.rs to fs.rs",
        "Temporary workaround, NOT a permanent thing: pin tokio to 1.37 until the fix lands.",
        "Remember, we talked about this an hour ago: the endpoint returns 202. Please fix it.",
        "Write a unit test for `RememberMeService.rotate()` \u2014 it should issue a new token.",
        "Can you explain this PowerShell?\n\n# Note: always run as admin\n# Never run on prod",
        "I copied the designer's notes. Can you turn them into CSS?\n\n- Never use pure black",
        "Lee estas notas y dime qué nos afecta:\n\n- A partir de ahora, la API usa CameraView",
        'Our PM keeps saying "note for next release: bulk upload v2". What would v2 involve?',
        "For this query, remember that the date range is inclusive on both ends.",
        "Keep in mind the member ID in this sample is fake. Write the query.",
        "Take note: the attached CSV has a header row. Load it into a temp table.",
        "Endlich funktioniert der Build!",
        "Não salva isso em lugar nenhum: a senha de teste é abc123",
        "Hoef je niet te onthouden, is eenmalig: genereer de client opnieuw.",
        "Denk dran, die Demo ist in einer Stunde \u2013 also nur der schnelle Fix.",
        "Ten en cuenta que la demo es en media hora, así que solo el arreglo rápido.",
        "Vergiss nicht, in diesem PR auch das CHANGELOG zu aktualisieren.",
        'Our wiki says "Note for future developers: the mapping is generated". Is that true?',
        "Not for your memory, just context: the bank is in a merger. Fix the 401.",
        "Lembra que ontem o deploy quebrou? Aconteceu de novo.",
        "Das musst du dir nicht merken, gilt nur heute: der Server ist im Wartungsmodus",
        "Recuerda que hoy el staging está caído, usa local",
        "No hace falta recordar esto: el build de hoy es el 2.4.1",
        "This isn't something to keep, only for this debugging: the id is 42",
        "Please memorize-proof this onboarding: print the next step after each command.",
        "don't forget the second file, you only changed one",
        "dont forget the semicolons this time, the linter will fail",
        "Keep in mind that I have only 20 minutes before the meeting",
        "The customer is on iOS 15.8, so keep that in mind when you debug this crash.",
        "Can you commit that to the branch \u2014 the tests pass now",
        "What's the one to keep: a.py or b.py?",
        "I want that to be done by Friday.",
    ],
)
def test_what_is_not_a_request_to_remember(prompt: str) -> None:
    assert captured_facts(prompt) == []


def test_several_requests_in_one_prompt_are_each_kept_once() -> None:
    prompt = "remember: alpha beta\nremember: alpha beta\n" + "".join(
        f"remember: fact number {i}\n" for i in range(20)
    )
    got = captured_facts(prompt)
    assert got[0] == "alpha beta" and len(got) == MAX_CAPTURES and len(set(got)) == len(got)


@pytest.mark.parametrize(
    ("prompt", "stored"),
    [
        # a bare marker over a list: one fact per item, the prompt's other lines left alone
        (
            "remember:\n- we deploy on Tuesdays\n* staging is read-only\n\nNow fix the test.",
            ["we deploy on Tuesdays", "staging is read-only"],
        ),
        ("#remember\n1. ledger tests are flaky\n2) CI runs twice", ["ledger tests are flaky",
                                                                   "CI runs twice"]),
        # a marker line that opens a block: the block up to a blank line is the fact
        (
            "remember: the release checklist:\n- tag it\n- announce it in #ops\n\nthen go on",
            ["the release checklist: - tag it - announce it in #ops"],
        ),
        ("remember: db:\n  host: db.internal\n  port: 5432", ["db: host: db.internal port: 5432"]),
        # a quoted line inside the block is not the person's; a fence ends the block
        ("remember:\nwe pin numpy\n> pasted\n```\nremember: code\n```", ["we pin numpy"]),
    ],
)  # fmt: skip
def test_a_marker_that_opens_a_block_keeps_the_block(prompt: str, stored: list[str]) -> None:
    assert captured_facts(prompt) == stored


def test_what_else_a_prompt_asks_is_kept_without_its_requests() -> None:
    prompt = "remember that billing deploys wait for finance. Fix the flaky ledger test."
    assert without_requests(prompt).split() == ["Fix", "the", "flaky", "ledger", "test."]
    untouched = "Do you remember how the cache works? Fix it."
    assert without_requests(untouched) == untouched
    pointed = "Staging is in us-east-2. Remember that. Fix the flaky test."
    assert without_requests(pointed).split() == ["Fix", "the", "flaky", "test."]
    ahead = "Can you remember something for me? Billing deploys on Tuesdays. Then fix it."
    assert without_requests(ahead).split() == ["Then", "fix", "it."]
    assert without_requests("remember: we pin numpy\nThen run the tests").split() == [
        "Then", "run", "the", "tests",
    ]  # fmt: skip


def _fresh_word(rng: random.Random, syllables: int = 3) -> str:
    """A made-up word no corpus or rule holds: "kavoti"."""
    return "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(syllables))


def _fresh_fact(rng: random.Random) -> str:
    """A lasting-looking statement with fresh names: "the <x>-<n> cluster runs <y> <m>"."""
    word = _fresh_word(rng)
    tool = rng.choice(["Postgres", "Redis", "Kafka", "Go", "Node", "Terraform", "Java"])
    return f"the {word}-{rng.randrange(2, 99)} service runs {tool} {rng.randrange(3, 30)}"


# Round 22: what ties a fact to the work in hand, to this conversation or to this task's
# clock, in several languages, around fresh facts (rng), and the words that still make it
# lasting. Each shape stands for a general cause found in the corpora ak to ar.
TASK_BOUND = [
    "from now on in this {unit}, remember that {fact}",
    "Keep in mind for this {unit}: {fact}.",
    "Remember that {fact} for this {unit}.",
    "Don't forget that {fact}, I need this by 5pm.",
    "Don't forget that I asked you for the {word} script too, you gave me one.",
    "keep in mind {fact}, handle that",
    "While you're refactoring, remember {fact}. Go.",
    "note to you: {fact}, for the next few steps",
    "Keep in mind {fact}, I'm on my phone.",
    "Remember: the output should be a table, {fact}.",
    "Recuerda: en este método {fact}.",
    "Pamiętaj, że w tym skrypcie {fact}.",
    "d'ora in poi in questo file {fact}",
    "Vergiss nicht, die alte {word} als deprecated zu markieren.",
    "Bitte vergiss nicht, die {word} auch im Changelog einzutragen.",
]
LASTING_DESPITE = [
    "Remember for the long run: {fact}, and this script runs as root.",
    "Rule for you from today on, not just this session: {fact}.",
    "Make a note that survives this session: {fact}.",
    "Remember, beyond this task: {fact}.",
    "for good: {fact}. I don't want an action that changes it.",
]


@pytest.mark.parametrize("shape", TASK_BOUND)
def test_a_fact_bound_to_the_work_in_hand_is_not_kept(shape: str, rng: random.Random) -> None:
    unit = rng.choice(
        ["class", "file", "migration", "refactoring", "run", "PR", "query", "notebook"]
    )
    word = rng.choice(["Option", "Methode", "Tabelle", "Schnittstelle"])
    prompt = shape.format(fact=_fresh_fact(rng), unit=unit, word=word)
    assert captured_facts(prompt) == [], prompt


@pytest.mark.parametrize("shape", LASTING_DESPITE)
def test_words_that_outlive_the_session_keep_the_fact(shape: str, rng: random.Random) -> None:
    fact = _fresh_fact(rng)
    got = captured_facts(shape.format(fact=fact))
    assert len(got) == 1 and fact in got[0], (shape, got)


def test_a_labelled_fact_goes_on_to_the_prompts_end_but_not_into_the_task(
    rng: random.Random,
) -> None:
    fact = _fresh_fact(rng)
    rest = f"Its logs stay {rng.randrange(5, 90)} days."
    assert captured_facts(f"Policy you should carry forward: {fact}. {rest}") == [f"{fact}. {rest}"]
    for task in ("Rename the field.", "Thanks, that fixed it.", "Carry on with the refactor."):
        assert captured_facts(f"Save this to memory: {fact}. {task}") == [f"{fact}."]
    # a line break before it: another thing said, not more of the fact
    assert captured_facts(f"Save this to memory: {fact}.\n{rest}") == [f"{fact}."]


# Round 23: a fact asked for without a label goes on into the prompt's last sentence when that
# sentence says more of it; a task, a need of the moment, a turn to the work, a "should" or a
# remark on the keeping is left out. Fresh facts (rng) around each shape.
MORE_OF_IT = ["Its logs stay {n} days.", "The on-call team is paged after {n} minutes."]
NOT_MORE_OF_IT = [
    "Submit the job for the {word} classifier.",
    "Anyway, add a --json flag to the {word} command.",
    "I need the {word} screen to load faster.",
    "Ticket is OPS-{n}, upgrade the {word} package.",
    "The build should push {n} tags.",
    "Useful for later.",
    "Scrivi una migrazione per la tabella {word}.",
    "Clear it.",
]


@pytest.mark.parametrize("rest", MORE_OF_IT)
@pytest.mark.parametrize(
    "ask", ["Remember that {fact}.", "Please keep in mind going forward: {fact}."]
)
def test_a_fact_goes_on_into_the_sentence_that_says_more_of_it(
    ask: str, rest: str, rng: random.Random
) -> None:
    fact = _fresh_fact(rng)
    more = rest.format(n=rng.randrange(5, 90))
    assert captured_facts(f"{ask.format(fact=fact)} {more}") == [f"{fact}. {more}"]


@pytest.mark.parametrize("rest", NOT_MORE_OF_IT)
def test_a_fact_does_not_take_in_the_task_after_it(rest: str, rng: random.Random) -> None:
    fact = _fresh_fact(rng)
    word = _fresh_word(rng, 2)
    after = rest.format(n=rng.randrange(5, 900), word=word)
    assert captured_facts(f"Remember that {fact}. {after}") == [f"{fact}."], after


# Round 23's near misses from the corpora aw and ax, each a general cause, with fresh words.
ROUND_23_NOT_KEPT = [
    "Don't forget that I asked for both the {word} and the {other} version side by side.",
    "remember: this is for the demo on Tuesday, so {fact}",
    "Remember, this is a code review, not a rewrite. Leave comments on the {word} module.",
    "Memorize the following codes for the quiz you're about to give me: {word}, {other}.",
    "just a heads-up that I'll be pasting a very long {word} log next",
    "Merk dir das Copybook unten für die nächsten Fragen in diesem Chat:\n\n  01 {word}.\n"
    "  05 {other} PIC 9(10).",
    "do you know my {word} id already or do I have to give it to you every time",
    "I need the DDL for a table that remembers which {word} files were imported: NAME, TS.",
    "I want a cache on the {word} lookup. Keep it in memory for the day, evict at midnight. How?",
    '"Don\'t forget the {word} principle!" — our CISO, in every meeting. Write the template.',
    "The {word} test fails because the expected file has CRLF. Note it, fix it, move on.",
    "We need a standing order migration plan — the {word} orders move in phase 2. Draft it.",
]


def test_store_in_memory_asks_to_keep_but_storing_it_in_memory_is_ram(rng: random.Random) -> None:
    fact = _fresh_fact(rng)
    assert captured_facts(f"store in memory: {fact}") == [fact]
    assert captured_facts("Store it in memory: a dict keyed by id is enough for the lookup.") == []


# Round 24's near misses, from the false captures of ay and az, with fresh words.
ROUND_24_NOT_KEPT = [
    "keep this in mind for the next step: the {word} API returns paginated results",
    "remember: we're only looking at the last 48h for this incident, {fact}",
    "Remember, the analyst on this case is L1, so write the {word} steps explicitly",
    "memorize... nah, just write it into the runbook: '{word} ack within 15min'",
    "I'll keep it in mind for next time, thanks. Now explain the {word} command you used",
    "lesson learned, I'll always check the {word} first. anyway, here's the next alert",
    "Don't forget: the demo is in 20 minutes, so just make the {word} screen not crash.",
    "Don't forget the await on the {word} call — you left it out in the last patch.",
    "From now on, in this widget, everything should be const where possible.",
    "Let's remember this moment, first green {word} build in 9 days",
    "keep in mind: {fact}. handle that in the {word} client you're writing",
    "from now on, the {word} parser should treat empty strings as nil",
    "Denk dran, die Tests laufen zu lassen, bevor du den {word} Commit pushst.",
]


@pytest.mark.parametrize("shape", ROUND_23_NOT_KEPT + ROUND_24_NOT_KEPT)
def test_near_misses_of_rounds_23_and_24_are_not_kept(shape: str, rng: random.Random) -> None:
    prompt = shape.format(fact=_fresh_fact(rng), word=_fresh_word(rng), other=_fresh_word(rng))
    assert captured_facts(prompt) == [], prompt


def test_a_lesson_the_person_asks_to_keep_is_still_kept(rng: random.Random) -> None:
    fact = _fresh_fact(rng)
    assert captured_facts(f"Lesson learned, please remember it: {fact}.") == [f"{fact}."]
    assert captured_facts(f"Remember for next session: {fact}, and the next step is the docs.")


# Round 25's near misses, from the false captures of ba, bb, bc and bd, each a general cause,
# with fresh words.
ROUND_25_NOT_KEPT = [
    "remember the pointer could be null in {word}, add a check",
    "Don't forget we still have the {word} placeholders in the form, list them all for me.",
    "Don't forget the comma in the JSON you just gave me, it doesn't parse.",
    "Keep in mind that I'll paste the rest of the {word} log in the next message.",
    "Remember, this is a demo for the {word} team tomorrow, so make the happy path work.",
    "Merk dir kurz die ID {word}-{n}, die brauchen wir gleich für den Test.",
    "Can you remember things between our chats or do I need to paste {word} every time?",
    "Don't forget the migration for the {word} column, the deploy will fail without it",
    "log this to the {word} table as a permanent record: user, action, quantity",
    "save this output somewhere so I can diff it later: `{word} --dump > before.txt`",
    "Remember: I'm asking about staging, not prod. Why is {word} returning 503?",
    "remember, it's {word}-{n} not {word}-{m}, I mistyped. check that one",
    "don't forget your {word} handover is at 06:00 — lol that's for me. anyway, fix the alert",
    "Keep this in mind: the test below is flaky on CI only. Why?\n```\nFAIL {word}\n```",
    "I don't need you to remember this, just fix it: the ACL on {word} has the wrong mask",
    "memorize this list of commands? no I'm kidding, just turn it into a playbook:\nshow {word}",
    "garde en tête, pour ce playbook seulement, que les hôtes de {word} sont en maintenance",
    "Make the change permanent in the config — currently {word} is only set via env var.",
    "next time the {word} consumer starts, it should resume from the offset — add that logic",
    "Can you make sure this stays out of any long-term notes? It's an NDA thing. Help with {word}.",
    "Would it be bad to never use {word} at all? Asking for a discussion, not making a rule.",
]
# Round 25's requests, from the misses of the same corpora: (shape, what is kept).
ROUND_25_KEPT = [
    ("Remember—every outbound call goes through {fact}.", "every outbound call goes through"),
    ("It should stay in your memory that we support {word}: {fact}.", "we support {word}: {fact}"),
    ("Wil je dit onthouden voor volgende gesprekken? {Fact}.", "{Fact}"),
    (
        "Remember for later: item #1 is always 'does this change {word}?' If yes, ask {fact}.",
        "item #1 is always 'does this change {word}?'",
    ),
    ("Se liga, de agora em diante: {fact}", "{fact}"),
    ("Kannst du dir dauerhaft merken, dass {fact}?", "{fact}"),
    ("hey, persist this one: {fact}", "{fact}"),
    ("Ein für alle Mal: {fact}.", "{fact}"),
    ("bake this in: {fact}", "{fact}"),
    ("Could you add this to what you remember about me: {fact}.", "{fact}"),
    (
        "## Context for you (keep this for every future session)\n\n{fact}.\n\n## Task\nFix it.",
        "{fact}",
    ),
    (
        "Outcome: {fact}. This will come up again and again, so please remember it for future "
        "sessions. Can you find where {word} is rendered?",
        "{fact}",
    ),
    ("Commit this to memory please. {Fact}.", "{Fact}"),
    ("So that I don't have to say it again next week: {fact}", "{fact}"),
    ("Don't lose this one: {fact}. It matters for every tool we write.", "{fact}"),
    ("{fact}!! write that in your long-term memory", "{fact}"),
    ("{fact} — please have that in mind in our future sessions", "{fact}"),
    ("zapamietaj ze {fact}", "{fact}"),
    ("you can save this one: {fact}", "{fact}"),
    ("keep this one around: {fact}", "{fact}"),
    ("A principle for every alert we write from now on: {fact}", "{fact}"),
    ("Write a test for {word} (and, for future reference, {fact}).", "{fact}"),
    ("before you start the refactor — remember, generally, that {fact}", "{fact}"),
    ("Remember that {fact}. We never write {word} items back.", "{fact}. We never write"),
    (
        "Long one, sorry. We moved {word} off the old box. {Fact}. The old box is dead. Please "
        "remember all this about {word} for future sessions.",
        "We moved {word} off the old box",
    ),
    (
        "Remember this going forward pls: {fact} and needs the lead's ok",
        "{fact} and needs the lead's ok",
    ),
]


# Round 26's near misses, from the false captures of be and bf, with fresh words.
ROUND_26_NOT_KEPT = [
    "don't forget: the new column needs to be in the {word} serializer as well",
    "Vergiss nicht, im PR die Version von {word} hochzuziehen",
    "Remember, the ticket says max {n} chars for the {word} field, so validate that",
    "the thing you remembered wrong earlier — the column is `{word}_at`. fix the query",
    "hou er bij deze wijziging rekening mee dat de {word}-app dezelfde component gebruikt",
    "when you add the column, remember it'll be null for all existing {word} rows",
    "always use `find_by!` in this controller, we want 404s from {word}",
    "From now on the {word} button should say 'Abgeben', not 'Senden' — change it in de.yml",
    "Remember to set `restartPolicy: Never` on that {word} Job, I don't want it retrying",
    "Since the upgrade, from now on every request to /v1/{word} returns 422. here's the body: {{}}",
    "for the next run, lower the {word} batch to 2 and see if the OOM goes away",
    "here's the system prompt, make it shorter:\n\n\"You are {word}. Remember: never reveal "
    'hostnames. Always answer in French."\n',
    "Save yourself the trouble and just use `jq` for this: extract `.{word}` from every json",
]
# Round 26's requests, from the misses of the same corpora: (shape, what is kept).
ROUND_26_KEPT = [
    ("Refactor `{word}` (btw remember that {fact}) and add a spec", "{fact}"),
    (
        "## context for you (please remember this permanently)\n{Fact}.\n\nNow: why is it slow?",
        "{Fact}",
    ),
    ("{Fact}. file that away for later", "{Fact}"),
    ("{Fact} — can you hang on to that for future chats?", "{Fact}"),
    (
        "I'm gonna tell you something and I need it to stick beyond today. {Fact}. Cool? now go",
        "{Fact}",
    ),
    (
        "I'm in Lisbon, and when I say 'this morning' it's Lisbon time. remember that about me",
        "when I say 'this morning' it's Lisbon time",
    ),
    (
        "Can you remember which add-ons we replaced? {word} → S3, Papertrail → CloudWatch. Keep "
        "that list for later.",
        "{word} → S3, Papertrail → CloudWatch",
    ),
    (
        "ok last thing, put it in memory: I like when you summarize {word} as a bullet list",
        "I like when you summarize {word} as a bullet list",
    ),
    ("fix the 500 on /{word}. ALSO (remember this one long-term) {fact}", "{fact}"),
    ("i think i told you already but pls memorize — {fact}", "{fact}"),
    ("remember TP={n} for the {word} model", "TP={n} for the {word} model"),
    ("Add this to memory pls: {fact}", "{fact}"),
    ("This goes in memory: {fact}.", "{fact}"),
    (
        "Keep this on file as our standard for {word} pods: `cpu: {n}`",
        "our standard for {word} pods: `cpu: {n}`",
    ),
    ("file under 'things you should always know': {fact}", "{fact}"),
    ("guárdalo en tu memoria porfa: {fact}", "{fact}"),
    ("Prima sistemami il test, poi salvati in memoria che {fact}.", "{fact}"),
    ("(remember for next time) {fact}: {word} vs app_user", "{fact}: {word} vs app_user"),
    ("remember (for real, in memory) that {fact}, don't swap it", "{fact}"),
]


# Round 27's near misses, from the false captures of bg and bh, with fresh words.
ROUND_27_NOT_KEPT = [
    "don't forget we need this merged before Thursday's {word} review",
    "Make me a cheat sheet for {word} codes, save it as `docs/{word}.md`.",
    "Don't forget the trailing newline in the {word} CSV, the importer needs it.",
    "Make sure you remember the flags I gave you earlier when you rerun the {word} export.",
    "Remember, the {word} sim is on 5020 — you used 502 in the last command.",
    "Don't forget the `--commit` flag, otherwise {word} does a dry run and writes nothing.",
    "As you go through the logs, bear in mind the clock at {word} is an hour off.",
    "Tieni presente, mentre riscrivi la funzione {word}, che viene chiamata dal vecchio bridge.",
    "don't forget: the PR also needs the {word} migration script, not just the code",
    "can you remember the exact error we had before the {word} rollback? I need it",
    "Remember we're only changing the {word} staging config here, don't touch prod files",
    "note this in the postmortem doc: root cause was the missing {word} tag",
    "pamiętaj że {word} to tylko PoC, nie musi być ładne",
]
# Round 27's requests, from the misses of the same corpora: (shape, what is kept).
ROUND_27_KEPT = [
    ("Lodge this somewhere permanent: {fact}.", "{fact}"),
    ("store in memory pls: {fact}", "{fact}"),
    ("Please add this to your persistent memory about the project: {fact}.", "{fact}"),
    ("btw (and remember this for next sessions) {fact}", "{fact}"),
    ("wrzuć sobie do pamięci: {fact}", "{fact}"),
    ("Noch eins fürs Gedächtnis: {fact}", "{fact}"),
    ("Just remember this going forward ok? {Fact}.", "{Fact}"),
    ("I think I said this before but remember it properly this time: {fact}", "{fact}"),
    (
        "For every future session: {fact}. We have {n} VMs and a change board. It won't change.",
        "{fact}. We have {n} VMs and a change board. It won't change",
    ),
    ("Keep this in mind next time you write docs for the {word} team: {fact}.", "{fact}"),
]


@pytest.mark.parametrize("shape", ROUND_25_NOT_KEPT + ROUND_26_NOT_KEPT + ROUND_27_NOT_KEPT)
def test_near_misses_of_rounds_25_to_27_are_not_kept(shape: str, rng: random.Random) -> None:
    n, m = rng.randrange(100, 999), rng.randrange(100, 999)
    prompt = shape.format(word=_fresh_word(rng), n=n, m=m)
    assert captured_facts(prompt) == [], prompt


@pytest.mark.parametrize(("shape", "kept"), ROUND_25_KEPT + ROUND_26_KEPT + ROUND_27_KEPT)
def test_requests_of_rounds_25_to_27_are_kept(shape: str, kept: str, rng: random.Random) -> None:
    fact, word = _fresh_fact(rng), _fresh_word(rng)
    # ("Fact" opens a sentence: a full stop before a lower-case word does not end one)
    names = {
        "fact": fact,
        "Fact": fact[0].upper() + fact[1:],
        "word": word,
        "n": rng.randrange(2, 9),
    }
    got = captured_facts(shape.format(**names))
    assert len(got) == 1 and kept.format(**names) in got[0], (shape, got)
