# ruff: noqa: E501  (data: one incident or fact a line reads better than wrapped strings)
"""The words of :mod:`bench.recall_sets`: repositories, routine work, incidents and facts.

Incidents and facts come in two halves, ``dev`` (weights are chosen on it) and ``confirm``
(they are checked on it); no text appears in both. An incident is what a run's result says
(``doc``, with the module and test tool filled in per repository), a question in its own words
(``lexical``) and a paraphrase that shares no content word with it (``paraphrase``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Repo:
    key: str
    language: str
    tool: str
    modules: tuple[str, ...]


REPOS: tuple[Repo, ...] = (
    Repo(
        "github.com/acme/billing-api",
        "Python",
        "pytest",
        ("billing/invoice.py", "billing/refunds.py", "billing/tax.py", "api/routes.py"),
    ),
    Repo(
        "github.com/acme/web-dashboard",
        "TypeScript",
        "vitest",
        (
            "src/pages/Orders.tsx",
            "src/api/client.ts",
            "src/store/session.ts",
            "src/components/Table.tsx",
        ),
    ),
    Repo(
        "github.com/acme/ingest-worker",
        "Go",
        "go test",
        (
            "internal/queue/consumer.go",
            "internal/parse/record.go",
            "cmd/worker/main.go",
            "internal/retry/backoff.go",
        ),
    ),
    Repo(
        "github.com/acme/android-app",
        "Kotlin",
        "gradle test",
        (
            "app/src/main/kotlin/LoginViewModel.kt",
            "app/src/main/kotlin/SyncService.kt",
            "app/src/main/kotlin/ProfileScreen.kt",
        ),
    ),
    Repo(
        "gitlab.com/acme/search-svc",
        "Rust",
        "cargo test",
        ("src/index/segment.rs", "src/query/parser.rs", "src/http/handlers.rs", "src/cache.rs"),
    ),
    Repo(
        "github.com/acme/auth-gateway",
        "Java",
        "mvn test",
        (
            "src/main/java/acme/auth/TokenFilter.java",
            "src/main/java/acme/auth/SessionStore.java",
            "src/main/java/acme/auth/LoginController.java",
        ),
    ),
    Repo(
        "github.com/acme/infra",
        "HCL",
        "terraform validate",
        ("modules/network/main.tf", "modules/db/main.tf", "envs/prod/main.tf"),
    ),
    Repo(
        "github.com/acme/data-pipeline",
        "Scala",
        "sbt test",
        (
            "src/main/scala/jobs/DailyReport.scala",
            "src/main/scala/io/CsvWriter.scala",
            "src/main/scala/jobs/Dedupe.scala",
        ),
    ),
    Repo(
        "github.com/acme/devtools-cli",
        "Python",
        "pytest",
        ("cli/commands/deploy.py", "cli/config.py", "cli/output.py"),
    ),
    Repo(
        "bitbucket.org/acme/docs-site",
        "JavaScript",
        "jest",
        ("src/search.js", "src/render/markdown.js", "scripts/build.js"),
    ),
    Repo(
        "github.com/acme/payments-core",
        "C#",
        "dotnet test",
        ("src/Payments/Ledger.cs", "src/Payments/CardCharge.cs", "src/Payments/Webhooks.cs"),
    ),
    Repo(
        "github.com/acme/ml-training",
        "Python",
        "pytest",
        ("train/loop.py", "data/loader.py", "eval/metrics.py"),
    ),
    Repo(
        "github.com/acme/edge-proxy",
        "C++",
        "ctest",
        ("src/conn_pool.cc", "src/tls/handshake.cc", "src/router.cc"),
    ),
    Repo(
        "github.com/acme/notify",
        "Ruby",
        "rspec",
        ("app/mailers/digest_mailer.rb", "app/jobs/push_job.rb", "lib/templates.rb"),
    ),
)
AGENTS = ("claude-code", "codex", "fahim-khan", "maria-lopez", "review-bot", "ci-fixer")

ROUTINE = (
    "Added {feature} to {mod}; {tool} passed with {n} new tests.",
    "Refactored {mod}: extracted a {thing} helper, no behaviour change; {tool} green.",
    "Bumped {dep} from {v1} to {v2}; {tool} passed, no code changes needed.",
    "{tool} failed after merging main into the branch: {n} tests in {mod} needed a rebase; re-ran, green.",
    "Reviewed pull request #{pr}: asked for tests around {mod} and left {m} comments.",
    "Updated the README and the docstrings of {mod}.",
    "Looked into slow {thing} in {mod}; profiled it, nothing changed yet, notes left in the ticket.",
    "Renamed the {thing} in {mod} for clarity and updated {n} call sites.",
    "Wrote {n} unit tests for {mod}; coverage of the module went from {p1}% to {p2}%.",
    "Removed dead code from {mod} ({n} unused functions); {tool} passed.",
    "Fixed a typo in an error message in {mod}.",
    "Added type annotations to {mod}; the type checker is clean.",
)
FEATURES = (
    "CSV import",
    "dark mode",
    "an audit log",
    "a retry policy",
    "search filters",
    "bulk delete",
    "SSO login",
    "a metrics endpoint",
    "a health check",
    "pagination links",
    "a settings page",
    "webhook delivery",
    "an export button",
    "request tracing",
    "a feature toggle",
)
THINGS = (
    "parser",
    "validator",
    "serializer",
    "query builder",
    "cache lookup",
    "formatter",
    "config loader",
    "scheduler",
)
DEPS = (
    "requests",
    "react",
    "grpc",
    "serde",
    "jackson",
    "lodash",
    "numpy",
    "rails",
    "okhttp",
    "boost",
)
VERIFY = (
    "Re-ran {tool} on the branch after the fix to {mod}: all green.",
    "Verification run: {tool} passed twice in a row; opened the pull request.",
    "Checked the fix again with {tool}; nothing failing, ready for review.",
)


def routine_slots(rng: random.Random, repo: Repo, mod: str) -> dict[str, object]:
    v1 = f"{rng.randrange(1, 9)}.{rng.randrange(0, 30)}"
    return {
        "mod": mod,
        "tool": repo.tool,
        "feature": rng.choice(FEATURES),
        "thing": rng.choice(THINGS),
        "dep": rng.choice(DEPS),
        "v1": v1,
        "v2": f"{v1.split('.')[0]}.{rng.randrange(30, 60)}",
        "n": rng.randrange(2, 30),
        "m": rng.randrange(2, 12),
        "pr": rng.randrange(100, 9000),
        "p1": rng.randrange(30, 60),
        "p2": rng.randrange(61, 95),
    }


@dataclass(frozen=True)
class Incident:
    doc: str
    lexical: str
    paraphrase: str


INCIDENTS: dict[str, tuple[Incident, ...]] = {
    "dev": (
        Incident(
            "{tool} failed in {mod}: test_refund_rounding expected 10.00 but got 10.01; switched refunds to Decimal quantize with ROUND_HALF_EVEN.",
            "refund rounding test failure in {mod}, Decimal quantize fix",
            "when money sent back to customers came out a cent off, what corrected it?",
        ),
        Incident(
            "CI flaked: {tool} timed out waiting for the postgres container healthcheck in {mod}; raised the wait to 60s and added a retry loop.",
            "postgres container healthcheck timeout in CI",
            "the database in the build pipeline was not ready soon enough; how was it handled?",
        ),
        Incident(
            "Memory leak: worker RSS grew to 3 GB overnight; the LRU cache in {mod} had no maxsize, capped it at 1024 entries.",
            "LRU cache without maxsize leaking memory in {mod}",
            "a process kept eating more RAM until it got killed; what was unbounded?",
        ),
        Incident(
            "Deadlock between two transactions updating accounts and ledger rows in opposite order in {mod}; now both lock rows sorted by id.",
            "deadlock updating accounts and ledger rows in {mod}",
            "a pair of concurrent writes blocked each other forever; which sequencing change stopped it?",
        ),
        Incident(
            "Timezone bug: the nightly report used local time, so runs after 23:00 UTC landed on the wrong date; {mod} now converts to UTC before bucketing.",
            "nightly report wrong date timezone UTC bucketing",
            "late-evening jobs were counted under the next calendar day; how was that fixed?",
        ),
        Incident(
            "Upgraded the JSON parser and it rejected trailing commas in config files; {mod} strips them before parsing and warns once.",
            "JSON parser rejects trailing commas in config",
            "after a library bump, settings with an extra separator at the end stopped loading",
        ),
        Incident(
            "Race condition: two webhooks for the same order arrived together and created duplicate shipments; {mod} takes an idempotency key with a unique index.",
            "duplicate shipments from webhooks, idempotency key unique index",
            "parcels were dispatched twice when notifications came in simultaneously",
        ),
        Incident(
            "The {tool} run failed on Windows: paths joined with a forward slash in {mod}; replaced string concatenation with pathlib.",
            "Windows path forward slash failure, pathlib",
            "broke on Microsoft's operating system because of how directory separators were glued together",
        ),
        Incident(
            "N+1 queries: the orders page issued one SELECT per line item; {mod} now prefetches items in a single join, page load fell from 4.2 s to 300 ms.",
            "N+1 queries orders page prefetch join",
            "a listing screen was sluggish because the database got asked hundreds of times",
        ),
        Incident(
            "TLS handshake errors after the certificate rotated: the client pinned the old intermediate CA in {mod}; pinning now uses the root bundle.",
            "TLS handshake error certificate rotation pinned intermediate CA",
            "secure connections broke once the server's credentials were renewed",
        ),
        Incident(
            "Integer overflow in the counter of {mod}: int32 wrapped after 2^31 events; widened to int64 and added a test at the boundary.",
            "int32 counter overflow widened to int64",
            "a tally went negative after billions of increments",
        ),
        Incident(
            "Flaky snapshot test: the rendered HTML contained a random nonce, so snapshots never matched; {mod} seeds the nonce in tests.",
            "flaky snapshot test random nonce HTML",
            "golden output comparisons kept differing between attempts because of an unpredictable token",
        ),
        Incident(
            "Docker image grew to 2.3 GB because build tools stayed in the final layer; a multi-stage build in {mod} brought it to 180 MB.",
            "Docker image size multi-stage build",
            "the shipped container was enormous; how was it slimmed?",
        ),
        Incident(
            "Null pointer on login when the user profile had no avatar; {mod} now falls back to initials.",
            "null pointer login profile without avatar",
            "signing in crashed for people missing a picture",
        ),
        Incident(
            "The rate limiter counted requests per process instead of per client, so scaling to 8 replicas let clients send 8x the quota; moved the counters to Redis in {mod}.",
            "rate limiter per process counters moved to Redis",
            "throttling became eight times looser after adding more instances",
        ),
        Incident(
            "Migration 0042 locked the users table for 11 minutes in production; rewrote it in {mod} to backfill in batches of 5,000 rows.",
            "migration locked users table backfill batches",
            "a schema change froze account data for ages during a deploy",
        ),
        Incident(
            "Unicode bug: names with accents were truncated mid-character by a byte-length cut in {mod}; truncation now counts code points.",
            "unicode accents truncated byte length code points",
            "people called José or Zoë saw what they're called chopped into garbage",
        ),
        Incident(
            "A cron job ran twice during the daylight saving change; {mod} schedules in UTC and keeps a lock file.",
            "cron job ran twice daylight saving lock file",
            "a periodic task fired a second time when the clocks moved in spring",
        ),
        Incident(
            "Search returned stale results because the cache key ignored the locale; {mod} adds the locale to the key.",
            "stale search results cache key locale",
            "users in another language kept seeing outdated hits",
        ),
        Incident(
            "Out of memory in the CSV export of {mod}: the whole file was built in a list; it streams rows with a generator now.",
            "CSV export out of memory streaming generator",
            "downloading a big spreadsheet crashed the box; it now writes as it goes",
        ),
        Incident(
            "A linter upgrade turned 340 new warnings into errors and blocked merges; pinned the linter and fixed the rules in {mod} one at a time.",
            "linter upgrade warnings errors blocked merges pinned",
            "a style checker's latest release stopped every pull request from landing",
        ),
        Incident(
            "Thread leak: every retry in {mod} started a new watcher that never exited; the watcher now stops with the request context.",
            "thread leak retry watcher never exited",
            "background workers piled up with each reattempt until the service stalled",
        ),
        Incident(
            "A floating point comparison made the tax test fail on ARM; {mod} compares with a tolerance of 1e-9.",
            "floating point tax test ARM tolerance",
            "a levy calculation check passed on Intel laptops but not on the new Apple chips",
        ),
        Incident(
            "Secrets leaked into logs: the HTTP client in {mod} logged full headers including Authorization; headers are redacted now.",
            "Authorization header logged secrets redacted",
            "bearer tokens showed up in plain text in our observability output",
        ),
    ),
    "confirm": (
        Incident(
            "Pagination skipped records: the cursor in {mod} used created_at, which is not unique; the cursor is now (created_at, id).",
            "pagination cursor created_at skipped records",
            "walking through the listing, some entries never appeared",
        ),
        Incident(
            "The build broke after the compiler upgrade: a deprecated API was removed; {mod} was ported to the new stream interface.",
            "compiler upgrade deprecated API removed",
            "a toolchain bump no longer accepted old calls",
        ),
        Incident(
            "Email notifications were sent in the server's language, not the recipient's; {mod} reads the preferred locale from the profile.",
            "email notifications language recipient locale",
            "messages reached people in a tongue they don't speak",
        ),
        Incident(
            "Connection pool exhausted under load: {mod} never returned connections when a query raised; wrapped them in a context manager.",
            "connection pool exhausted never returned connections",
            "under heavy traffic the app ran out of database handles after errors",
        ),
        Incident(
            "Image thumbnails were rotated sideways because EXIF orientation was ignored in {mod}; thumbnails now apply it.",
            "thumbnails rotated EXIF orientation",
            "photos from phones showed up turned on their side in previews",
        ),
        Incident(
            "The {tool} suite took 40 minutes; split it into 6 shards and cached dependencies in {mod}, now 9 minutes.",
            "test suite sharding cached dependencies 40 minutes",
            "the checks were painfully slow; how did we make them finish faster?",
        ),
        Incident(
            "Division by zero when a cart had only free items: the average price in {mod} divided by the paid count; it guards the empty case.",
            "division by zero cart free items average price",
            "a basket with nothing to pay for crashed the checkout",
        ),
        Incident(
            "Webhook signatures failed verification because the body was re-serialised before hashing; {mod} verifies the raw bytes.",
            "webhook signature verification raw body",
            "incoming callbacks were rejected as forged though they were genuine",
        ),
        Incident(
            "Feature flag evaluation in {mod} defaulted to on when the flag service was unreachable; it defaults to off now.",
            "feature flag defaulted on when service unreachable",
            "an unfinished option went live for everyone during an outage",
        ),
        Incident(
            "A circular import between models and serializers in {mod} crashed startup; moved the shared types to a separate module.",
            "circular import models serializers startup crash",
            "the program could not boot because two files required each other",
        ),
        Incident(
            "The mobile app drained the battery: location polling every second in {mod}; switched to significant-change updates.",
            "battery drain location polling",
            "phones got hot and lost charge quickly while the application was open",
        ),
        Incident(
            "Sorting was wrong for names with uppercase letters; {mod} sorted by raw bytes and now uses case-folded collation.",
            "sorting uppercase names collation",
            "alphabetical lists put capitalised entries before everything else",
        ),
        Incident(
            "Kubernetes pods restarted in a loop: the liveness probe in {mod} hit an endpoint that needed the database; the probe now checks the process only.",
            "liveness probe restart loop pods",
            "containers kept being killed and brought back by the orchestrator",
        ),
        Incident(
            "A retry storm after an outage: clients in {mod} retried immediately without backoff; added exponential backoff with jitter.",
            "retry storm exponential backoff jitter",
            "once the servers recovered, everyone hammered them at the same instant",
        ),
        Incident(
            "Dates were parsed as month/day for European users; {mod} parses ISO 8601 only and rejects ambiguous input.",
            "dates parsed month day European ISO 8601",
            "the 3rd of April became the 4th of March for some customers",
        ),
        Incident(
            "Password reset links never expired; {mod} signs them with a 30-minute lifetime.",
            "password reset links expiry",
            "an old recovery email could still take over accounts weeks later",
        ),
        Incident(
            "File uploads over 10 MB failed silently because the proxy limit was lower than the app's; raised client_max_body_size and {mod} reports the limit.",
            "file uploads 10 MB proxy limit client_max_body_size",
            "large attachments vanished without any error message",
        ),
        Incident(
            "Gradle dependency conflict: two versions of protobuf on the classpath broke {mod}; forced one version in the platform BOM.",
            "Gradle protobuf version conflict classpath",
            "a serialization library appeared twice in different releases and clashed",
        ),
        Incident(
            "The websocket in {mod} dropped every 60 seconds behind the load balancer idle timeout; it sends a ping every 25 seconds.",
            "websocket drops idle timeout ping",
            "live updates disconnected each minute when nothing was happening",
        ),
        Incident(
            "Currency amounts were stored as floats in {mod}; migrated to integer minor units.",
            "currency amounts floats integer minor units",
            "prices kept gaining tiny fractions because of how money was kept",
        ),
        Incident(
            "Access check missing on the export endpoint of {mod}: any logged-in user could download other tenants' data; added an ownership check.",
            "missing access check export endpoint tenants",
            "one customer could pull another organisation's records",
        ),
        Incident(
            "Logs filled the disk: the debug level was left on in production in {mod}; the level comes from the environment and logs rotate daily.",
            "debug logs filled disk rotate",
            "the server ran out of storage because of overly chatty diagnostics",
        ),
        Incident(
            "The {tool} run on CI used a different Node version than local; pinned it with .nvmrc and engines in {mod}.",
            "Node version mismatch CI nvmrc engines",
            "the JavaScript runtime on the build machines differed from developers' laptops",
        ),
        Incident(
            "Regex catastrophic backtracking on long emails froze request handling in {mod}; rewrote the pattern without nested quantifiers.",
            "regex catastrophic backtracking email validation",
            "checking an address string hung the server for minutes",
        ),
    ),
}

#: Queries about nothing the sets hold: recall should answer them with nothing.
UNRELATED: dict[str, tuple[str, ...]] = {
    "dev": (
        "chocolate cake recipe",
        "best hiking trails in the alps",
        "how to knit a scarf",
        "football world cup winners",
        "what is the capital of peru",
        "tips for growing tomatoes",
        "cheap flights to lisbon",
        "how tall is mount everest",
        "guitar chords for beginners",
        "history of the roman empire",
    ),
    "confirm": (
        "banana bread with walnuts",
        "learning to play chess openings",
        "how to train a puppy",
        "olympic swimming records",
        "weather forecast for tomorrow",
        "watercolor painting ideas",
        "best pizza in naples",
        "how do volcanoes erupt",
        "wedding speech examples",
        "origami crane instructions",
    ),
}

FACTS: dict[str, tuple[tuple[str, str], ...]] = {
    "dev": (
        (
            "Staging database credentials rotate every 30 days; the new password is in the vault under db/staging.",
            "how often do the pre-production datastore secrets change?",
        ),
        (
            "Never run the load tests against production: they create real orders.",
            "is it safe to hammer the live site with synthetic traffic?",
        ),
        (
            "The mobile release train ships on Thursdays; the cut-off for merges is Tuesday noon.",
            "when do phone app versions go out, and when must code be in?",
        ),
        (
            "Use pnpm, not npm, in the web repository; the lockfile is pnpm-lock.yaml.",
            "which JavaScript package manager should I install modules with for the frontend?",
        ),
        (
            "Feature flags older than 90 days must be removed or made permanent.",
            "how long may a toggle stay around before cleanup?",
        ),
        (
            "The payments team owns anything under services/payments; ping @pay-oncall for reviews.",
            "who should approve changes to the money-handling code?",
        ),
        (
            "Integration tests need Docker running locally; start it before make test.",
            "what must be up on my laptop before the end-to-end checks?",
        ),
        (
            "Customer emails are sent through Postmark; SendGrid was retired in March.",
            "which provider delivers our outgoing mail to clients?",
        ),
        (
            "API responses must use snake_case field names.",
            "which lettering style do JSON keys follow when we reply over HTTP?",
        ),
        (
            "Do not log request bodies in the auth service: they contain passwords.",
            "can I print incoming payloads in the login backend?",
        ),
        (
            "The analytics warehouse refreshes at 02:00 UTC; dashboards show yesterday's numbers until then.",
            "why do reports look a day behind early in the morning?",
        ),
        (
            "Python code targets 3.11; do not use 3.12-only syntax.",
            "which interpreter release must our scripts stay compatible with?",
        ),
        (
            "Hotfixes branch from the release tag, not from main.",
            "where should an urgent patch start from?",
        ),
        (
            "Translations are managed in Crowdin; never edit the locale JSON files by hand.",
            "how do we change the wording in other languages?",
        ),
        (
            "Large binary assets go to Git LFS; the repository rejects files over 5 MB.",
            "where do big images and videos get stored in version control?",
        ),
        (
            "The on-call rotation changes every Monday at 10:00 local time.",
            "when does pager duty hand over to the next person?",
        ),
        (
            "Our Terraform state lives in the S3 bucket acme-tf-state with DynamoDB locking.",
            "where is the infrastructure-as-code bookkeeping kept?",
        ),
        (
            "Prefer composition over inheritance in the domain layer; base classes need an ADR.",
            "may I subclass models in the business logic?",
        ),
        (
            "The search index is rebuilt nightly; new products appear in results the next morning.",
            "why can't shoppers find an item added an hour ago?",
        ),
        (
            "Commit messages follow Conventional Commits with feat:, fix: and chore: prefixes.",
            "how should I title my changes when saving them to git?",
        ),
        (
            "GPU training jobs must request spot instances; on-demand needs approval from the ML lead.",
            "can I launch expensive accelerator machines for model fitting without asking?",
        ),
        (
            "Mock the clock with freezegun in tests instead of sleeping.",
            "how do we fake the current moment in unit checks rather than pausing?",
        ),
        (
            "Public endpoints are rate limited to 100 requests per minute per key.",
            "how many calls may one token make in sixty seconds?",
        ),
        (
            "The design system's colour tokens live in packages/theme; don't hard-code hex values.",
            "where do brand palette definitions come from, instead of raw codes?",
        ),
        (
            "Backups of the primary database are kept for 35 days and tested monthly by restoring to staging.",
            "how long are snapshots of our main data retained?",
        ),
    ),
    "confirm": (
        (
            "The billing service retries failed card charges three times over 48 hours before cancelling a subscription.",
            "how many attempts happen on a declined payment before a plan ends?",
        ),
        (
            "All new services must expose /healthz and /metrics endpoints.",
            "what probe and monitoring URLs does a fresh backend need?",
        ),
        (
            "Code freeze starts two weeks before Black Friday; only fixes merge then.",
            "when do we stop shipping features ahead of the big November sale?",
        ),
        (
            "Use UUIDv7 for new primary keys; they sort by creation time.",
            "which identifier format should fresh tables adopt?",
        ),
        (
            "Error messages shown to users must not include stack traces.",
            "may a crash dump appear on the customer's screen?",
        ),
        (
            "The iOS app requires a minimum of iOS 16.",
            "what's the oldest iPhone software we still support?",
        ),
        (
            "Secrets go in the vault; .env files are for local development only and never committed.",
            "where do credentials belong instead of dotfiles checked into source control?",
        ),
        (
            "Database migrations must be backward compatible with the previous release for zero-downtime deploys.",
            "can a schema change break the old version while we roll out?",
        ),
        (
            "The staging environment is reset every Sunday night; don't keep test data there.",
            "will my sample records on the pre-prod cluster survive the weekend?",
        ),
        (
            "Go services use the standard library's slog for logging, not logrus.",
            "which structured record writer do Golang backends adopt?",
        ),
        (
            "Customer support can impersonate accounts only with a ticket number recorded in the audit log.",
            "when may helpdesk staff act as a client?",
        ),
        (
            "Images are served through the CDN at cdn.acme.dev; never link to the origin bucket.",
            "what host should pictures load from on web pages?",
        ),
        (
            "Each pull request needs two approvals, one from a code owner.",
            "how many reviewers must sign off before merging?",
        ),
        (
            "The data retention policy deletes inactive accounts after 24 months.",
            "when do we erase users who stopped logging in?",
        ),
        (
            "Kafka topics are named <team>.<domain>.<event>.v<n>.",
            "how do we label the channels that carry messages between systems?",
        ),
        (
            "Load balancer idle timeout is 60 seconds; long requests must stream or use jobs.",
            "for how many moments may an HTTP call stay quiet before the front proxy cuts it?",
        ),
        (
            "Dependencies are updated by Renovate every Monday; security patches merge automatically.",
            "how do library upgrades reach our repos?",
        ),
        (
            "The recommendation model is retrained weekly on the last 90 days of clicks.",
            "how fresh is the data behind suggested products?",
        ),
        (
            "Use the shared Button component; custom buttons fail the accessibility review.",
            "may I build my own clickable control in the UI?",
        ),
        (
            "Invoices are generated on the first day of each month at 06:00 UTC.",
            "when do bills get produced?",
        ),
        (
            "Postgres is the default database; MongoDB needs an architecture review.",
            "can a new project pick a document store?",
        ),
        (
            "Pager alerts must have a runbook link; alerts without one are deleted.",
            "what has to accompany every on-call notification?",
        ),
        ("The free plan allows three projects and one seat.", "what do non-paying customers get?"),
        (
            "Benchmarks run on the dedicated perf machine, never on laptops.",
            "where should performance measurements be taken?",
        ),
        (
            "Support for Internet Explorer ended in 2022; don't add polyfills for it.",
            "do we still cater to Microsoft's legacy browser?",
        ),
    ),
}

_SERVICES = (
    "billing-api",
    "web-dashboard",
    "ingest-worker",
    "android-app",
    "search-svc",
    "auth-gateway",
    "data-pipeline",
    "devtools-cli",
    "docs-site",
    "payments-core",
    "ml-training",
    "edge-proxy",
    "notify",
    "reports",
    "inventory",
    "checkout",
)
_TEAMS = (
    "platform",
    "growth",
    "payments",
    "identity",
    "data",
    "mobile",
    "search",
    "infra",
    "support-tools",
    "ml",
)
_ENVS = ("dev", "staging", "qa", "production", "sandbox")
_PATHS = (
    "config/app.yaml",
    "deploy/values.yaml",
    "src/settings.py",
    ".github/workflows/ci.yml",
    "charts/api/values.yaml",
    "conf/application.conf",
    "internal/config/config.go",
)
_CMDS = (
    "make test",
    "npm run test:unit",
    "go test ./...",
    "cargo test --workspace",
    "./gradlew check",
    "bundle exec rspec",
    "tox -e py311",
    "dotnet test",
)
_DEPS = (
    "openssl",
    "protobuf",
    "react",
    "django",
    "spring-boot",
    "tokio",
    "sqlalchemy",
    "express",
    "grpc",
    "pydantic",
    "kafka-clients",
    "redis-py",
)
_METRICS = (
    "p99 latency",
    "error rate",
    "queue depth",
    "CPU usage",
    "disk usage",
    "consumer lag",
    "5xx count",
)
_DISTRACTOR_SHAPES = (
    "{svc} listens on port {port} in the {env} environment.",
    "The {team} team owns {svc}; send review requests to @{team}-reviewers.",
    "Run {svc}'s tests with `{cmd}` from the repository root.",
    "{svc} pins {dep} at {ver}; upgrade it together with {dep2}.",
    "In {svc}, the settings live in {path}.",
    "{svc} deploys to {env} automatically on every merge to main.",
    "The {env} URL of {svc} is https://{svc}.{env}.acme.dev.",
    "The alert for {metric} on {svc} pages the {team} team above {n}.",
    "{svc} keeps its feature switches in {path}.",
    "{svc} is written in {lang}; new modules follow its existing layout.",
    "Ask the {team} team before adding a dependency on {dep} to {svc}.",
    "{svc} exports traces to the collector at collector.{env}.acme.dev:{port}.",
    "The {svc} container needs {n} GB of memory in {env}.",
    "{svc} reads its database URL from the {var} environment variable.",
)
_LANGS = ("Python", "Go", "Rust", "TypeScript", "Kotlin", "Java", "Scala", "Ruby", "C#", "C++")


def distractor_fact(rng: random.Random) -> str:
    """One plausible team fact built from the shapes above (may repeat; callers dedupe)."""
    dep, dep2 = rng.sample(_DEPS, 2)
    svc = rng.choice(_SERVICES)
    return rng.choice(_DISTRACTOR_SHAPES).format(
        svc=svc,
        team=rng.choice(_TEAMS),
        env=rng.choice(_ENVS),
        path=rng.choice(_PATHS),
        cmd=rng.choice(_CMDS),
        dep=dep,
        dep2=dep2,
        ver=f"{rng.randrange(1, 12)}.{rng.randrange(0, 40)}.{rng.randrange(0, 20)}",
        port=rng.randrange(3000, 9900),
        metric=rng.choice(_METRICS),
        n=rng.randrange(2, 64),
        lang=rng.choice(_LANGS),
        var=f"{svc.upper().replace('-', '_')}_DB_URL",
    )
