# Prompt Lab: the few commands a person needs. `make help` lists them.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PORT ?= 8000
# Tests run against real Postgres and Redis (the same as CI); override to point elsewhere.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/promptlab
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
# The Postgres and Redis of the tests and of the benchmarks that need both (the environment's, if set).
SERVICES_ENV = DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)}
# The version bench/bench_vs_promptfoo.py compares with, installed into the git-ignored bench/promptfoo.
PROMPTFOO_VERSION := 0.121.20

.PHONY: help install run test lint format web worker beat fake-llm bench bench-quick bench-setup clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed  ## create .venv and install everything

run: install  ## embedded mode on http://127.0.0.1:$(PORT) (SQLite, in-process worker, no Redis; PORT=8200 make run)
	$(PY) manage.py migrate --noinput
	PORT=$(PORT) $(PY) manage.py demo_setup
	$(VENV)/bin/daphne -b 127.0.0.1 -p $(PORT) promptlab.asgi:application

test: install  ## the whole test suite against Postgres and Redis
	$(SERVICES_ENV) FAST_PASSWORD_HASHING=1 \
		$(PY) -m pytest $(PYTEST_ARGS)

lint: install  ## ruff check and format check, the templates' lint (djlint), the dead-code check (vulture)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/djlint templates --lint
	$(VENV)/bin/vulture

format: install  ## apply ruff's fixes and formatting
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

web: install  ## services mode: the ASGI web process (needs DATABASE_URL, REDIS_URL)
	$(VENV)/bin/daphne -b 0.0.0.0 -p $(PORT) promptlab.asgi:application

worker: install  ## services mode: a Celery worker for both lanes (QUEUES=batch for a dedicated batch worker)
	$(VENV)/bin/celery -A promptlab worker --loglevel=INFO -Q $${QUEUES:-interactive,batch}

beat: install  ## services mode: the periodic scheduler (sweeper)
	$(VENV)/bin/celery -A promptlab beat --loglevel=INFO

fake-llm: install  ## a local fake LLM server (OpenAI, Anthropic, Gemini wire formats) on :8765
	$(PY) -m lab.fake_llm --port 8765

bench-setup:  ## install promptfoo into bench/promptfoo for the side-by-side benchmark (needs Node 20 and npm)
	npm install --prefix bench/promptfoo --no-audit --no-fund promptfoo@$(PROMPTFOO_VERSION)

bench: install  ## the benchmarks in bench/ (fan-out, scheduling, rounds end to end, reports, inbox, experiments, the response cache, against promptfoo: make bench-setup first), see docs/benchmarks.md
	REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)} $(PY) bench/bench_fanout.py $(BENCH_ARGS)
	REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)} $(PY) bench/bench_scheduling.py
	$(PY) bench/bench_rounds_e2e.py
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} $(PY) bench/bench_report.py
	$(PY) bench/bench_inbox.py
	$(SERVICES_ENV) $(PY) bench/bench_experiment.py
	$(SERVICES_ENV) $(PY) bench/bench_cache.py
	$(PY) bench/bench_vs_promptfoo.py $(BENCH_VS_ARGS)

# The rounds first: after other benchmarks their interactive figure comes out higher than alone (docs/benchmarks.md).
bench-quick: install  ## the benchmarks that guard the hot paths, about 7 minutes (rounds end to end, fan-out, the experiment command against its ideal, the report at 100,000 votes), see docs/benchmarks.md
	$(PY) bench/bench_rounds_e2e.py
	REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)} $(PY) bench/bench_fanout.py
	$(PY) bench/bench_vs_promptfoo.py --tools promptlab httpx --runs 1 --memory-calls 0
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} $(PY) bench/bench_report.py --votes 100000

clean:  ## remove the virtualenv and local database
	rm -rf $(VENV) db.sqlite3 staticfiles
