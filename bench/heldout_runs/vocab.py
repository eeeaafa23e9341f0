"""Vocabulary of the held-out set (:mod:`bench.heldout_runs`, written 2026-12-07).

Per repository (10 of them, in a fictional organisation): working directory, files,
components, dependency bumps, tests, CI jobs, error messages, linters, features, docs and
symptoms, from which :func:`.data.build` generates the routine ("filler") runs. Also the people
and role agents that run them, the models and adapters reported, and each half's unrelated
questions (which no run answers).
"""

from __future__ import annotations

from typing import Any

ORG = "github.com/harborlabs"

#: Per repository key (``ORG/<key>`` is the run's repository): what routine runs are made of.
REPOS: dict[str, dict[str, Any]] = {
    "paygate": dict(
        cwd="/srv/agents/paygate",
        files=[
            "internal/billing/invoice.go",
            "internal/billing/refund.go",
            "internal/webhook/stripe.go",
            "internal/store/postgres/ledger.go",
            "internal/api/grpc/server.go",
            "internal/auth/jwt.go",
            "internal/ratelimit/bucket.go",
            "cmd/paygate/main.go",
            "internal/retry/backoff.go",
            "internal/billing/invoice_test.go",
            "internal/api/http/handlers.go",
            "pkg/money/money.go",
        ],
        components=[
            "invoice rendering",
            "refund flow",
            "the ledger store",
            "the gRPC API",
            "webhook handling",
            "retry backoff",
            "payout scheduling",
            "the HTTP handlers",
        ],
        deps=[
            ("github.com/jackc/pgx/v4", "4.18.1", "4.18.3"),
            ("google.golang.org/grpc", "1.62.1", "1.64.0"),
            ("github.com/stripe/stripe-go/v76", "76.8.0", "76.25.0"),
            ("go.uber.org/zap", "1.26.0", "1.27.0"),
            ("github.com/golang-jwt/jwt/v5", "5.2.0", "5.2.1"),
            ("github.com/prometheus/client_golang", "1.18.0", "1.19.1"),
        ],
        manifest="go.mod",
        tests=[
            "TestRefundPartial",
            "TestInvoiceTotals",
            "TestWebhookSignature",
            "TestPayoutSchedule",
            "TestLedgerBalance",
            "TestBackoffJitter",
        ],
        ci_jobs=["go-test", "golangci-lint", "integration-postgres", "docker-build"],
        errors=[
            (
                "test_failure",
                "--- FAIL: TestRefundPartial (0.02s) refund_test.go:88: got 1999, want 2000",
            ),
            (
                "lint",
                "internal/billing/refund.go:41:2: ineffectual assignment to err (ineffassign)",
            ),
            ("build_error", "undefined: money.FromCents"),
            (
                "test_failure",
                "panic: runtime error: invalid memory address or nil pointer dereference",
            ),
            ("integration", "dial tcp 127.0.0.1:5432: connect: connection refused"),
        ],
        linters=["golangci-lint", "staticcheck", "go vet"],
        lint_kinds=["errcheck", "unused parameters", "shadowed err", "gofmt drift"],
        features=[
            "a refunds.list RPC with pagination",
            "Prometheus histograms for webhook latency",
            "structured zap logging for payouts",
            "a dry-run flag for the payout scheduler",
            "merchant-level currency settings",
            "an /healthz endpoint that checks Postgres",
        ],
        dirs=["internal/billing", "internal/webhook", "internal/store"],
        docs=["docs/architecture.md", "README.md", "docs/runbook.md"],
        symptoms=[
            "slow invoice listing",
            "occasional 502s from the gateway",
            "high p99 on CreateRefund",
            "a goroutine count that keeps creeping up",
        ],
    ),
    "logsift": dict(
        cwd="/srv/agents/logsift",
        files=[
            "src/main.rs",
            "src/filter.rs",
            "src/parser/json.rs",
            "src/parser/syslog.rs",
            "src/output/table.rs",
            "src/output/color.rs",
            "src/config.rs",
            "src/tail.rs",
            "tests/cli.rs",
            "benches/parse.rs",
            "src/time_range.rs",
        ],
        components=[
            "the filter engine",
            "the JSON parser",
            "colored output",
            "the time range parser",
            "the CLI argument parsing",
            "the tail follower",
            "the table renderer",
        ],
        deps=[
            ("clap", "4.4.18", "4.5.4"),
            ("serde", "1.0.195", "1.0.203"),
            ("regex", "1.10.2", "1.10.5"),
            ("chrono", "0.4.31", "0.4.38"),
            ("tokio", "1.35.1", "1.38.0"),
            ("anyhow", "1.0.79", "1.0.86"),
        ],
        manifest="Cargo.toml",
        tests=[
            "filters_by_level",
            "parses_iso_timestamps",
            "color_disabled_when_piped",
            "tail_reads_appended_lines",
            "json_nested_fields",
        ],
        ci_jobs=["cargo-test", "clippy", "cargo-deny", "release-build"],
        errors=[
            (
                "test_failure",
                (
                    "thread 'filters_by_level' panicked at tests/cli.rs:57:5: assertion `left == "
                    "right` failed"
                ),
            ),
            ("lint", "error: this `if` has identical blocks (clippy::if_same_then_else)"),
            (
                "build_error",
                (
                    "error[E0502]: cannot borrow `self.buf` as mutable because it is also "
                    "borrowed as immutable"
                ),
            ),
            ("build_error", "error[E0308]: mismatched types: expected `&str`, found `String`"),
        ],
        linters=["clippy", "rustfmt", "cargo-machete"],
        lint_kinds=[
            "needless borrows",
            "redundant clones",
            "unused imports",
            "manual string formatting",
        ],
        features=[
            "a --since flag accepting relative times",
            "NO_COLOR support",
            "a --fields option to pick JSON keys",
            "shell completions for zsh and fish",
            "a --stats summary at exit",
            "gzip input detection",
        ],
        dirs=["src/parser", "src/output", "tests"],
        docs=["README.md", "docs/filters.md", "CHANGELOG.md"],
        symptoms=[
            "slow startup on large config files",
            "wrong colours in tmux",
            "high CPU in --follow mode",
            "garbled output when piping to less",
        ],
    ),
    "shopfront": dict(
        cwd="/srv/agents/shopfront",
        files=[
            "src/components/CartDrawer.tsx",
            "src/components/CheckoutForm.tsx",
            "src/components/SearchBar.tsx",
            "src/pages/ProductPage.tsx",
            "src/pages/CategoryPage.tsx",
            "src/hooks/useInventory.ts",
            "src/api/client.ts",
            "src/store/cartSlice.ts",
            "src/i18n/en.json",
            "vite.config.ts",
            "cypress/e2e/checkout.cy.ts",
            "src/components/ProductCard.tsx",
        ],
        components=[
            "the product card",
            "the category page",
            "the search bar",
            "the checkout form",
            "the cart slice",
            "the API client",
            "the header navigation",
        ],
        deps=[
            ("react", "18.2.0", "18.3.1"),
            ("vite", "5.0.12", "5.2.11"),
            ("@tanstack/react-query", "5.17.9", "5.40.0"),
            ("typescript", "5.3.3", "5.4.5"),
            ("eslint", "8.56.0", "8.57.0"),
            ("@reduxjs/toolkit", "2.0.1", "2.2.5"),
            ("cypress", "13.6.3", "13.11.0"),
        ],
        manifest="package.json",
        tests=[
            "ProductCard.test.tsx",
            "cartSlice.test.ts",
            "SearchBar.test.tsx",
            "checkout.cy.ts",
            "CategoryPage.test.tsx",
        ],
        ci_jobs=["vitest", "eslint", "typecheck", "cypress-e2e", "lighthouse"],
        errors=[
            ("test_failure", "AssertionError: expected '3 items' to equal '2 items'"),
            ("typecheck", "TS2339: Property 'sku' does not exist on type 'CartItem'"),
            (
                "lint",
                (
                    "react-hooks/exhaustive-deps: React Hook useEffect has a missing dependency: "
                    "'filters'"
                ),
            ),
            (
                "e2e",
                "Timed out retrying after 4000ms: Expected to find element: [data-cy=add-to-cart]",
            ),
        ],
        linters=["eslint", "prettier", "stylelint"],
        lint_kinds=[
            "exhaustive-deps warnings",
            "unused imports",
            "any types",
            "prettier formatting",
        ],
        features=[
            "a wishlist button on the product card",
            "skeleton loaders on the category page",
            "keyboard navigation in the search suggestions",
            "a dark mode toggle",
            "a recently viewed products strip",
            "image lazy loading with srcset",
        ],
        dirs=["src/components", "src/pages", "src/hooks"],
        docs=["README.md", "docs/state-management.md", "CONTRIBUTING.md"],
        symptoms=[
            "layout shift on the product page",
            "a slow first paint on mobile",
            "broken focus styles",
            "stale prices after adding to cart",
        ],
    ),
    "clinicbook": dict(
        cwd="/srv/agents/clinicbook",
        files=[
            "appointments/models.py",
            "appointments/views.py",
            "appointments/forms.py",
            "patients/models.py",
            "patients/serializers.py",
            "notifications/tasks.py",
            "clinicbook/settings/base.py",
            "reports/exports.py",
            "templates/appointments/list.html",
            "patients/tests/test_api.py",
            "appointments/tests/test_views.py",
            "requirements.txt",
        ],
        components=[
            "the appointment list view",
            "the patient serializer",
            "the notification tasks",
            "the admin site",
            "the report exports",
            "the booking form",
        ],
        deps=[
            ("djangorestframework", "3.14.0", "3.15.1"),
            ("celery", "5.3.4", "5.4.0"),
            ("psycopg", "3.1.17", "3.1.19"),
            ("django-environ", "0.11.2", "0.11.3"),
            ("sentry-sdk", "1.39.2", "2.5.1"),
            ("pytest-django", "4.7.0", "4.8.0"),
        ],
        manifest="requirements.txt",
        tests=[
            "test_booking_overlaps",
            "test_cancel_refund_window",
            "test_patient_search",
            "test_reminder_schedule",
            "test_export_permissions",
        ],
        ci_jobs=["pytest", "ruff", "mypy", "migrations-check"],
        errors=[
            ("test_failure", "AssertionError: 403 != 200"),
            (
                "migration_check",
                (
                    "Your models in app(s): 'appointments' have changes that are not yet "
                    "reflected in a migration"
                ),
            ),
            (
                "typecheck",
                'error: Item "None" of "Clinic | None" has no attribute "tz"  [union-attr]',
            ),
            (
                "test_failure",
                "django.db.utils.IntegrityError: duplicate key value violates unique constraint",
            ),
        ],
        linters=["ruff", "mypy", "djlint"],
        lint_kinds=[
            "unused imports",
            "missing type hints",
            "f-string issues",
            "template indentation",
        ],
        features=[
            "a waitlist for fully booked days",
            "an admin filter by practitioner",
            "ICS calendar attachments on confirmations",
            "a cancellation reason field",
            "an audit log of appointment changes",
            "pagination on the practitioner list",
        ],
        dirs=["appointments", "patients", "notifications"],
        docs=["README.md", "docs/deploy.md", "docs/api.md"],
        symptoms=[
            "slow admin changelist",
            "duplicate reminder emails",
            "a 500 on the booking form",
            "timeouts on the practitioner calendar",
        ],
    ),
    "tidepipe": dict(
        cwd="/srv/agents/tidepipe",
        files=[
            "dags/daily_orders.py",
            "dags/weekly_cohorts.py",
            "jobs/spark/sessionize.py",
            "dbt/models/marts/fct_orders.sql",
            "dbt/models/staging/stg_events.sql",
            "pipeline/io/s3_reader.py",
            "pipeline/quality/checks.py",
            "tests/test_sessionize.py",
            "pyproject.toml",
            "dbt/models/marts/dim_customers.sql",
        ],
        components=[
            "the daily_orders DAG",
            "the cohort job",
            "the dbt staging models",
            "the S3 reader",
            "the data quality checks",
            "the customer dimension",
        ],
        deps=[
            ("pyspark", "3.4.1", "3.5.1"),
            ("dbt-core", "1.7.4", "1.8.2"),
            ("apache-airflow", "2.7.3", "2.8.4"),
            ("boto3", "1.34.14", "1.34.120"),
            ("great-expectations", "0.18.7", "0.18.15"),
            ("pandas", "2.1.4", "2.2.2"),
        ],
        manifest="pyproject.toml",
        tests=[
            "test_sessionize_gap",
            "test_cohort_week_start",
            "test_reader_partitions",
            "test_checks_null_rate",
            "dbt test not_null_dim_customers_customer_id",
        ],
        ci_jobs=["pytest", "dbt-build", "sqlfluff", "dag-integrity"],
        errors=[
            (
                "test_failure",
                (
                    'AssertionError: DataFrame.iloc[:, 2] (column name="sessions") values are '
                    "different"
                ),
            ),
            (
                "dbt_test",
                (
                    "Failure in test not_null_dim_customers_customer_id: got 14 results, "
                    "configured to fail if != 0"
                ),
            ),
            ("lint", "L010: Keywords must be consistently upper case"),
            ("import_error", "ModuleNotFoundError: No module named 'pipeline.quality.rules'"),
        ],
        linters=["sqlfluff", "ruff", "black"],
        lint_kinds=["keyword capitalisation", "unused CTEs", "long lines", "import order"],
        features=[
            "a weekly cohort retention table",
            "row count alerts to Slack",
            "a dim_products snapshot",
            "partition pruning on event_date",
            "a late-data SLA sensor",
            "column-level lineage docs",
        ],
        dirs=["dags", "jobs/spark", "dbt/models"],
        docs=["README.md", "docs/data-contracts.md", "dbt/models/marts/schema.yml"],
        symptoms=[
            "a DAG that keeps missing its SLA",
            "skewed partitions in the cohort job",
            "a dbt run that got twice as slow",
            "empty output for yesterday",
        ],
    ),
    "courier-android": dict(
        cwd="/srv/agents/courier-android",
        files=[
            "app/src/main/java/com/harbor/courier/ui/map/RouteMapFragment.kt",
            "app/src/main/java/com/harbor/courier/sync/SyncWorker.kt",
            "app/src/main/java/com/harbor/courier/data/db/DeliveryDao.kt",
            "app/src/main/java/com/harbor/courier/ui/list/DeliveryListFragment.kt",
            "app/src/main/java/com/harbor/courier/ui/login/LoginViewModel.kt",
            "app/build.gradle.kts",
            "gradle/libs.versions.toml",
            "app/src/main/res/values/strings.xml",
            "app/src/main/AndroidManifest.xml",
        ],
        components=[
            "the delivery list",
            "the login flow",
            "the sync worker",
            "the route map",
            "the delivery DAO",
            "the settings screen",
        ],
        deps=[
            ("androidx.compose:compose-bom", "2024.02.00", "2024.05.00"),
            ("com.squareup.retrofit2:retrofit", "2.9.0", "2.11.0"),
            ("androidx.room:room-runtime", "2.6.0", "2.6.1"),
            ("org.jetbrains.kotlinx:kotlinx-coroutines-android", "1.7.3", "1.8.1"),
            ("com.google.dagger:hilt-android", "2.50", "2.51.1"),
            ("androidx.work:work-runtime-ktx", "2.9.0", "2.9.1"),
        ],
        manifest="gradle/libs.versions.toml",
        tests=[
            "DeliveryListViewModelTest",
            "LoginViewModelTest",
            "DeliveryDaoTest",
            "SyncWorkerTest",
            "RouteMapScreenshotTest",
        ],
        ci_jobs=["assembleDebug", "testDebugUnitTest", "lintDebug", "connectedAndroidTest"],
        errors=[
            (
                "test_failure",
                "org.junit.ComparisonFailure: expected:<[DELIVERED]> but was:<[PENDING]>",
            ),
            (
                "lint",
                (
                    "Error: Missing permissions required by "
                    "LocationManager.requestLocationUpdates [MissingPermission]"
                ),
            ),
            ("build_error", "e: Unresolved reference: deliveryState"),
            (
                "test_failure",
                "kotlinx.coroutines.test.UncompletedCoroutinesError: After waiting for 10s",
            ),
        ],
        linters=["ktlint", "detekt", "Android lint"],
        lint_kinds=["unused resources", "hardcoded strings", "long methods", "wildcard imports"],
        features=[
            "pull-to-refresh on the delivery list",
            "offline banner when sync fails",
            "a signature capture step",
            "Material 3 theming",
            "a settings toggle for map traffic",
            "biometric unlock on login",
        ],
        dirs=[
            "app/src/main/java/com/harbor/courier/ui",
            "app/src/main/java/com/harbor/courier/data",
        ],
        docs=["README.md", "docs/release.md"],
        symptoms=[
            "ANRs on the delivery list",
            "battery drain while idle",
            "a crash when rotating the login screen",
            "slow cold start",
        ],
    ),
    "infra-live": dict(
        cwd="/srv/agents/infra-live",
        files=[
            "modules/eks/main.tf",
            "modules/rds/variables.tf",
            "envs/prod/main.tf",
            "envs/staging/main.tf",
            "modules/vpc/outputs.tf",
            "modules/iam/policies.tf",
            ".terraform.lock.hcl",
            "envs/prod/cloudfront.tf",
            "modules/redis/main.tf",
            ".github/workflows/terraform.yml",
        ],
        components=[
            "the EKS module",
            "the RDS module",
            "the staging environment",
            "the Redis module",
            "the IAM policies",
            "the terraform workflow",
        ],
        deps=[
            ("hashicorp/aws", "5.31.0", "5.54.1"),
            ("hashicorp/kubernetes", "2.25.2", "2.30.0"),
            ("terraform-aws-modules/eks/aws", "19.21.0", "20.14.0"),
            ("hashicorp/helm", "2.12.1", "2.13.2"),
            ("hashicorp/random", "3.6.0", "3.6.2"),
        ],
        manifest=".terraform.lock.hcl",
        tests=["terraform validate", "tflint", "checkov", "terratest TestStagingVpc"],
        ci_jobs=["terraform-plan", "tflint", "checkov", "infracost"],
        errors=[
            ("terraform_validate", 'Error: Reference to undeclared input variable "subnet_ids"'),
            (
                "lint",
                'Warning: variable "tags" is declared but not used (terraform_unused_declarations)',
            ),
            ("policy", "CKV_AWS_18: Ensure the S3 bucket has access logging enabled"),
            (
                "plan_error",
                (
                    "Error: error configuring Terraform AWS Provider: no valid credential "
                    "sources found"
                ),
            ),
        ],
        linters=["tflint", "terraform fmt", "checkov"],
        lint_kinds=[
            "unused variables",
            "missing descriptions",
            "deprecated interpolation syntax",
            "formatting",
        ],
        features=[
            "tags on all RDS snapshots",
            "a Redis replica in staging",
            "WAF rate-based rules on the ALB",
            "budget alarms per environment",
            "an OIDC provider for GitHub Actions",
            "Route 53 health checks",
        ],
        dirs=["modules/eks", "modules/rds", "envs/prod", "envs/staging"],
        docs=["README.md", "docs/runbooks/apply.md", "docs/environments.md"],
        symptoms=[
            "a plan that shows perpetual diffs on tags",
            "slow terraform plans in prod",
            "drift in the staging security groups",
            "expired certificates on the internal ALB",
        ],
    ),
    "libquill": dict(
        cwd="/srv/agents/libquill",
        files=[
            "src/decode.c",
            "src/encode.c",
            "src/huffman.c",
            "src/arena.c",
            "src/stream.c",
            "include/quill.h",
            "tests/test_roundtrip.c",
            "CMakeLists.txt",
            "fuzz/fuzz_decode.c",
            "src/crc32.c",
        ],
        components=[
            "the decoder",
            "the encoder",
            "the Huffman coder",
            "the arena allocator",
            "the streaming API",
            "the CRC32 routine",
        ],
        deps=[
            ("cmocka", "1.1.5", "1.1.7"),
            ("zlib (test oracle)", "1.2.13", "1.3.1"),
            ("cmake_minimum_required", "3.16", "3.20"),
            ("googletest (bench harness)", "1.13.0", "1.14.0"),
        ],
        manifest="CMakeLists.txt",
        tests=[
            "test_roundtrip_empty",
            "test_roundtrip_random",
            "test_stream_chunked",
            "test_crc32_vectors",
            "test_decode_corrupt",
        ],
        ci_jobs=["build-gcc", "build-clang-asan", "build-msvc", "fuzz-smoke", "abi-check"],
        errors=[
            ("test_failure", "test_roundtrip.c:143: error: Failure! memcmp(out, in, n) != 0"),
            ("sanitizer", "AddressSanitizer: stack-use-after-return on address 0x7ffd"),
            (
                "build_error",
                "src/stream.c:77:12: error: implicit declaration of function 'quill_flush'",
            ),
            (
                "lint",
                (
                    "warning: comparison of integer expressions of different signedness "
                    "[-Wsign-compare]"
                ),
            ),
        ],
        linters=["clang-tidy", "cppcheck", "clang-format"],
        lint_kinds=["sign-compare warnings", "unused variables", "missing const", "formatting"],
        features=[
            "a quill_decode_bound() helper",
            "streaming dictionary support",
            "a --level option in the CLI tool",
            "CRC32C via SSE4.2",
            "a static-only build option",
            "doxygen comments on the public API",
        ],
        dirs=["src", "tests", "include"],
        docs=["README.md", "docs/format.md", "CHANGELOG.md"],
        symptoms=[
            "slow decode of small blocks",
            "a compiler warning flood on GCC 14",
            "unaligned access warnings under UBSan",
            "a poor compression ratio on JSON input",
        ],
    ),
    "searchd": dict(
        cwd="/srv/agents/searchd",
        files=[
            "src/main/java/com/harbor/search/QueryController.java",
            "src/main/java/com/harbor/search/index/Reindexer.java",
            "src/main/java/com/harbor/search/SuggestController.java",
            "src/main/java/com/harbor/search/query/QueryBuilder.java",
            "src/main/resources/application.yml",
            "pom.xml",
            "src/test/java/com/harbor/search/QueryBuilderTest.java",
            "src/main/java/com/harbor/search/config/EsConfig.java",
        ],
        components=[
            "the query builder",
            "the reindexer",
            "the suggest endpoint",
            "the facet aggregation",
            "the ranking boosts",
            "the health indicator",
        ],
        deps=[
            ("org.springframework.boot:spring-boot-starter-parent", "2.7.17", "2.7.18"),
            ("co.elastic.clients:elasticsearch-java", "8.11.3", "8.13.4"),
            ("org.testcontainers:elasticsearch", "1.19.3", "1.19.8"),
            ("io.micrometer:micrometer-registry-prometheus", "1.12.1", "1.13.0"),
            ("org.projectlombok:lombok", "1.18.30", "1.18.32"),
        ],
        manifest="pom.xml",
        tests=[
            "QueryBuilderTest",
            "FacetAggregationTest",
            "SuggestControllerTest",
            "RankingBoostTest",
            "QueryControllerIT",
        ],
        ci_jobs=["mvn-verify", "spotbugs", "dependency-check", "integration-tests"],
        errors=[
            ("test_failure", "org.opentest4j.AssertionFailedError: expected: <10> but was: <9>"),
            ("build_error", "[ERROR] cannot find symbol: class SearchRequestBuilder"),
            ("lint", "SpotBugs: NP_NULL_ON_SOME_PATH in QueryBuilder.build()"),
            ("integration", "ConnectException: Connection refused: localhost/127.0.0.1:9200"),
        ],
        linters=["spotbugs", "checkstyle", "PMD"],
        lint_kinds=[
            "unused imports",
            "magic numbers",
            "missing final modifiers",
            "long parameter lists",
        ],
        features=[
            "a brand facet",
            "field boosts configurable per tenant",
            "a did-you-mean suggestion",
            "request tracing with OpenTelemetry",
            "a /search/explain debug endpoint",
            "synonym reload without restart",
        ],
        dirs=["src/main/java/com/harbor/search", "src/test/java/com/harbor/search"],
        docs=["README.md", "docs/relevance.md", "docs/operations.md"],
        symptoms=[
            "slow facet counts",
            "GC pauses during reindexing",
            "empty suggestions for short prefixes",
            "uneven shard sizes",
        ],
    ),
    "notify-gateway": dict(
        cwd="/srv/agents/notify-gateway",
        files=[
            "src/server.ts",
            "src/routes/send.ts",
            "src/routes/events.ts",
            "src/queue/worker.ts",
            "src/providers/apns.ts",
            "src/providers/fcm.ts",
            "src/providers/ses.ts",
            "src/email/templates.ts",
            "package.json",
            "test/send.test.ts",
        ],
        components=[
            "the send route",
            "the queue worker",
            "the FCM provider",
            "the SES provider",
            "the email templates",
            "the tenant settings",
        ],
        deps=[
            ("bullmq", "5.1.1", "5.7.14"),
            ("express", "4.18.2", "4.19.2"),
            ("ioredis", "5.3.2", "5.4.1"),
            ("zod", "3.22.4", "3.23.8"),
            ("firebase-admin", "12.0.0", "12.1.1"),
            ("pino", "8.17.2", "9.1.0"),
        ],
        manifest="package.json",
        tests=[
            "send.test.ts",
            "worker.test.ts",
            "templates.test.ts",
            "fcm.test.ts",
            "tenants.test.ts",
        ],
        ci_jobs=["jest", "eslint", "tsc", "docker-build"],
        errors=[
            (
                "test_failure",
                (
                    "expect(received).toHaveBeenCalledTimes(expected) Expected number of calls: "
                    "1 Received number of calls: 2"
                ),
            ),
            (
                "typecheck",
                (
                    "TS2345: Argument of type 'string | undefined' is not assignable to "
                    "parameter of type 'string'"
                ),
            ),
            ("lint", "@typescript-eslint/no-floating-promises: Promises must be awaited"),
            ("integration", "ReplyError: NOAUTH Authentication required."),
        ],
        linters=["eslint", "prettier", "tsc --noEmit"],
        lint_kinds=["floating promises", "unused variables", "implicit any", "formatting"],
        features=[
            "per-tenant sending quotas",
            "an email preview endpoint",
            "retry metadata in job payloads",
            "a dead-letter queue dashboard",
            "FCM topic messaging",
            "template versioning",
        ],
        dirs=["src/routes", "src/providers", "src/queue"],
        docs=["README.md", "docs/providers.md", "docs/queue.md"],
        symptoms=[
            "delayed emails during peaks",
            "duplicate push notifications",
            "a slow /send endpoint",
            "Redis memory creeping up",
        ],
    ),
}

