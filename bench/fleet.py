"""The deterministic synthetic fleet the benchmarks measure: repositories, agents, outcomes,
run records and recall queries.

Everything here is a pure function of its seed, so two runs of a benchmark measure the same
records and the same queries. :mod:`bench.common` re-exports these names.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class Repo:
    key: str
    language: str
    weight: float
    packages: tuple[str, ...]

    @property
    def scope(self) -> str:
        return f"project:{self.key}"

    @property
    def name(self) -> str:
        return self.key.rsplit("/", 1)[-1]


#: Several repositories of uneven size, so a scoped recall sees a fraction of the store.
REPOS: tuple[Repo, ...] = (
    Repo(
        "github.com/acme/api",
        "python",
        0.30,
        ("billing", "auth", "api", "notifications", "storage", "jobs"),
    ),
    Repo("github.com/acme/web", "typescript", 0.20, ("checkout", "auth", "dashboard", "api")),
    Repo("github.com/acme/billing", "python", 0.15, ("billing", "tax", "reports", "storage")),
    Repo("github.com/acme/infra", "go", 0.12, ("deploy", "jobs", "metrics", "storage")),
    Repo("github.com/acme/mobile", "kotlin", 0.08, ("checkout", "auth", "notifications")),
    Repo("github.com/acme/data-pipeline", "python", 0.08, ("ingest", "reports", "jobs")),
    Repo("gitlab.com/acme-labs/search", "rust", 0.04, ("search", "ingest", "storage")),
    Repo("github.com/acme/docs", "markdown", 0.03, ("api", "billing", "deploy")),
)

MODULES: dict[str, tuple[str, ...]] = {
    "billing": ("ledger", "settlement", "invoices", "refunds", "currency", "payouts"),
    "tax": ("rates", "vat", "exemptions", "rounding"),
    "auth": ("session", "tokens", "oauth", "permissions", "password_reset"),
    "api": ("routes", "pagination", "serializers", "rate_limit", "errors", "webhooks"),
    "notifications": ("email", "webhooks", "push", "templates", "digest"),
    "storage": ("cache", "migrations", "models", "repository", "pool"),
    "jobs": ("scheduler", "queue", "retry", "worker", "locks"),
    "reports": ("export", "csv", "charts", "daily_totals"),
    "checkout": ("cart", "payment_form", "address", "summary"),
    "dashboard": ("widgets", "filters", "charts", "layout"),
    "deploy": ("rollout", "canary", "helm", "secrets"),
    "metrics": ("exporter", "histograms", "alerts"),
    "ingest": ("reader", "parser", "dedupe", "backfill"),
    "search": ("indexer", "query", "ranking", "tokenizer"),
}

SHARED_FILES: dict[str, tuple[str, ...]] = {
    "python": ("pyproject.toml", "requirements.lock", ".github/workflows/ci.yml", "Makefile"),
    "typescript": ("package.json", "pnpm-lock.yaml", "tsconfig.json", ".github/workflows/ci.yml"),
    "go": ("go.mod", "go.sum", "Makefile", ".github/workflows/ci.yml"),
    "kotlin": ("app/build.gradle.kts", "gradle/libs.versions.toml", ".github/workflows/ci.yml"),
    "rust": ("Cargo.toml", "Cargo.lock", ".gitlab-ci.yml"),
    "markdown": ("mkdocs.yml", "README.md"),
}

SYMPTOMS = (
    "flaky reconciliation test",
    "off-by-one error in pagination",
    "timezone drift in daily totals",
    "race condition on concurrent refunds",
    "memory leak in the worker pool",
    "N+1 query on the invoice list",
    "stale cache after logout",
    "duplicate webhook deliveries",
    "slow CSV export",
    "broken retry backoff",
    "missing null check on an optional customer",
    "unicode normalisation bug in search",
    "deadlock between two migrations",
    "wrong rounding of tax amounts",
    "expired OAuth token that is never refreshed",
    "wrong HTTP status on validation errors",
    "crash on an empty result set",
    "leaked file descriptors in the uploader",
    "rate limiter counting per process instead of per user",
    "double charge when the payment form is submitted twice",
    "canary rollout that never promotes",
    "histogram buckets that drop slow requests",
    "dedupe step that keeps the older record",
    "ranking that ignores recency",
    "session cookie missing the Secure flag",
    "password reset link that works twice",
    "layout shift on the dashboard charts",
    "backfill job that reprocesses finished partitions",
)

CAUSES = (
    "the fixture writes rows in the local timezone",
    "datetime.now() was called without a timezone",
    "the lock was released before the commit",
    "the cache key ignored the tenant id",
    "the cursor was computed from the last row instead of the next one",
    "a float was used for money",
    "the retry loop reset its attempt counter on every failure",
    "the ORM lazily loaded each line item",
    "the connection pool was never closed in tests",
    "the migration added a NOT NULL column without a default",
    "the test relied on dictionary ordering",
    "a mock returned a shared mutable default",
    "the idempotency key was generated after the request was sent",
    "two workers claimed the same job without SELECT FOR UPDATE",
    "the tokenizer lower-cased before normalising",
    "the environment variable was read at import time",
    "the feature flag defaulted to on in staging",
    "the serializer dropped fields that were None",
    "the Helm chart pinned an old image tag",
    "the exporter reset counters on every scrape",
)

FIXES = (
    "pinned the clock in the test",
    "made reconcile() take an explicit cutoff",
    "switched the amounts to Decimal with banker's rounding",
    "wrapped the update in a single transaction",
    "added a composite index on (tenant_id, created_at)",
    "moved cache invalidation into the commit hook",
    "loaded line items with one joined query",
    "added exponential backoff with jitter and a cap",
    "made the handler idempotent on the request id",
    "claimed jobs with an atomic UPDATE ... RETURNING",
    "normalised to NFC before tokenizing",
    "read the setting lazily through the config object",
    "closed the pool in a session-scoped fixture",
    "split the migration into add-column, backfill and constraint steps",
    "sorted the keys before comparing snapshots",
    "returned a fresh list from the factory",
    "kept None fields in the serializer output",
    "bumped the image tag and added a check in CI",
)

TEST_CMDS = {
    "python": ("pytest -q", "pytest -q -k {mod}", "ruff check .", "mypy src"),
    "typescript": ("pnpm test", "pnpm vitest run {mod}", "pnpm lint", "tsc --noEmit"),
    "go": ("go test ./...", "go test ./internal/{pkg}/...", "golangci-lint run", "go vet ./..."),
    "kotlin": ("./gradlew test", "./gradlew lint", "./gradlew detekt"),
    "rust": ("cargo test", "cargo clippy -- -D warnings", "cargo test {mod}"),
    "markdown": ("mkdocs build --strict", "markdownlint docs"),
}

ERROR_CLASSES = (
    "test_failure",
    "test_failure",
    "test_failure",
    "lint",
    "typecheck",
    "build",
    "import_error",
    "timeout",
    "flaky_test",
    "snapshot_mismatch",
    "migration_error",
)

OBSTACLES = (
    "the integration suite needs a database that is not available in the sandbox",
    "the failure only reproduces under load",
    "the fixture data is generated by another service",
    "the upstream API returns 503 intermittently",
    "fixing it properly needs a schema change that should be reviewed first",
    "the test passes locally but fails in CI with a different locale",
    "the lockfile conflicts with the main branch",
)

FEATURES = (
    "partial refunds",
    "multi-currency invoices",
    "SSO login with SAML",
    "cursor-based pagination",
    "webhook signing secrets",
    "daily digest emails",
    "per-tenant rate limits",
    "CSV export of payouts",
    "dark mode on the dashboard",
    "canary deploys for the worker fleet",
    "incremental backfill",
    "typo-tolerant search",
)

DEPENDENCIES = (
    ("sqlalchemy", "2.0.36", "2.0.41"),
    ("pydantic", "2.9.2", "2.11.4"),
    ("react", "18.3.1", "19.1.0"),
    ("vite", "5.4.10", "6.3.5"),
    ("golang.org/x/net", "0.30.0", "0.38.0"),
    ("tokio", "1.41.0", "1.45.1"),
    ("okhttp", "4.12.0", "5.0.0"),
    ("stripe", "11.1.0", "12.2.0"),
)

AGENTS = (
    ("api-fixer", "claude-code", "claude-sonnet-4-5"),
    ("reviewer", "claude-code", "claude-opus-4-1"),
    ("test-writer", "codex", "gpt-5-codex"),
    ("dep-bumper", "command", "gpt-5-mini"),
    ("docs-bot", "codex", "gpt-5-mini"),
    ("migrator", "claude-code", "claude-sonnet-4-5"),
    ("triage", "fleet-harness", "claude-haiku-4-5"),
    ("release-bot", "command", "gpt-5-mini"),
)

#: (outcome, reason, weight): most runs succeed, failures are varied.
OUTCOMES = (
    ("succeeded", "completed", 0.58),
    ("failed", "verify_failed", 0.18),
    ("failed", "agent_error", 0.06),
    ("failed", "tool_error", 0.03),
    ("failed", "budget_exceeded", 0.02),
    ("timed_out", "deadline", 0.05),
    ("cancelled", "superseded", 0.04),
    ("cancelled", "operator_cancelled", 0.02),
    ("crashed", "killed", 0.02),
)

#: The newest synthetic run starts here; older ones go back about two months.
EPOCH = datetime(2026, 11, 27, 18, 0, tzinfo=UTC)


class FleetData:
    """Deterministic run records and recall queries for a fleet working on :data:`REPOS`.

    ``records(n)`` yields the same first ``n`` records for every ``n`` (a prefix of one
    infinite stream), so a 1k store holds the first 1k records of the 10k store.
    """

    def __init__(self, seed: int = 20261129) -> None:
        self.seed = seed

    # -- vocabulary helpers -----------------------------------------------------------
    @staticmethod
    def path(rng: random.Random, repo: Repo, pkg: str, mod: str, *, test: bool = False) -> str:
        lang = repo.language
        camel = "".join(p.capitalize() for p in mod.split("_"))
        if lang == "python":
            return f"tests/{pkg}/test_{mod}.py" if test else f"src/{pkg}/{mod}.py"
        if lang == "typescript":
            if test:
                return f"src/{pkg}/__tests__/{mod}.test.ts"
            return f"src/{pkg}/{camel}.tsx" if rng.random() < 0.5 else f"src/{pkg}/{mod}.ts"
        if lang == "go":
            return f"internal/{pkg}/{mod}{'_test' if test else ''}.go"
        if lang == "kotlin":
            kind = "test" if test else "main"
            return f"app/src/{kind}/java/com/acme/{pkg}/{camel}{'Test' if test else ''}.kt"
        if lang == "rust":
            return f"tests/{pkg}_{mod}.rs" if test else f"src/{pkg}/{mod}.rs"
        return f"docs/{pkg}/{mod.replace('_', '-')}.md"

    @staticmethod
    def func(rng: random.Random, mod: str) -> str:
        verb = rng.choice(("load", "apply", "compute", "build", "sync", "validate", "handle"))
        return f"{verb}_{mod}"

    def _sentences(
        self,
        rng: random.Random,
        repo: Repo,
        outcome: str,
        reason: str,
        pkg: str,
        mod: str,
        files: list[str],
        failures: list[str],
    ) -> list[str]:
        src = files[0]
        test = next((f for f in files if "test" in f.lower()), self.path(rng, repo, pkg, mod))
        cmd = rng.choice(TEST_CMDS[repo.language]).format(pkg=pkg, mod=mod)
        symptom, cause, fix = rng.choice(SYMPTOMS), rng.choice(CAUSES), rng.choice(FIXES)
        fn = self.func(rng, mod)
        out: list[str] = []
        if outcome == "succeeded":
            kind = rng.random()
            if kind < 0.12:
                dep, old, new = rng.choice(DEPENDENCIES)
                out.append(f"Bumped {dep} from {old} to {new} and regenerated the lockfile.")
                out.append(f"Ran `{cmd}`: {rng.randint(40, 2400)} tests pass.")
            elif kind < 0.25:
                feature = rng.choice(FEATURES)
                out.append(f"Implemented {feature} in {src}.")
                out.append(f"Added tests in {test} and documented the new behaviour.")
            else:
                out.append(f"Fixed the {symptom} in {src}: {cause}.")
                out.append(f"I {fix} and changed {fn}() to match.")
                out.append(f"Added a regression test in {test}; `{cmd}` passes.")
        elif reason == "verify_failed":
            cls = failures[0] if failures else "test_failure"
            out.append(f"Tried to fix the {symptom} in {src}.")
            out.append(f"I {fix}, but `{cmd}` still fails with {cls} in {test}.")
            out.append(f"I suspect {cause}, but {rng.choice(OBSTACLES)}.")
        elif outcome == "failed":
            out.append(f"Could not finish the change to {fn}() in {src}.")
            if reason == "tool_error":
                out.append(f"The shell tool exited with an error while running `{cmd}`.")
            elif reason == "budget_exceeded":
                out.append("The token budget ran out while reading the call sites.")
            out.append(f"Blocked because {rng.choice(OBSTACLES)}.")
        elif outcome == "timed_out":
            out.append(f"Ran out of time while bisecting the {symptom} in {src}.")
            out.append(f"Narrowed it to {fn}(); {cause} is the likely cause.")
        elif outcome == "cancelled":
            out.append(f"Stopped while working on the {symptom} in {src}.")
            out.append("A newer run on the same branch superseded this one.")
        else:
            out.append(f"The agent process was killed while running `{cmd}` against {src}.")
        fillers = [
            f"The {pkg} module has no other callers of {fn}().",
            f"Follow-up: {rng.choice(FEATURES)} touches the same code path in {mod}.",
            f"Reviewed {rng.choice(files)} for similar patterns; none found.",
            f"Note for next time: {cause}.",
            f"CI runs `{cmd}` on every pull request for this repository.",
            f"The {symptom} was first reported in the {rng.choice(('#ops', '#billing', '#web'))}"
            " channel.",
        ]
        rng.shuffle(fillers)
        return out + fillers

    # -- records ----------------------------------------------------------------------
    def record(self, i: int) -> dict[str, Any]:
        """Run record number ``i`` (0-based); valid against the run-record schema."""
        rng = random.Random(f"{self.seed}:record:{i}")
        repo = rng.choices(REPOS, weights=[r.weight for r in REPOS])[0]
        agent, adapter, model = rng.choice(AGENTS)
        outcome, reason = rng.choices(
            [(o, r) for o, r, _ in OUTCOMES], weights=[w for _, _, w in OUTCOMES]
        )[0]
        pkg = rng.choice(repo.packages)
        mod = rng.choice(MODULES[pkg])
        files = [self.path(rng, repo, pkg, mod)]
        if repo.language != "markdown" and rng.random() < 0.8:
            files.append(self.path(rng, repo, pkg, mod, test=True))
        for _ in range(rng.randint(0, 5)):
            other_pkg = rng.choice(repo.packages)
            files.append(self.path(rng, repo, other_pkg, rng.choice(MODULES[other_pkg])))
        if rng.random() < 0.15:
            files.append(rng.choice(SHARED_FILES[repo.language]))
        files = list(dict.fromkeys(files))

        failures: list[str] = []
        if outcome != "succeeded" and rng.random() < 0.85:
            failures = [rng.choice(ERROR_CLASSES) for _ in range(rng.randint(1, 4))]
        elif rng.random() < 0.3:  # fixed along the way: failed first, passed at the end
            failures = [rng.choice(ERROR_CLASSES)]

        events: list[dict[str, Any]] = []
        for path in files:
            events.append({"type": "tool_call", "name": "read", "args": {"path": path}})
            events.append({"type": "edit", "path": path})
        for cls in failures:
            events.append({"type": "verify", "passed": False, "error_class": cls})
        if outcome == "succeeded":
            events.append({"type": "verify", "passed": True})

        target = rng.randint(100, 600)
        text = ""
        for sentence in self._sentences(rng, repo, outcome, reason, pkg, mod, files, failures):
            if len(text) >= target:
                break
            text = f"{text} {sentence}".strip()
        text = text[:600]

        started = EPOCH - timedelta(seconds=rng.randint(0, 60 * 86400))
        ended = started + timedelta(seconds=rng.randint(20, 3600))
        branch = rng.choice(("main", f"fix/{mod.replace('_', '-')}", f"agent/{agent}-{i % 97}"))
        sessions: list[dict[str, Any]] = [
            {
                "id": "s1",
                "cwd": f"/srv/agents/{agent}/{repo.name}",
                "repo": repo.key,
                "branch": branch,
                "events": events,
            }
        ]
        if rng.random() < 0.2:
            sessions.append(
                {
                    "id": "s2",
                    "parent_id": "s1",
                    "subagent": True,
                    "cwd": f"/srv/agents/{agent}/{repo.name}",
                    "repo": repo.key,
                    "events": [{"type": "edit", "path": self.path(rng, repo, pkg, mod, test=True)}],
                }
            )
        trigger = rng.choices(
            ("manual", "schedule", "webhook:github", "channel:slack"), weights=(70, 20, 7, 3)
        )[0]
        pr = None
        if repo.key.startswith("github.com/") and rng.random() < 0.3:
            pr = f"https://{repo.key}/pull/{rng.randint(100, 9999)}"
        return {
            "version": 1,
            "run_id": f"run-{i:07d}-{rng.getrandbits(32):08x}",
            "agent": agent,
            "adapter": adapter,
            "trace_id": f"{rng.getrandbits(128):032x}",
            "model": {"served": model},
            "trigger": trigger,
            "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "ended_at": ended.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "outcome": outcome,
            "reason": reason,
            "cost": {"usd": round(rng.uniform(0.01, 3.5), 4), "source": "reported"},
            "spawned": True,
            "prompt": f"Work on {pkg}/{mod} in {repo.key}.",
            "result_text": text,
            "sessions": sessions,
            "pull_request": pr,
        }

    def records(self, n: int, start: int = 0) -> Iterator[dict[str, Any]]:
        for i in range(start, start + n):
            yield self.record(i)

    # -- queries ----------------------------------------------------------------------
    def queries(self, n: int) -> list[tuple[str, Repo]]:
        """``n`` recall queries, each with the repository it is scoped to.

        Repositories are drawn with the same weights as the records, so a query's scope
        covers a realistic share of the store (3% to 30%).
        """
        rng = random.Random(f"{self.seed}:queries")
        out: list[tuple[str, Repo]] = []
        for _ in range(n):
            repo = rng.choices(REPOS, weights=[r.weight for r in REPOS])[0]
            pkg = rng.choice(repo.packages)
            mod = rng.choice(MODULES[pkg])
            out.append((self._query(rng, repo, pkg, mod, rng.randrange(8)), repo))
        return out

    def _query(self, rng: random.Random, repo: Repo, pkg: str, mod: str, kind: int) -> str:
        """One query of eight shapes people type when asking what happened before."""
        if kind == 0:
            return rng.choice(SYMPTOMS)
        if kind == 1:
            return f"why does {self.path(rng, repo, pkg, mod, test=True)} fail"
        if kind == 2:
            return f"{rng.choice(ERROR_CLASSES)} in {pkg} {mod}"
        if kind == 3:
            return f"how did we fix the {rng.choice(SYMPTOMS)}?"
        if kind == 4:
            return f"{self.func(rng, mod)} {rng.choice(CAUSES)}"
        if kind == 5:
            return f"previous attempts at {rng.choice(FEATURES)}"
        if kind == 6:
            return f"changes to {self.path(rng, repo, pkg, mod)} that broke CI"
        return f"{mod.replace('_', ' ')} regression after the {pkg} refactor"
