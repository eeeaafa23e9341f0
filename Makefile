# fleetmem developer entry points. Every target creates and reuses .venv, so a fresh
# machine needs only Python 3.11+ and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8737
SERVER_MEMORY_VERSION := 2026.8.31
INSPECTOR_VERSION := 2.12.0

.PHONY: install serve test lint typecheck unit bench bench-quick clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

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
	touch $(TEST_STAMP)

install: $(STAMP)

serve: $(STAMP)
	$(BIN)/fleetmem serve --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(TEST_STAMP)
	$(BIN)/pytest -q

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python -m bench.run_all

bench-quick: $(STAMP)
	$(BIN)/python -m bench.run_all --quick

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