PERSONS = [
    "fahim-khan",
    "mei-ling-zhao",
    "oskar-lind",
    "priya-raman",
    "tomas-novak",
    "ada-okafor",
    "jonas-weber",
    "lucia-ferreira",
    "kenji-sato",
    "noor-haddad",
]
ROLES = [
    "review-bot",
    "ci-fixer",
    "triage-agent",
    "dep-updater",
    "migration-runner",
    "sec-scanner",
    "codex",
]
MODELS = ["claude-sonnet-4-5", "gpt-4.1", "o4-mini", "claude-opus-4-1", "gemini-2.5-pro"]
ADAPTERS = ["claude-code", "codex", "command", "harbor-harness"]

#: Per half: questions about nothing in the set (the relevance floor's test).
UNRELATED: dict[str, list[str]] = {
    "A": [
        "How do I bake sourdough bread with a stiff starter?",
        "What is the best time of year to plant tomatoes?",
        "What's the capital of Mongolia?",
        "How do I tune a guitar to drop D?",
        "A beginner marathon training plan over sixteen weeks",
        "How long should I boil an egg for a runny yolk?",
        "Who won the 1998 football world cup?",
        "How do I knit a scarf with a cable pattern?",
        "Which wine goes well with grilled salmon?",
        "How do I get a red wine stain out of a carpet?",
    ],
    "B": [
        "What are good houseplants for a dark bathroom?",
        "How many moons does Jupiter have?",
        "Tips for learning to ride a unicycle",
        "How do I make a classic French omelette?",
        "What should I pack for a week of hiking in Patagonia?",
        "Who painted the Girl with a Pearl Earring?",
        "How do I train a puppy to stop biting?",
        "What is the difference between a violin and a viola?",
        "Best exercises for lower back pain relief",
        "How do I descale an espresso machine?",
    ],
}
