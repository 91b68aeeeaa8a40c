# The two set-up commands are `make run` and `make test` (see README).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Root needs no sudo; anyone else gets it for the one apt-get call.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The scale path: PostgreSQL on this machine, when one answers.
PG_TEST_URL ?= postgres://postgres@127.0.0.1:5432/knowledgeweb
REDIS_TEST_URL ?= redis://127.0.0.1:6379/15
# pytest-xdist workers for the tests that share no process state: one per CPU of the 2-core
# machine the targets are measured on (`make test-fast PYTEST_WORKERS=auto` takes every CPU).
# Plain `load` scheduling: the scope-based ones key tests by node id, and schemathesis gives
# all its generated tests one id, so they would silently run one of eleven.
PYTEST_WORKERS ?= 2
XDIST := -n $(PYTEST_WORKERS)

.PHONY: install lock run serve serve-preflight loadtest test test-fast lint typecheck pytest pytest-postgres chromium bench bench-docs clean lightrag-cache

# Every machine installs the same versions: the lock pins each package (with its hashes) that
# pyproject.toml's ranges resolve to; `make lock` refreshes it after a dependency change.
LOCK := requirements.lock

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

lock:
	$(BIN)/pip install --quiet pip-tools
	$(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --extra dev --strip-extras \
		--no-emit-index-url --no-emit-find-links --output-file $(LOCK) pyproject.toml

install: $(STAMP)

run: install
	mkdir -p var
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py demo
	DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:8000

# Before anything is installed or migrated: a server without ALLOWED_HOSTS would answer
# 400 to every request (and SECRET_KEY is required with DEBUG off), so it does not start.
serve-preflight:
	@if [ -z "$$ALLOWED_HOSTS" ]; then \
		echo "make serve: ALLOWED_HOSTS is not set. Set it to the host names this server answers to," \
			"comma-separated (for example ALLOWED_HOSTS=kw.example.org); without it every request" \
			"would be refused with 400 Bad Request. Nothing was started." >&2; \
		exit 2; fi
	@if [ -z "$$SECRET_KEY" ]; then \
		echo "make serve: SECRET_KEY is not set. Set it to a long random secret" \
			"(python3 -c 'import secrets; print(secrets.token_urlsafe(50))'). Nothing was started." >&2; \
		exit 2; fi

# The production server (docs/operations.md#serving-in-production): DEBUG off, SECRET_KEY and
# ALLOWED_HOSTS from the environment, gunicorn's threaded workers on HOST:PORT
# (127.0.0.1:8000 by default). Starts without re-rendering: once gunicorn listens, its
# when_ready hook runs `manage.py rerender` in the background, with progress in the log.
serve: serve-preflight install
	mkdir -p var
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	exec $(BIN)/gunicorn -c python:knowledgeweb.ops.gunicorn_conf

# Starts `make serve` on PostgreSQL and Redis when they answer (SQLite otherwise) and
# measures it under load for a bounded time (bench/load.py).
loadtest: install
	$(BIN)/python bench/load.py

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "Chromium is missing: installing Debian's package."; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo

typecheck: install
	$(BIN)/mypy

# Every test, as before, in three runs: everything that shares no process state under
# pytest-xdist; the real LightRAG tests in one process (one lightrag-server per run); the
# browser tests last, in a process of their own (Playwright's event loop, tests/conftest.py).
# The Celery tests need PostgreSQL (a database their worker processes share): pytest-postgres runs them.
pytest: install chromium
	$(BIN)/pytest $(XDIST) -m "not e2e and not real_lightrag and not celery"
	$(BIN)/pytest -m real_lightrag
	$(BIN)/pytest -m e2e

# Runs the database-dependent suites again on the scale path when its servers answer:
# PostgreSQL, and Redis as the shared cache (a database of its own, emptied by the suite).
pytest-postgres: install
	@if $(BIN)/python -c "import socket; socket.create_connection(('127.0.0.1', 5432), 2)" 2>/dev/null \
		|| [ -n "$$DATABASE_URL" ]; then \
		cache=locmem://; \
		if $(BIN)/python -c "import socket; socket.create_connection(('127.0.0.1', 6379), 2)" 2>/dev/null; then \
			cache=$(REDIS_TEST_URL); fi; \
		echo "PostgreSQL reachable: running the database suites on it (cache: $$cache)."; \
		DATABASE_URL=$${DATABASE_URL:-$(PG_TEST_URL)} CACHE_URL=$$cache $(BIN)/pytest $(XDIST) -m postgres; \
	else echo "*** No PostgreSQL server reachable on 127.0.0.1:5432: the database suites' PostgreSQL re-run"; \
		echo "*** and the Celery worker tests (tests/celery, which need PostgreSQL and Redis) did NOT run."; fi

test: lint typecheck pytest pytest-postgres

# The fast loop (README, "The fast loop"): ruff, mypy, and the unit and integration tests on SQLite
# under pytest-xdist, without the tiers (browser, real LightRAG, MCP processes, live) and the
# `slow` tests; it prints how many it ran and fails below 90% (tests/tiers.py).
test-fast: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	env -u DATABASE_URL -u CACHE_URL $(BIN)/pytest --fast $(XDIST) tests/unit tests/integration

# Builds (or verifies) the real-LightRAG tests' cache ahead, e.g. before going offline; the
# tests' own fixture does the same on first use (docs/testing.md#the-real-lightrag-server-in-the-tests).
lightrag-cache: install
	$(BIN)/python -m tests.lightrag_real.installation

# Every benchmark, then one table of every target; exits non-zero when a target is missed or
# a bench could not measure (bench/run.py).
bench: install
	$(BIN)/python bench/run.py

# The same, writing the table into docs/performance.md stamped with the commit, the date, the
# CPU count and the load average (the README's "Documentation" links to it).
bench-docs: install
	$(BIN)/python bench/run.py --write-docs docs/performance.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
