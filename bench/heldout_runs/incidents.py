"""The held-out set's 80 hand-written incidents (:mod:`bench.heldout_runs`, 2026-12-07).

The runs the questions are about, written fresh for this set (apart from
``bench/recall_lexicon.py``). Each incident: repository key, branch slug, files edited,
outcome and reason, failing verify class (or None), the run's result text, one lexical
question (in the run's own words), paraphrase candidates (:func:`.data.build` uses the first
that shares no content word with the run's episode text) and a short topic (for the
named-agent questions and for the "twin" runs: another agent's earlier attempt on the same
problem). Half A takes the even incidents, half B the odd ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Incident:
    repo: str
    slug: str
    files: tuple[str, ...]
    outcome: str
    reason: str
    err: str | None
    text: str
    lex: str
    paras: tuple[str, ...]
    topic: str


def incident(
    repo: str,
    slug: str,
    files: Sequence[str],
    outcome: str,
    reason: str,
    err: str | None,
    text: str,
    lex: str,
    paras: Sequence[str],
    topic: str,
) -> Incident:
    """An :class:`Incident`, its text's line breaks and indentation folded to single spaces."""
    return Incident(
        repo,
        slug,
        tuple(files),
        outcome,
        reason,
        err,
        " ".join(text.split()),
        lex,
        tuple(paras),
        topic,
    )


#: (outcome, reason) of a run record, spread into :func:`incident`
OK = ("succeeded", "completed")
VF = ("failed", "verify_failed")
AE = ("failed", "agent_error")
BX = ("failed", "budget_exceeded")
TO = ("timed_out", "deadline")
OC = ("cancelled", "operator_cancelled")

