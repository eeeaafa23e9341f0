# fleetmem developer entry points. Every target creates and reuses .venv, so a fresh
# machine needs only Python 3.11+ and make for `make serve`; `make test` also needs git,
# npm and Chromium (see README.md).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8737
SERVER_MEMORY_VERSION := 2026.8.31
INSPECTOR_VERSION := 2.12.0
CLAUDE_CODE_VERSION := 2.1.197
CODEX_VERSION := 0.171.0

# Test workers: pytest-xdist processes for `make unit`, one more than the cores: much of the
# suite waits on the subprocesses it starts (daemons, CLIs, browsers, real agents) rather than
# computing, and a third worker on two cores fills that wait (measured on one machine and
# commit: 8 min 44 s with three workers, 10 min 12 s with two). Tests of one file share a
# worker (--dist loadfile), so module-scoped servers are started once.
WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))

.PHONY: install serve test lint typecheck unit bench bench-quick clean lock postgres postgres-stop

# Every package comes from requirements.lock: exact versions with their sha256 hashes, so
# the venv is the one the tests ran against. pyproject.toml keeps compatible ranges for
# people who install fleetmem beside other packages; `make lock` re-resolves the lock.
$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

# Re-resolve requirements.lock from pyproject.toml's ranges with uv (a dev dependency),
# keeping every pin that still fits; pass UPGRADE=--upgrade to move to the newest releases.
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra dev --generate-hashes --universal \
		--python-version 3.11 $(UPGRADE) -o requirements.lock

# Test-only tools from npm (third-party MCP peers). Kept out of $(STAMP) so that
# `make serve` needs no Node on a fresh machine.
TEST_STAMP := $(VENV)/.test-tools

$(TEST_STAMP): $(STAMP) Makefile
	# A third-party MCP server that does not implement the provider contract, for the
	# conformance tests (tests/providers); project-local, pinned, never on PATH.
	npm install --prefix $(VENV)/node --no-audit --no-fund --silent --save-exact \
		@modelcontextprotocol/server-memory@$(SERVER_MEMORY_VERSION)
	# The MCP Inspector's CLI, a third-party client for the agent-facing server's tests
	# (tests/mcp); project-local, pinned. It declares node >= 22.19 but its CLI runs on 20.
	npm install --prefix $(VENV)/node --no-audit --no-fund --silent --save-exact \
		@modelcontextprotocol/inspector@$(INSPECTOR_VERSION)
	# Claude Code's CLI, to run the documented `claude mcp add` recipe for real
	# (tests/integrations/test_install.py); no model call is made, so no key is needed.
	npm install --prefix $(VENV)/node --no-audit --no-fund --silent --save-exact \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	# Codex's CLI, driven against a local stand-in for the Responses API
	# (tests/integrations/test_real_codex.py); nothing leaves the machine.
	npm install --prefix $(VENV)/node --no-audit --no-fund --silent --save-exact \
		@openai/codex@$(CODEX_VERSION)
	touch $(TEST_STAMP)

install: $(STAMP)

# A throwaway PostgreSQL cluster with pgvector on 127.0.0.1 (docs/postgres.md): installs what
# is missing from Debian's packages, starts it, and prints its URL as the last line. The tests
# run every store test on it too (tests/store_kinds.py reads .venv/postgres/url).
postgres:
	@bash scripts/postgres.sh

postgres-stop:
	@bash scripts/postgres.sh stop

serve: $(STAMP)
	$(BIN)/fleetmem serve --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# Sources are byte-compiled first: where PYTHONDONTWRITEBYTECODE is set (some CI images set
# it) nothing writes __pycache__, and every fleetmem subprocess the tests start (hundreds:
# CLI runs, hooks, daemons) would compile about 160 modules again, 0.4 s each time here.
unit: $(TEST_STAMP)
	$(BIN)/python -m compileall -q src
	$(BIN)/pytest -q -n $(WORKERS) --dist loadfile

test: lint typecheck unit

# The real-session hook benchmark drives the Claude Code CLI the test tools install. Sources
# are byte-compiled first, as for the tests (and as installing a wheel does).
bench: $(STAMP) $(TEST_STAMP)
	$(BIN)/python -m compileall -q src
	$(BIN)/python -m bench.run_all

bench-quick: $(STAMP) $(TEST_STAMP)
	$(BIN)/python -m compileall -q src
	$(BIN)/python -m bench.run_all --quick

clean:
	-bash scripts/postgres.sh destroy
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