INCIDENTS: list[Incident] = [
    # ---------------------------------------------------------------- paygate (Go service)
    incident(
        "paygate",
        "stripe-duplicate-events",
        [
            "internal/webhook/stripe.go",
            "internal/webhook/stripe_test.go",
            "migrations/0057_webhook_events.sql",
        ],
        *OK,
        None,
        """Duplicate charge.succeeded events from Stripe were each creating a ledger entry. Added
        an idempotency table keyed on the Stripe event id (migration 0057_webhook_events.sql)
        and made HandleStripeEvent skip ids it has already seen. Replayed last week's events
        against staging: no duplicate entries.""",
        "Where did we add the idempotency table for duplicate charge.succeeded Stripe events?",
        [
            (
                "Customers got billed twice whenever the card processor resent an identical "
                "notification; how was that stopped?"
            ),
            "Why were some people billed twice, and what guards against a resent callback now?",
        ],
        "the duplicate Stripe webhook events",
    ),
    incident(
        "paygate",
        "transfer-lock-order",
        ["internal/store/postgres/ledger.go", "internal/store/postgres/ledger_test.go"],
        *OK,
        None,
        """TestConcurrentTransfers failed intermittently with `pq: deadlock detected` because two
        transfers locked the account rows in opposite order. PostTransfer now locks both rows
        sorted by account_id (SELECT ... FOR UPDATE). The test passed 500 times in a row with go
        test -count=500 -race.""",
        "pq: deadlock detected in TestConcurrentTransfers",
        [
            (
                "Simultaneous money movements between a pair of wallets would sometimes wait on "
                "each other indefinitely inside the database; what was the remedy?"
            ),
            (
                "Two simultaneous money movements between a pair of wallets would sometimes wait "
                "on one another forever in the database; what was the remedy?"
            ),
            "Why did moving money between two wallets at once hang?",
        ],
        "the transfer deadlock",
    ),
    incident(
        "paygate",
        "grpc-graceful-drain",
        [
            "internal/api/grpc/server.go",
            "cmd/paygate/main.go",
            "deploy/helm/paygate/templates/deployment.yaml",
        ],
        *AE,
        None,
        """On SIGTERM the gRPC server dropped in-flight CreateInvoice calls: Kubernetes sent the
        signal before the readiness probe flipped. Added GracefulStop with a 25s drain and a
        preStop sleep of 10s in the Helm chart. Partially done: the chart change still needs the
        platform team's review and terminationGracePeriodSeconds must go to 40.""",
        "GracefulStop drain for in-flight CreateInvoice calls on SIGTERM",
        [
            (
                "During rollouts some requests were cut off mid-flight when old pods went away; "
                "what was done about it?"
            ),
            (
                "Requests vanished whenever pods were replaced in a release; how far did that "
                "work get?"
            ),
        ],
        "the gRPC shutdown during deploys",
    ),
    incident(
        "paygate",
        "jwt-clock-leeway",
        ["internal/auth/jwt.go", "internal/auth/jwt_test.go"],
        *OK,
        None,
        """Tokens from the identity provider were rejected with `token used before issued` on nodes
        whose clock ran two seconds behind. Added a 30s leeway to the jwt.Parser
        (jwt.WithLeeway) and a test that issues a token one second in the future.""",
        "token used before issued error in jwt.Parser",
        [
            (
                "Logins bounced on a few machines where the time was slightly off; what "
                "tolerance was introduced?"
            ),
            (
                "Sign-ins bounced on a few machines whose time was slightly off; what tolerance "
                "was introduced?"
            ),
            "Why were logins refused only on certain hosts with drifting clocks?",
        ],
        "the JWT clock skew rejections",
    ),
    incident(
        "paygate",
        "pgx-v5-migration",
        [
            "go.mod",
            "go.sum",
            "internal/store/postgres/pool.go",
            "internal/store/postgres/ledger.go",
        ],
        *BX,
        "build_error",
        """Tried to migrate from pgx v4 to pgx/v5. pgxpool.Connect is gone (pgxpool.New now),
        pgtype.Numeric changed shape and the logger adapters were removed. Fixed pool.go, but 47
        compile errors remain in internal/store; stopped when the budget ran out. Notes in the
        draft PR list each remaining package.""",
        "pgx/v5 upgrade pgxpool.Connect compile errors",
        [
            (
                "How far along is bumping the database driver to its latest major release, and "
                "what still breaks?"
            ),
            "How far did we get moving the Postgres driver to its newest major version?",
            (
                "Someone tried upgrading the database client library to the next major release "
                "and ran out of money; what was left?"
            ),
        ],
        "the pgx v5 upgrade",
    ),
    incident(
        "paygate",
        "ratelimit-overflow",
        ["internal/ratelimit/bucket.go", "internal/ratelimit/bucket_test.go"],
        *OK,
        None,
        """The per-merchant token bucket kept its refill time as an int32 count of nanoseconds,
        which overflowed after about 2.1 seconds idle, so quiet merchants got HTTP 429 on their
        next burst. Switched bucket.go to time.Duration arithmetic and added a test that idles
        for an hour on a fake clock.""",
        "int32 nanoseconds overflow in the per-merchant token bucket returning 429",
        [
            (
                "Shops that had been inactive for a little while were throttled as soon as they "
                "came back; why?"
            ),
            "Why did sellers who paused briefly get told they were sending too many requests?",
        ],
        "the rate limiter rejecting quiet merchants",
    ),
    incident(
        "paygate",
        "zero-decimal-currency",
        [
            "internal/billing/money.go",
            "internal/billing/invoice.go",
            "internal/billing/invoice_test.go",
        ],
        *OK,
        None,
        """Invoice totals in JPY were off by a factor of 100 because amounts were always divided by
        100 when rendering. Zero-decimal currencies (JPY, KRW, VND) need exponent 0; added a
        currency exponent table in money.go and table tests for JPY and KRW.""",
        "JPY invoice totals off by 100 zero-decimal currency exponent",
        [
            "Japanese yen charges displayed a sum a hundred times too small; what caused it?",
            "Japanese yen bills showed amounts a hundred times too small; what caused it?",
            "Why were totals wrong for yen and won but right for euros?",
        ],
        "the yen invoice totals",
    ),
    incident(
        "paygate",
        "x-net-http2-vuln",
        ["go.mod", "go.sum", ".github/workflows/ci.yml", "Dockerfile"],
        *OK,
        None,
        """govulncheck flagged GO-2024-2687 (HTTP/2 CONTINUATION flood) in golang.org/x/net. Bumped
        x/net to v0.23.0 and the Go toolchain to 1.22.2 in go.mod, the Dockerfile and the CI
        image; govulncheck ./... is clean.""",
        "govulncheck GO-2024-2687 golang.org/x/net CONTINUATION flood",
        [
            (
                "Which security advisory about a denial of service in the web protocol library "
                "did we patch, and how?"
            ),
            "A scanner reported an attack where a peer floods headers; what was upgraded?",
        ],
        "the x/net vulnerability",
    ),
    # ---------------------------------------------------------------- logsift (Rust CLI)
    incident(
        "logsift",
        "utf8-truncate-panic",
        ["src/output/table.rs", "tests/cli.rs"],
        *OK,
        None,
        """Panic `byte index 17 is not a char boundary` when truncating UTF-8 messages in the table
        output: truncate sliced bytes with &s[..width]. Rewrote it with char_indices and the
        unicode-width crate so CJK columns line up; added a snapshot test with Japanese log
        lines.""",
        "byte index is not a char boundary panic in table.rs truncate",
        [
            (
                "The tool crashed on Japanese or Chinese messages when shortening them for "
                "display; what was wrong?"
            ),
            "Why did it abort on non-ASCII text when cutting long entries to fit?",
        ],
        "the UTF-8 truncation panic",
    ),
    incident(
        "logsift",
        "follow-logrotate",
        ["src/tail.rs", "tests/follow.rs"],
        *OK,
        None,
        """--follow stopped emitting lines after logrotate renamed the file because tail.rs kept
        reading the old inode. It now compares the inode every second (MetadataExt::ino) and
        reopens the path when it changes; added an integration test that renames the file
        mid-stream.""",
        "--follow stops after logrotate renames the file, inode check in tail.rs",
        [
            (
                "Watching a live log went silent once the nightly rotation moved it aside; how "
                "is that handled now?"
            ),
            (
                "Watching a live file went silent once the nightly rotation moved it aside; how "
                "is that handled now?"
            ),
            "Why did streaming new entries halt after the files were cycled overnight?",
        ],
        "--follow and log rotation",
    ),
    incident(
        "logsift",
        "json-parse-speed",
        ["src/parser/json.rs", "benches/parse.rs", "Cargo.toml"],
        *OK,
        None,
        """Parsing 2 GB of JSON lines took 41s; the flamegraph showed serde_json::Value allocations
        dominating. Switched to borrowed &str fields with #[serde(borrow)] and added simd-json
        behind the `simd` feature: 41s -> 9.8s on benches/parse.rs.""",
        "serde_json::Value allocations flamegraph 41s simd-json",
        [
            "How did we make reading huge structured input roughly four times quicker?",
            "What made ingesting a couple of gigabytes so slow, and what sped it up?",
        ],
        "JSON parsing speed",
    ),
    incident(
        "logsift",
        "musl-rustls",
        ["Cargo.toml", ".github/workflows/release.yml"],
        *OK,
        None,
        """Cross-compiling for aarch64-unknown-linux-musl failed in the release workflow:
        openssl-sys could not find OpenSSL. Replaced reqwest's default-tls with rustls-tls so no
        system OpenSSL is needed; the musl and macOS artifacts build again.""",
        "openssl-sys not found cross-compiling aarch64-unknown-linux-musl",
        [
            (
                "Why couldn't we produce static ARM binaries when shipping a version, and which "
                "encryption library swap solved it?"
            ),
            (
                "Why couldn't we produce ARM Linux binaries for a release, and which encryption "
                "library swap solved it?"
            ),
            "Static arm64 builds broke when packaging a version; what dependency was replaced?",
        ],
        "the musl release build",
    ),
    incident(
        "logsift",
        "syslog-year-inference",
        ["src/parser/syslog.rs", "src/parser/syslog_tests.rs"],
        *OK,
        None,
        """RFC 3164 syslog timestamps carry no year, so December lines parsed in January landed a
        year ahead. The parser now takes the year from the file's mtime and steps back one year
        when the parsed month is after the current month.""",
        "RFC 3164 syslog timestamps without a year",
        [
            (
                "Entries written just before the holidays showed up dated in the future; how is "
                "that worked out now?"
            ),
            (
                "Entries written just before New Year showed up dated in the future; how is that "
                "worked out now?"
            ),
            "Why were old December messages treated as next winter's?",
        ],
        "syslog year inference",
    ),
    incident(
        "logsift",
        "config-path-macos",
        ["src/config.rs", "README.md"],
        *OK,
        None,
        """config.toml in ~/.config/logsift was ignored on macOS because the dirs crate resolves to
        ~/Library/Application Support. Lookup order is now XDG_CONFIG_HOME, then ~/.config, then
        dirs::config_dir; documented in the README.""",
        "config.toml ignored on macOS dirs crate Library/Application Support",
        [
            (
                "On Apple laptops the settings file users wrote was never picked up; where does "
                "the program look now?"
            ),
            "Why did Mac users' preferences have no effect?",
        ],
        "the config location on macOS",
    ),
    incident(
        "logsift",
        "regex-case-default",
        ["src/filter.rs", "tests/cli.rs", "tests/snapshots/cli__regex.snap"],
        *OC,
        None,
        """Started making the --regex filter case-insensitive by default; 14 insta snapshot tests
        in tests/cli.rs changed, and the maintainer stopped the run: the default must not
        change. Reverted and left a proposal for an opt-in --ignore-case flag instead.""",
        "--regex case-insensitive by default insta snapshots",
        [
            (
                "Was matching patterns regardless of capitalisation ever turned on as standard, "
                "and why not?"
            ),
            (
                "Someone wanted pattern search to ignore upper and lower case out of the box; "
                "what happened?"
            ),
        ],
        "case-insensitive regex filtering",
    ),
    incident(
        "logsift",
        "yaml-rust-unmaintained",
        ["Cargo.toml", "Cargo.lock", "src/config.rs", "deny.toml"],
        *OK,
        None,
        """cargo-deny failed in CI: RUSTSEC-2024-0320, yaml-rust is unmaintained. Replaced it with
        yaml-rust2, which has the same API, and removed the advisory ignore from deny.toml.""",
        "RUSTSEC-2024-0320 yaml-rust unmaintained cargo-deny",
        [
            (
                "An audit complained that a parser crate for our settings format had been "
                "abandoned; what did we switch to?"
            ),
            (
                "An audit complained that a parser crate for a config format had been abandoned; "
                "what did we switch to?"
            ),
            "Which abandoned dependency did the licence and advisory checker object to?",
        ],
        "the yaml-rust advisory",
    ),
    # ---------------------------------------------------------------- shopfront (React)
    incident(
        "shopfront",
        "cart-context-rerenders",
        ["src/context/CartContext.tsx", "src/components/CartDrawer.tsx"],
        *OK,
        None,
        """CartDrawer re-rendered on every keystroke in SearchBar because the cart context value
        was a new object on each render. Memoized the provider value with useMemo and split the
        context into state and dispatch; the React Profiler shows 3 renders instead of 60 while
        typing a query.""",
        "CartDrawer re-renders on every keystroke useMemo context value",
        [
            (
                "Entering text in the product lookup box made the basket panel redraw "
                "constantly; why, and what stopped it?"
            ),
            (
                "Typing in the product lookup box made the basket panel redraw constantly; why, "
                "and what stopped it?"
            ),
            (
                "The shopping bag sidebar flickered and lagged whenever somebody typed; what was "
                "the cause?"
            ),
        ],
        "the cart drawer re-rendering",
    ),
    incident(
        "shopfront",
        "hydration-price-locale",
        ["src/pages/ProductPage.tsx", "src/lib/formatPrice.ts", "server/render.tsx"],
        *OK,
        None,
        """Hydration mismatch `Text content does not match server-rendered HTML` on ProductPage:
        the price was formatted with toLocaleString on the server (en-US) and in the browser
        (de-DE). formatPrice now takes the request's locale and uses Intl.NumberFormat on both
        sides.""",
        "hydration mismatch Text content does not match server-rendered HTML price",
        [
            (
                "Why did amounts on an item's page look different between the first paint and "
                "after the scripts loaded for German visitors?"
            ),
            (
                "German shoppers saw costs flash from a particular style to another; what was "
                "going on?"
            ),
        ],
        "the price hydration mismatch",
    ),
    incident(
        "shopfront",
        "react-router-v7",
        [
            "package.json",
            "src/routes/products.tsx",
            "src/routes/cart.tsx",
            "src/routes/account.tsx",
        ],
        *VF,
        "typecheck",
        """Upgrading to React Router v7: 23 routes still import the removed `json()` helper and the
        old loader types. tsc fails with TS2305: Module '"react-router"' has no exported member
        'json'. Fixed 9 of the 23 routes before stopping; the remaining ones are listed in the
        PR.""",
        "TS2305 no exported member json after React Router v7 upgrade",
        [
            "How far did moving the navigation library to its next major version get?",
            (
                "The page navigation package upgrade left type errors; how many screens were "
                "still left?"
            ),
        ],
        "the React Router v7 upgrade",
    ),
    incident(
        "shopfront",
        "cypress-stripe-iframe",
        ["cypress/e2e/checkout.cy.ts", "cypress/support/commands.ts"],
        *OK,
        None,
        """Cypress checkout.cy.ts was flaky because the Pay button was clicked before the Stripe
        Elements iframe had loaded. Replaced cy.wait(2000) with a custom command that waits for
        the iframe's ready event; 50 consecutive green runs in CI.""",
        "flaky checkout.cy.ts Stripe Elements iframe cy.wait(2000)",
        [
            (
                "The browser end-to-end purchase scenario sometimes broke because a button got "
                "pressed too early; what was done?"
            ),
            "Why did the automated buying test randomly go red?",
        ],
        "the flaky Cypress checkout test",
    ),
    incident(
        "shopfront",
        "double-submit-orders",
        ["src/components/CheckoutForm.tsx", "src/api/orders.ts"],
        *OK,
        None,
        """Double-clicking Place order created two orders. CheckoutForm now disables the submit
        button while the mutation is pending, and orders.ts sends an Idempotency-Key header
        generated once per checkout session.""",
        "double-click Place order creates two orders Idempotency-Key CheckoutForm",
        [
            (
                "Shoppers who tapped the buy control a second time ended up with duplicate "
                "purchases; how was that prevented?"
            ),
            "Shoppers who clicked twice ended up with duplicate purchases; how was it prevented?",
            "How do we avoid buyers getting two identical purchases from a quick second tap?",
        ],
        "the double-submitted orders",
    ),
    incident(
        "shopfront",
        "bundle-moment-locales",
        ["package.json", "src/components/DatePicker.tsx", "vite.config.ts"],
        *OK,
        None,
        """Bundle size grew from 310 kB to 890 kB after the date picker landed: moment.js with all
        its locales was pulled in. Replaced moment with date-fns and lazy-loaded the picker with
        React.lazy; vite build now reports 335 kB.""",
        "bundle grew to 890 kB moment.js locales date picker",
        [
            (
                "The JavaScript shipped to browsers nearly tripled after a calendar widget was "
                "introduced; what shrank it back?"
            ),
            "Why did the site's download weight balloon, and which time library was swapped out?",
        ],
        "the bundle size regression",
    ),
    incident(
        "shopfront",
        "missing-de-translations",
        ["src/i18n/de.json", "scripts/check-locales.mjs", ".github/workflows/ci.yml"],
        *OK,
        None,
        """German translations were missing on the checkout page: keys had been added to en.json
        but not de.json, and i18next fell back to English silently. Added the 31 missing keys
        and a CI script, check-locales.mjs, that fails when locale files differ in keys.""",
        "missing de.json keys i18next fallback check-locales",
        [
            (
                "Parts of the purchase screen appeared in the wrong language for "
                "Deutsch-speaking visitors; what guards against that now?"
            ),
            (
                "Parts of the purchase screen showed up in English for people browsing in "
                "German; what guards against that now?"
            ),
            "How do we make sure every language file has the same strings?",
        ],
        "the missing German translations",
    ),
    incident(
        "shopfront",
        "inventory-polling",
        ["src/hooks/useInventory.ts", "src/App.tsx", "package.json"],
        *OK,
        None,
        """useInventory polled /api/stock every second even in background tabs, hammering the API.
        Moved it to TanStack Query with refetchInterval 15s and refetchIntervalInBackground
        false; stock requests dropped by 92% in staging.""",
        "useInventory polling /api/stock every second TanStack Query refetchInterval",
        [
            (
                "Hidden browser tabs kept asking the backend how many items were available; how "
                "was that reduced?"
            ),
            "Why was the server flooded with availability lookups from idle pages?",
        ],
        "inventory polling",
    ),
    # ---------------------------------------------------------------- clinicbook (Django)
    incident(
        "clinicbook",
        "appointment-tz-migration",
        [
            "appointments/migrations/0031_appointment_timezone.py",
            "appointments/migrations/0032_backfill_timezone.py",
            "appointments/models.py",
        ],
        *OK,
        None,
        """Migration 0031_appointment_timezone locked the appointments table for 11 minutes in
        staging because AddField with a default rewrites the table on Postgres 10. Split it into
        a nullable AddField, a batched RunPython backfill (0032) and then the default.""",
        "migration 0031_appointment_timezone AddField default locked table",
        [
            (
                "A schema change froze the bookings data for a long stretch on the "
                "pre-production database; how was it reworked?"
            ),
            (
                "A schema change froze the bookings data for over ten minutes on the "
                "pre-production database; how was it reworked?"
            ),
            (
                "Why did adding a column make scheduling unavailable for a while, and what is "
                "the safer approach?"
            ),
        ],
        "the appointment timezone migration",
    ),
    incident(
        "clinicbook",
        "sms-reminder-dst",
        [
            "notifications/tasks.py",
            "clinicbook/settings/base.py",
            "notifications/tests/test_tasks.py",
        ],
        *OK,
        None,
        """Reminder SMS went out an hour late after the DST change: the Celery beat schedule used
        naive datetimes. Set CELERY_TIMEZONE, made the reminder times timezone-aware in
        notifications/tasks.py and added a freezegun test around 2026-03-29.""",
        "reminder SMS an hour late after DST Celery beat naive datetimes",
        [
            (
                "Text messages reminding people of visits arrived sixty minutes off once the "
                "clocks moved in spring; why?"
            ),
            "Why were patients' phone alerts delayed after daylight saving?",
        ],
        "the late SMS reminders",
    ),
    incident(
        "clinicbook",
        "patients-n-plus-one",
        ["patients/serializers.py", "patients/views.py", "patients/tests/test_api.py"],
        *OK,
        None,
        """N+1 queries on /api/patients/: PatientSerializer touched patient.insurance and the
        appointments for each row, 412 queries for 100 patients. Added
        select_related('insurance') and prefetch_related('appointments'); 4 queries now, and an
        assertNumQueries test.""",
        "N+1 queries /api/patients/ select_related prefetch_related",
        [
            "Why did listing people under care hit the database hundreds of times per page?",
            "What made the client roster endpoint so chatty with SQL?",
        ],
        "the N+1 queries on the patients API",
    ),
    incident(
        "clinicbook",
        "labresults-idor",
        [
            "labresults/views.py",
            "labresults/permissions.py",
            "labresults/tests/test_permissions.py",
        ],
        *OK,
        None,
        """Patients could read other patients' lab results by changing the id in
        /api/labresults/<id>/: the viewset had no object-level permission. Added IsPatientOwner
        and a test expecting 404 for someone else's record.""",
        "IsPatientOwner object-level permission /api/labresults/<id>/",
        [
            (
                "How did we stop people from seeing strangers' blood work by editing a number in "
                "the address bar?"
            ),
            (
                "Could someone view another person's blood work just by editing a number in the "
                "address? What closed that hole?"
            ),
            "How did we stop users from seeing strangers' medical tests?",
        ],
        "access to other patients' lab results",
    ),
    incident(
        "clinicbook",
        "django-5-blocked",
        ["requirements.in", "requirements.txt"],
        *AE,
        "dependency_conflict",
        """Upgrade Django 4.2 to 5.1 blocked: django-celery-beat pins Django<5.0 in its metadata
        and pip-compile cannot resolve. Nothing merged; waiting for django-celery-beat 2.7.
        Recorded the resolver output in the issue.""",
        "Django 5.1 upgrade django-celery-beat pins Django<5.0 pip-compile",
        [
            "Why is the web framework still on the older long-term release?",
            "What stopped us from moving to the newest major version of our backend framework?",
        ],
        "the Django 5 upgrade",
    ),
    incident(
        "clinicbook",
        "csv-export-streaming",
        ["reports/exports.py", "reports/tests/test_exports.py"],
        *OK,
        None,
        """Monthly report CSV export timed out at 30s for large clinics. exports.py now streams
        with StreamingHttpResponse and a generator over .iterator(chunk_size=2000); a 120k-row
        export finishes in 9s with flat memory.""",
        "CSV export StreamingHttpResponse iterator chunk_size",
        [
            (
                "Big practices couldn't download their spreadsheet of the previous thirty days' "
                "activity before the request gave up; what changed?"
            ),
            (
                "Big practices could not download their spreadsheet of the month's activity "
                "before the request gave up; what changed?"
            ),
            "How do large sites now pull their monthly data without the download dying?",
        ],
        "the monthly CSV export",
    ),
    incident(
        "clinicbook",
        "confirm-email-utc",
        [
            "templates/appointments/confirm.html",
            "appointments/emails.py",
            "appointments/tests/test_emails.py",
        ],
        *OK,
        None,
        """Confirmation emails showed `{{ appointment.start|date }}` in UTC. The template now wraps
        it in the timezone tag with the clinic's zone, and emails.py passes clinic.tz; updated
        the confirm.html snapshot.""",
        "confirm.html appointment.start date shown in UTC",
        [
            "Booking messages told people the wrong hour for their visit; what was corrected?",
            "Why did the mail patients get after scheduling give a time that was off?",
        ],
        "the confirmation email times",
    ),
    incident(
        "clinicbook",
        "ci-hang-redis-lock",
        ["patients/tests/test_api.py", "conftest.py"],
        *TO,
        None,
        """Looked for why patients/tests/test_api.py hangs only on CI. Suspect a Redis lock taken
        in the Celery eager task is never released when the task raises, so the next test waits
        on it. Ran out of time before confirming; left the traceback and a note in the issue.""",
        "test_api.py hangs on CI Redis lock Celery eager task",
        [
            "Which suite froze only on the build servers, and what was the suspected culprit?",
            "Why would our automated checks stall forever remotely but finish on laptops?",
        ],
        "the CI hang in the patients API tests",
    ),
    # ---------------------------------------------------------------- tidepipe (data pipeline)
    incident(
        "tidepipe",
        "backfill-double-count",
        ["jobs/spark/write_orders.py", "dags/daily_orders.py"],
        *OK,
        None,
        """The daily_orders backfill for March double-counted orders: the Spark job appended to the
        partition instead of overwriting it. Set spark.sql.sources.partitionOverwriteMode to
        dynamic and write with insertInto(overwrite=True); reran March and the totals match the
        source.""",
        "daily_orders backfill double-counted partitionOverwriteMode dynamic",
        [
            (
                "Reprocessing an old month made sales figures appear twice; what was changed in "
                "how results are saved?"
            ),
            "Why did rerunning history inflate revenue numbers?",
        ],
        "the double-counted backfill",
    ),
    incident(
        "tidepipe",
        "sessionize-oom",
        ["jobs/spark/sessionize.py", "tests/test_sessionize.py"],
        *OK,
        None,
        """Sessionize died with `java.lang.OutOfMemoryError: GC overhead limit exceeded` on
        executors handling users with millions of events (bots). Salted the user key and capped
        a session at 10k events; the job runs in 18 minutes.""",
        "sessionize OutOfMemoryError GC overhead limit exceeded salted user key",
        [
            (
                "A few automated visitors with enormous activity made the visit-grouping "
                "computation run out of RAM; how was it handled?"
            ),
            "Why did grouping clicks into visits crash, and what made it fit?",
        ],
        "the sessionize job running out of memory",
    ),
    incident(
        "tidepipe",
        "fct-orders-incremental",
        ["dbt/models/marts/fct_orders.sql", "dbt/models/marts/schema.yml"],
        *OK,
        None,
        """dbt test unique_fct_orders_order_id failed once upstream started sending late-arriving
        updates. fct_orders is now an incremental model with unique_key='order_id' and the merge
        strategy.""",
        "unique_fct_orders_order_id dbt test incremental merge",
        [
            (
                "Corrections turning up days afterwards from the source system produced repeated "
                "purchase rows in the warehouse table; what solved it?"
            ),
            (
                "Late corrections from the source produced repeated purchase rows in the "
                "warehouse table; what materialisation solved it?"
            ),
            "Why did the uniqueness check on sales facts start complaining?",
        ],
        "the fct_orders uniqueness failures",
    ),
    incident(
        "tidepipe",
        "device-id-rename",
        ["dbt/models/staging/stg_events.sql", "great_expectations/expectations/stg_events.json"],
        *OK,
        None,
        """Great Expectations null-rate check on stg_events.device_id started failing: mobile SDK
        5.2 renamed device_id to deviceId. Added coalesce(device_id, deviceId) in stg_events.sql
        and told the mobile team about the contract.""",
        "Great Expectations null rate device_id deviceId SDK 5.2",
        [
            (
                "A phone app release changed a field's spelling and the data quality gate went "
                "red; what adapted to it?"
            ),
            "Why did the handset identifier suddenly come through empty?",
        ],
        "the device_id null-rate check",
    ),
    incident(
        "tidepipe",
        "s3-slowdown",
        ["pipeline/io/s3_reader.py", "pipeline/io/inventory.py"],
        *OK,
        None,
        """S3 reader throttled with `SlowDown: Please reduce your request rate` while listing 400k
        small files. Switched to S3 Inventory manifests instead of ListObjectsV2; listing takes
        40s instead of 25 minutes.""",
        "SlowDown Please reduce your request rate ListObjectsV2 S3 Inventory",
        [
            (
                "Enumerating hundreds of thousands of tiny objects in cloud storage got "
                "throttled; what replaced the listing?"
            ),
            "How did we stop Amazon from rejecting us while scanning the raw bucket?",
        ],
        "S3 throttling while listing files",
    ),
    incident(
        "tidepipe",
        "airflow-29-taskflow",
        ["dags/daily_orders.py", "dags/weekly_cohorts.py", "requirements-airflow.txt"],
        *BX,
        "import_error",
        """Tried moving the DAGs to Airflow 2.9 TaskFlow. The KubernetesPodOperator import path
        changed and the scheduler refused to parse 6 DAGs (Broken DAG: No module named
        'airflow.contrib'). Converted daily_orders only; the budget ran out.""",
        "Broken DAG No module named airflow.contrib Airflow 2.9 TaskFlow",
        [
            "Why did the orchestration tool reject half of our workflows after its version bump?",
            "How far did the scheduler upgrade get, and which workflows could it no longer load?",
            "Why did the orchestration tool refuse half of our jobs after the version move?",
        ],
        "the Airflow 2.9 migration",
    ),
    incident(
        "tidepipe",
        "event-date-chicago",
        ["dbt/models/staging/stg_orders.sql", "dbt/macros/local_date.sql"],
        *OK,
        None,
        """event_date was derived in UTC but the finance report expects America/Chicago, so revenue
        from late-evening orders landed on the next day. Added a local_date macro and used it in
        stg_orders.""",
        "event_date UTC vs America/Chicago finance report",
        [
            "Sales made after dark were attributed to tomorrow in the accounting numbers; why?",
            "Why did the money people see evening purchases counted on the wrong day?",
        ],
        "the finance report day boundary",
    ),
    incident(
        "tidepipe",
        "parquet-int32-drift",
        ["pipeline/io/s3_reader.py", "pipeline/schemas/vendor_orders.py"],
        *OK,
        None,
        """Vendor export broke reads: `Parquet column cannot be converted ... Expected: bigint,
        Found: INT32` after the vendor changed their writer. Added an explicit schema with casts
        in s3_reader.py and a check that logs the vendor's file schema.""",
        "Parquet column cannot be converted Expected bigint Found INT32",
        [
            "How do we cope when a partner starts using narrower integers in their columnar dumps?",
            (
                "A supplier's files began using a narrower integer type and our reads blew up; "
                "what was added?"
            ),
            "How do we cope now when a partner changes number widths in their columnar dumps?",
        ],
        "the vendor Parquet schema drift",
    ),
    # ---------------------------------------------------------------- courier-android
    incident(
        "courier-android",
        "fgs-location-android14",
        [
            "app/src/main/AndroidManifest.xml",
            "app/src/main/java/com/harbor/courier/tracking/TrackingService.kt",
        ],
        *OK,
        None,
        """Crash on Android 14: `SecurityException: Starting FGS with type location ... requires
        permissions`. Foreground services of type location now need FOREGROUND_SERVICE_LOCATION
        in the manifest; added it and request it before starting TrackingService.""",
        "SecurityException Starting FGS with type location FOREGROUND_SERVICE_LOCATION",
        [
            (
                "On the newest phone operating system, following the driver's position made "
                "everything die immediately; which declaration was missing?"
            ),
            (
                "The newest phone OS killed the app when it began following the driver's "
                "position; which declaration was missing?"
            ),
            "Why did drivers on recent handsets crash as soon as their route began?",
        ],
        "the Android 14 foreground service crash",
    ),
    incident(
        "courier-android",
        "syncworker-409",
        [
            "app/src/main/java/com/harbor/courier/sync/SyncWorker.kt",
            "app/src/test/java/com/harbor/courier/sync/SyncWorkerTest.kt",
        ],
        *OK,
        None,
        """SyncWorker retried forever when the server returned 409 Conflict for a delivery already
        marked completed. A 409 is now treated as success (Result.success()), so WorkManager's
        backoff no longer loops; unit test added.""",
        "SyncWorker retries forever on 409 Conflict WorkManager",
        [
            (
                "Background upload jobs kept trying again endlessly for drops the backend had on "
                "record; what ended it?"
            ),
            (
                "Background upload jobs kept trying again endlessly for drops that were already "
                "recorded on the backend; what ended it?"
            ),
            "Why did the phone keep resending parcels that the server already knew about?",
        ],
        "SyncWorker retrying on conflicts",
    ),
    incident(
        "courier-android",
        "room-migration-7-8",
        [
            "app/src/main/java/com/harbor/courier/data/db/Migrations.kt",
            "app/src/androidTest/java/com/harbor/courier/data/db/MigrationTest.kt",
        ],
        *OK,
        None,
        """Room migration 7->8 crashed on upgrade: `IllegalStateException: Migration didn't
        properly handle: deliveries` because signature_uri was declared NOT NULL without a
        default. Added DEFAULT '' and a MigrationTestHelper test.""",
        "Room migration 7 to 8 Migration didn't properly handle deliveries signature_uri",
        [
            (
                "Installing the newer version over the previous release broke at launch due to a "
                "local storage schema change; what was corrected?"
            ),
            (
                "Updating the app from the previous version crashed on launch because of a local "
                "storage change; what was corrected?"
            ),
            "Why did upgrading wipe out or crash people's installed copy?",
        ],
        "the Room 7 to 8 migration crash",
    ),
    incident(
        "courier-android",
        "map-marker-clustering",
        [
            "app/src/main/java/com/harbor/courier/ui/map/RouteMapFragment.kt",
            "gradle/libs.versions.toml",
        ],
        *OK,
        None,
        """Map screen was janky: RouteMapFragment redrew all 300 markers on every location update.
        Switched to clustering from android-maps-utils and only move the courier's own marker;
        p90 frame time went from 48ms to 12ms.""",
        "RouteMapFragment redraws 300 markers android-maps-utils clustering",
        [
            "Why was the view showing drop-off pins so laggy, and how was it smoothed out?",
            "Scrolling the route view stuttered with lots of stops on it; how was it smoothed out?",
            "Why was the screen showing drop-off pins so laggy?",
        ],
        "the janky map screen",
    ),
    incident(
        "courier-android",
        "pod-photo-exif",
        [
            "app/src/main/java/com/harbor/courier/camera/ProofOfDeliveryActivity.kt",
            "app/src/main/java/com/harbor/courier/camera/ImageCompressor.kt",
        ],
        *OK,
        None,
        """Proof-of-delivery photos were rotated 90 degrees on Samsung devices: EXIF orientation
        was ignored when compressing. ImageCompressor now reads the ExifInterface orientation
        and rotates the bitmap before upload.""",
        "proof-of-delivery photos rotated ExifInterface orientation Samsung",
        [
            "Pictures couriers took at the door came out sideways on some Galaxy phones; why?",
            "Why were doorstep snapshots turned on their side?",
        ],
        "the rotated proof-of-delivery photos",
    ),
    incident(
        "courier-android",
        "agp-ksp-migration",
        ["app/build.gradle.kts", "gradle/libs.versions.toml", "data/build.gradle.kts"],
        *TO,
        "build_error",
        """AGP 8.5 upgrade: kapt fails with `e: [kapt] An exception occurred:
        java.lang.IllegalStateException: Could not find the entry` for Room, so the annotation
        processors must move to KSP. Migrated the data and app modules; the run hit its deadline
        before the three feature modules.""",
        "AGP 8.5 kapt exception Could not find the entry Room KSP",
        [
            "What still needs converting after the toolchain plugin bump broke code generation?",
            (
                "How much of the switch from the old annotation processing to the new symbol "
                "processing was finished during the build tooling upgrade?"
            ),
            "What still needs converting after the Gradle plugin bump broke code generation?",
        ],
        "the AGP 8.5 / KSP migration",
    ),
    incident(
        "courier-android",
        "espresso-animations",
        ["app/build.gradle.kts", "app/src/androidTest/java/com/harbor/courier/DeliveryFlowTest.kt"],
        *OK,
        None,
        """Espresso DeliveryFlowTest was flaky on the CI emulator because animations were not
        disabled. Added animationsDisabled = true in testOptions and an IdlingResource around
        the sync; 40 green runs.""",
        "Espresso DeliveryFlowTest flaky animationsDisabled IdlingResource",
        [
            (
                "The instrumented end-to-end scenario for handing over a parcel kept breaking on "
                "the virtual device; what steadied it?"
            ),
            "Why did UI automation on the emulator go red at random?",
        ],
        "the flaky Espresso delivery test",
    ),
    incident(
        "courier-android",
        "analytics-context-leak",
        [
            "app/src/main/java/com/harbor/courier/analytics/Analytics.kt",
            "app/src/main/java/com/harbor/courier/ui/login/LoginActivity.kt",
        ],
        *OK,
        None,
        """LeakCanary reported LoginActivity leaking: the Analytics singleton kept a static
        reference to the Activity Context. It now holds applicationContext only.""",
        "LeakCanary LoginActivity leak Analytics singleton static Context",
        [
            (
                "A memory retention problem on the sign-in screen came from a tracking helper "
                "holding on too long; what was it?"
            ),
            "Why was the auth screen never released from RAM?",
        ],
        "the login activity memory leak",
    ),
    # ---------------------------------------------------------------- infra-live (Terraform)
    incident(
        "infra-live",
        "rds-engine-drift",
        ["modules/rds/main.tf", "envs/prod/rds.tf"],
        *OK,
        None,
        """terraform plan in prod wanted to destroy and recreate the RDS instance because
        engine_version had been bumped from 14.9 to 14.10 outside Terraform. Added lifecycle
        ignore_changes on engine_version and set auto_minor_version_upgrade = true.""",
        "terraform plan destroy RDS engine_version 14.9 14.10 ignore_changes",
        [
            (
                "Our production Postgres server was about to be torn down and rebuilt after a "
                "small release got applied by hand; how was that avoided?"
            ),
            (
                "Our production database was about to be torn down and rebuilt because of a "
                "minor Postgres release applied by hand; how was that avoided?"
            ),
            "Why did the infrastructure preview want to replace the main SQL server?",
        ],
        "the RDS replacement in the prod plan",
    ),
    incident(
        "infra-live",
        "state-lock-stuck",
        ["envs/staging/backend.tf", "docs/runbooks/state-lock.md"],
        *OK,
        None,
        """Stuck state lock: `Error acquiring the state lock ... ConditionalCheckFailedException`
        after a CI job was killed mid-apply. Confirmed no apply was running, ran terraform
        force-unlock with the lock ID and wrote a runbook.""",
        "Error acquiring the state lock ConditionalCheckFailedException force-unlock",
        [
            (
                "After an interrupted pipeline nobody could change pre-production resources; how "
                "was that cleared?"
            ),
            (
                "After an interrupted pipeline nobody could change staging resources; how was "
                "that cleared?"
            ),
            "What do we do when a killed job leaves the DynamoDB mutex held?",
        ],
        "the stuck Terraform state lock",
    ),
    incident(
        "infra-live",
        "eks-pdb-drain",
        ["modules/eks/node_groups.tf", "k8s/ingress-nginx/pdb.yaml"],
        *OK,
        None,
        """EKS node group upgrade to 1.29 stalled: the ingress controller's PodDisruptionBudget had
        minAvailable 100% and blocked the drain. Changed the PDB to maxUnavailable 1; the
        rolling upgrade finished in 35 minutes.""",
        "EKS 1.29 node group upgrade PodDisruptionBudget minAvailable blocked drain",
        [
            (
                "Moving the Kubernetes workers to a newer release got stuck since evictions were "
                "forbidden; what setting was loosened?"
            ),
            (
                "Rolling the Kubernetes workers to a newer release got stuck because eviction "
                "was forbidden; what setting was loosened?"
            ),
            "Why couldn't the cluster machines be replaced during the version bump?",
        ],
        "the stalled EKS node upgrade",
    ),
    incident(
        "infra-live",
        "invoice-bucket-public",
        ["modules/storage/invoices.tf", "envs/prod/cloudfront.tf"],
        *OK,
        None,
        """The invoices PDF bucket still had a public-read ACL from 2021; tfsec flagged
        aws-s3-no-public-access. Added aws_s3_bucket_public_access_block and served the files
        through CloudFront with origin access control.""",
        "tfsec aws-s3-no-public-access invoices bucket public-read ACL",
        [
            (
                "Customer billing documents were downloadable by anyone on the internet; how was "
                "that closed off?"
            ),
            "Which storage holding bills was world readable, and what now fronts it?",
        ],
        "the public invoices bucket",
    ),
    incident(
        "infra-live",
        "vpc-module-v5",
        ["modules/vpc/main.tf", "modules/vpc/versions.tf"],
        *AE,
        None,
        """Tried moving to terraform-aws-modules/vpc v5: the plan shows 42 resources to replace
        because addresses were renamed, and moved blocks are needed for each. Stopped without
        applying; wrote the list of moved blocks into the PR.""",
        "terraform-aws-modules/vpc v5 42 resources to replace moved blocks",
        [
            (
                "What happened when someone attempted the newest major of the community "
                "networking component?"
            ),
            (
                "What happened when someone tried the newest major of the community networking "
                "component?"
            ),
            "Why wasn't the network layer upgraded, given dozens of things would be recreated?",
        ],
        "the VPC module v5 upgrade",
    ),
    incident(
        "infra-live",
        "spa-deep-links-403",
        ["envs/prod/cloudfront.tf"],
        *OK,
        None,
        """CloudFront returned 403 for the storefront's deep links. Added custom_error_response
        entries mapping 403 and 404 to /index.html with response code 200.""",
        "CloudFront 403 deep links custom_error_response index.html",
        [
            (
                "Opening a bookmarked inner page of the single-page shop gave an access denied "
                "error; what was configured?"
            ),
            "Why did refreshing on a nested URL of the web shop show forbidden?",
        ],
        "the 403 on deep links",
    ),
    incident(
        "infra-live",
        "ci-role-least-privilege",
        ["modules/iam/ci_role.tf", "modules/iam/policies.tf"],
        *OK,
        None,
        """The CI deploy role allowed s3:* on every bucket. Narrowed it to the artifact bucket and
        the terraform state prefix, validated with IAM Access Analyzer policy checks.""",
        "CI deploy role s3:* narrowed IAM Access Analyzer",
        [
            "The pipeline's cloud identity could touch any storage; how were its rights reduced?",
            "Which overly broad permission did the automation user have?",
        ],
        "the CI role permissions",
    ),
    incident(
        "infra-live",
        "nat-gateway-cost",
        ["modules/vpc/endpoints.tf", "modules/vpc/outputs.tf"],
        *OK,
        None,
        """NAT gateway data processing cost $3.1k a month because ECR image pulls went through the
        NAT. Added interface endpoints for ecr.api and ecr.dkr and a gateway endpoint for S3;
        projected saving $2.6k a month.""",
        "NAT gateway data processing cost ECR pulls VPC endpoints",
        [
            "Why was our cloud bill so high for outbound traffic, and what lowered it?",
            "Why was our monthly cloud bill so high for outbound traffic, and what cut it?",
            "Container image downloads were expensive; how was that spend lowered?",
        ],
        "the NAT gateway costs",
    ),
    # ---------------------------------------------------------------- libquill (C library)
    incident(
        "libquill",
        "fuzz-heap-overflow",
        ["src/decode.c", "tests/corpus/crash-5a1f", "tests/test_decode.c"],
        *OK,
        None,
        """OSS-Fuzz crash: heap-buffer-overflow READ of size 1 in quill_decode_block
        (src/decode.c:212) when the length prefix exceeds the remaining input. Added a bounds
        check returning QUILL_E_TRUNCATED and the reproducer to tests/corpus.""",
        "heap-buffer-overflow READ of size 1 in quill_decode_block",
        [
            (
                "A randomized data generator found an out-of-range memory access when unpacking "
                "short streams; how was it closed?"
            ),
            (
                "A randomized input generator found an out-of-range memory access when unpacking "
                "short data; how was it closed?"
            ),
            "What did the continuous fuzzing service catch in decompression?",
        ],
        "the fuzzer heap overflow",
    ),
    incident(
        "libquill",
        "big-endian-header",
        ["src/header.c", "src/endian.h", ".github/workflows/qemu.yml"],
        *OK,
        None,
        """Big-endian build (s390x under qemu in CI) failed the roundtrip tests: header fields were
        read with memcpy into uint32_t without byte swapping. Added read_le32 and write_le32
        helpers.""",
        "s390x big-endian roundtrip memcpy uint32_t read_le32",
        [
            (
                "On IBM mainframe style architectures, compressing then expanding gave back "
                "garbage; why?"
            ),
            "Why did byte order break things on that emulated platform?",
        ],
        "the big-endian header bug",
    ),
    incident(
        "libquill",
        "huffman-quadratic",
        ["src/huffman.c", "bench/bench_encode.c"],
        *OK,
        None,
        """Huffman table construction was O(n^2): encoding a 40 MB file took 12s. Replaced the
        insertion sort with the two-queue method; 1.3s now.""",
        "Huffman table construction O(n^2) insertion sort two-queue",
        [
            (
                "Packing big inputs spent most of its time building the prefix code; what "
                "algorithm swap sped it up?"
            ),
            (
                "Packing big files spent most of its time building the prefix code; what "
                "algorithm swap sped it up?"
            ),
            "Why did compressing forty megabytes take ages?",
        ],
        "the slow Huffman construction",
    ),
    incident(
        "libquill",
        "arena-overflow-leak",
        ["src/arena.c", "src/stream.c"],
        *OK,
        None,
        """valgrind reported a leak in quill_stream_free: the arena's overflow blocks were never
        freed (definitely lost: 4,096 bytes in 1 blocks). arena_destroy now walks the overflow
        list.""",
        "valgrind definitely lost quill_stream_free arena overflow blocks",
        [
            (
                "A memory checker showed bytes never given back when closing a stream; what was "
                "missing?"
            ),
            "Why did tearing down a compressor object not release everything?",
        ],
        "the arena memory leak",
    ),
    incident(
        "libquill",
        "msvc-vla",
        ["src/encode.c", "CMakeLists.txt"],
        *OK,
        None,
        """MSVC build broke with `error C2057: expected constant expression` from a VLA in
        src/encode.c. Replaced the VLA with an arena allocation and added a Windows job to CI.""",
        "MSVC error C2057 expected constant expression VLA encode.c",
        [
            "Why wouldn't the library compile with Microsoft's toolchain, and what was changed?",
            "Visual Studio refused a runtime-sized array; how was it reworked?",
        ],
        "the MSVC build break",
    ),
    incident(
        "libquill",
        "pkg-config-install",
        ["CMakeLists.txt", "quill.pc.in"],
        *OK,
        None,
        """cmake --install exported no pkg-config file, so downstream Meson projects could not find
        quill. Added quill.pc.in and configure_file, installed to lib/pkgconfig.""",
        "pkg-config quill.pc.in Meson could not find quill",
        [
            (
                "Other projects' builds couldn't locate our installed package metadata; what was "
                "added?"
            ),
            "How do consumers using a different build system now discover the library?",
        ],
        "the pkg-config file",
    ),
    incident(
        "libquill",
        "avx2-match-finder",
        ["src/match_avx2.c", "src/match_neon.c", "CMakeLists.txt"],
        *VF,
        "test_failure",
        """Attempted an AVX2 match finder: 18% faster on x86, but the NEON path produced wrong
        output on one test vector, so verification failed. Left it behind QUILL_ENABLE_AVX2, off
        by default.""",
        "AVX2 match finder NEON wrong output QUILL_ENABLE_AVX2",
        [
            "Did the effort to use wide CPU instructions to speed up compression land?",
            (
                "The vectorized search for repeated sequences gave incorrect results on ARM; "
                "where does that effort stand?"
            ),
            "Did the attempt to use wide CPU instructions to speed up compression land?",
        ],
        "the SIMD match finder",
    ),
    incident(
        "libquill",
        "abi-break-options",
        ["include/quill.h", "CMakeLists.txt", ".github/workflows/abi.yml"],
        *OK,
        None,
        """abidiff in CI flagged an ABI break: a field added in the middle of struct quill_options
        changed its layout. Moved the field to the end and bumped the SONAME minor version.""",
        "abidiff ABI break struct quill_options field layout SONAME",
        [
            (
                "Adding a setting shifted the binary interface of the public configuration "
                "record; how was compatibility restored?"
            ),
            (
                "Why would previously linked programs have misread the settings, and what "
                "prevented it?"
            ),
        ],
        "the quill_options ABI break",
    ),
    # ---------------------------------------------------------------- searchd (Java Spring)
    incident(
        "searchd",
        "alias-swap-before-flush",
        [
            "src/main/java/com/harbor/search/index/Reindexer.java",
            "src/test/java/com/harbor/search/index/ReindexerIT.java",
        ],
        *OK,
        None,
        """Reindexer dropped documents during the alias swap: the new index went live before the
        BulkProcessor had flushed. It now calls awaitClose(60, SECONDS) before swapping the
        alias; ReindexerIT checks the document counts match.""",
        "Reindexer alias swap before BulkProcessor flush awaitClose",
        [
            (
                "Some records went missing from results right after a full rebuild of the "
                "catalogue; why?"
            ),
            "Why did rebuilding the lookup store lose entries at cutover?",
        ],
        "documents lost during reindexing",
    ),
    incident(
        "searchd",
        "testcontainers-es-timeout",
        [
            "src/test/java/com/harbor/search/QueryControllerIT.java",
            "src/test/java/com/harbor/search/EsContainer.java",
        ],
        *OK,
        None,
        """QueryControllerIT was flaky: the Testcontainers Elasticsearch container took over 60s to
        start on CI. Raised the startup timeout to 180s and reuse one container across test
        classes.""",
        "QueryControllerIT Testcontainers Elasticsearch startup timeout",
        [
            (
                "Integration checks sometimes gave up because the throwaway engine in Docker was "
                "slow to boot; what changed?"
            ),
            "Why did the HTTP endpoint suite randomly break on the build machines?",
        ],
        "the flaky QueryControllerIT",
    ),
    incident(
        "searchd",
        "hyphen-wifi-analyzer",
        [
            "src/main/resources/es/products-settings.json",
            "src/test/java/com/harbor/search/AnalyzerTest.java",
        ],
        *OK,
        None,
        """Searching for hyphenated terms like `wi-fi` returned nothing: the standard analyzer
        split differently from the synonym filter. Added a word_delimiter_graph filter with
        preserve_original.""",
        "wi-fi hyphenated terms word_delimiter_graph synonym filter",
        [
            (
                "Why did looking up wireless networking gear with a dashed spelling give back "
                "empty results?"
            ),
            (
                "Queries containing a dash between two parts of a word found zero products; what "
                "text processing was adjusted?"
            ),
            "Why did looking up wireless networking gear with a dashed spelling come back empty?",
        ],
        "hyphenated search terms",
    ),
    incident(
        "searchd",
        "text4shell",
        ["pom.xml"],
        *OK,
        None,
        """OWASP dependency-check flagged CVE-2022-42889 (Text4Shell) in commons-text 1.9. Bumped
        commons-text to 1.10.0; no code used StringSubstitutor interpolation.""",
        "CVE-2022-42889 Text4Shell commons-text 1.9",
        [
            "Which remote execution hole in an Apache utility library did we patch?",
            "Which remote code execution issue in an Apache string utility did we patch?",
            (
                "A scanner warned about an interpolation exploit in a helper library; what got "
                "upgraded?"
            ),
        ],
        "the Text4Shell advisory",
    ),
    incident(
        "searchd",
        "deep-pagination",
        [
            "src/main/java/com/harbor/search/QueryController.java",
            "src/main/java/com/harbor/search/Paging.java",
        ],
        *OK,
        None,
        """p99 latency on /search was 2.4s, caused by deep pagination with from=10000. Switched to
        search_after with a point-in-time; p99 is 180ms.""",
        "p99 2.4s /search deep pagination from=10000 search_after point-in-time",
        [
            (
                "Why were requests for far-away result screens so slow, and what cursor approach "
                "replaced offsets?"
            ),
            (
                "Why were requests for far-away result pages so slow, and what cursor approach "
                "replaced offsets?"
            ),
            "How did we speed up browsing hundreds of pages into the listing?",
        ],
        "deep pagination latency",
    ),
    incident(
        "searchd",
        "spring-boot-3",
        ["pom.xml", "src/main/java/com/harbor/search/config/EsConfig.java"],
        *BX,
        "build_error",
        """Upgrade Spring Boot 2.7 to 3.2: javax.* to jakarta.* imports across 130 files, and the
        Elasticsearch RestHighLevelClient no longer exists in Boot 3. Converted the imports; the
        client rewrite remains. Budget ran out.""",
        "Spring Boot 3.2 javax jakarta RestHighLevelClient",
        [
            "How much of moving our JVM web framework to its newest generation got done?",
            "How much of moving the Java web framework to its newest generation got done?",
            "What's left of the namespace rename and the engine connector rewrite?",
        ],
        "the Spring Boot 3 upgrade",
    ),
    incident(
        "searchd",
        "suggest-rejected-execution",
        [
            "src/main/java/com/harbor/search/config/AsyncConfig.java",
            "src/main/java/com/harbor/search/SuggestController.java",
        ],
        *OK,
        None,
        """RejectedExecutionException from the async executor when /suggest got bursts. Configured
        a bounded queue of 500 with CallerRunsPolicy and a metric for queue depth.""",
        "RejectedExecutionException async executor /suggest CallerRunsPolicy",
        [
            "Autocomplete blew up under spikes because the worker pool was full; what was tuned?",
            "Why did type-ahead requests error out when lots of people typed at once?",
        ],
        "the suggest endpoint under bursts",
    ),
    incident(
        "searchd",
        "es-password-committed",
        ["src/main/resources/application.yml", "deploy/k8s/searchd-secret.yaml"],
        *OK,
        None,
        """The Elasticsearch password was committed in plain text in application.yml. Moved it to
        the ES_PASSWORD environment variable from a Kubernetes secret and rotated the
        credential.""",
        "Elasticsearch password committed application.yml ES_PASSWORD",
        [
            "A login for the cluster sat unencrypted in the repo; what was done?",
            "A credential for the cluster sat unencrypted in the repo config; what was done?",
            "Where does the engine login come from now that it is no longer checked in?",
        ],
        "the committed Elasticsearch password",
    ),
    # ---------------------------------------------------------------- notify-gateway (Node.js)
    incident(
        "notify-gateway",
        "bullmq-stalled",
        ["src/queue/worker.ts", "src/queue/config.ts"],
        *OK,
        None,
        """BullMQ jobs stayed in `active` forever after a worker restart: stalled job checks were
        disabled (stalledInterval 0). Restored the default interval and set maxStalledCount to
        2.""",
        "BullMQ jobs stuck active stalledInterval 0 maxStalledCount",
        [
            (
                "Why did messages never leave the in-progress state after a consumer process was "
                "bounced?"
            ),
            (
                "After a process bounce, queued sends sat there half-started forever; what "
                "setting brought them back?"
            ),
            "Why did messages never leave the in-progress state once a consumer was restarted?",
        ],
        "BullMQ jobs stuck after restarts",
    ),
    incident(
        "notify-gateway",
        "sse-listener-leak",
        ["src/routes/events.ts", "src/lib/bus.ts"],
        *OK,
        None,
        """Memory grew about 40 MB an hour: the SSE handler added an EventEmitter listener per
        request and never removed it (`MaxListenersExceededWarning` in the logs). Remove the
        listener on req close.""",
        "MaxListenersExceededWarning SSE handler EventEmitter listener leak",
        [
            "Server-pushed streams made RAM climb steadily every hour; what was never cleaned up?",
            "Why did the process keep growing until it got restarted?",
        ],
        "the SSE memory leak",
    ),
    incident(
        "notify-gateway",
        "apns-jwt-expiry",
        ["src/providers/apns.ts", "src/providers/apns.test.ts"],
        *OK,
        None,
        """iOS pushes started failing with `ExpiredProviderToken` an hour after each deploy: the
        APNs JWT was generated once at startup. It is now regenerated every 50 minutes.""",
        "ExpiredProviderToken APNs JWT generated once at startup",
        [
            "Apple phone alerts stopped arriving roughly sixty minutes after every release; why?",
            "Why did iPhone notifications die a while after each rollout?",
        ],
        "APNs token expiry",
    ),
    incident(
        "notify-gateway",
        "node-fetch-esm",
        ["package.json", "src/lib/http.ts"],
        *OK,
        None,
        """`ERR_REQUIRE_ESM` when requiring node-fetch v3 after the dependency bump. Removed
        node-fetch and use the built-in fetch of Node 20.""",
        "ERR_REQUIRE_ESM node-fetch v3",
        [
            "A web client library went module-only and broke our CommonJS imports; what did we do?",
            (
                "An HTTP client library went module-only and broke our CommonJS imports; what "
                "did we do?"
            ),
            "Which package stopped loading after its major release, and what replaced it?",
        ],
        "the node-fetch ESM error",
    ),
    incident(
        "notify-gateway",
        "unsubscribe-plus-sign",
        ["src/email/unsubscribe.ts", "src/email/unsubscribe.test.ts"],
        *OK,
        None,
        """Unsubscribe links broke for addresses with a plus sign: URL-encoding turned `+` into a
        space inside the signed token, so the signature check failed. Tokens are base64url now.""",
        "unsubscribe links plus sign base64url signed token",
        [
            (
                "Opt-out URLs didn't work for people whose mailbox name had a + in it; what was "
                "the encoding change?"
            ),
            "Why couldn't certain recipients stop receiving our mail?",
        ],
        "broken unsubscribe links",
    ),
    incident(
        "notify-gateway",
        "express-5-routes",
        ["package.json", "src/routes/index.ts", "src/routes/templates.ts"],
        *VF,
        "test_failure",
        """Tried upgrading Express 4 to 5: path-to-regexp v8 rejects `/:id?` optional params and
        `*` wildcards, 31 routes need rewriting. Rewrote 12; the route tests are still red.""",
        "Express 5 path-to-regexp optional params wildcards",
        [
            (
                "The web server framework's major version bump broke how URLs with optional "
                "segments are declared; how far did it get?"
            ),
            "How many endpoints have yet to be redone for the newer HTTP framework?",
        ],
        "the Express 5 upgrade",
    ),
    incident(
        "notify-gateway",
        "jest-open-handles",
        ["test/setup.ts", "src/lib/redis.ts"],
        *OK,
        None,
        """Jest did not exit one second after the test run has completed: the Redis connection was
        never closed. Added a shared client with quit() in afterAll.""",
        "Jest did not exit one second after the test run open handles Redis",
        [
            "Why did our JavaScript unit suite hang at the end instead of returning?",
            (
                "The unit suite hung at the end because a cache connection stayed open; what "
                "closed it?"
            ),
            "Why did our JavaScript checks never return control after finishing?",
        ],
        "Jest open handles",
    ),
    incident(
        "notify-gateway",
        "hmac-timing-safe",
        ["src/webhooks/verify.ts", "src/webhooks/verify.test.ts"],
        *OK,
        None,
        """Webhook signature verification compared HMAC strings with ===, which leaks timing.
        Switched to crypto.timingSafeEqual over equal-length Buffers.""",
        "timingSafeEqual HMAC === webhook signature verification",
        [
            (
                "Checking incoming callback authenticity was open to a side-channel attack; what "
                "comparison is used now?"
            ),
            "How did we harden validating that partner requests are genuine?",
        ],
        "the webhook HMAC comparison",
    ),
]
