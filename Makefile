# Self-documenting targets, django-oscar style: a target followed by "## text" is listed by `make help`.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.requirements-stamp
PORT ?= 8000

.DEFAULT_GOAL := help
.PHONY: help venv lock run test mutation mutation-guards mutation-hand docs lint format check worker beat smoke restore-drill clean

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## .*$$' $(MAKEFILE_LIST) | sort \
		| awk 'BEGIN {FS = ":.*?## "}; {printf "\033[36m%-10s\033[0m %s\n", $$1, $$2}'

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required (set PYTHON=python3.11).")'
	$(PYTHON) -m venv $(VENV)

# Reinstall only when a lock file changes; --require-hashes installs exactly the files the lock names.
$(STAMP): requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.txt
	@touch $@

venv: $(STAMP) ## Create .venv and install the lock requirements-dev.txt (only when it changed)

# pip-compile's options (hashes, no index written) are in pyproject.toml. UPGRADE=name moves one package, UPGRADE=all
# moves every package to its newest release within the ranges of the .in files.
LOCK_UPGRADE = $(if $(filter all,$(UPGRADE)),--upgrade,$(if $(UPGRADE),--upgrade-package $(UPGRADE)))
lock: $(STAMP) ## Compile requirements*.in into the lock files requirements*.txt (UPGRADE=package to move one, UPGRADE=all)
	$(BIN)/pip-compile --quiet $(LOCK_UPGRADE) -o requirements.txt requirements.in
	$(BIN)/pip-compile --quiet $(LOCK_UPGRADE) -o requirements-dev.txt requirements-dev.in

run: export DEBUG = 1
run: $(STAMP) ## Migrate, seed the demo and serve on 127.0.0.1:$PORT (default 8000), DEBUG on
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo
	$(BIN)/python manage.py create_signing_key --demo
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# pytest-xdist: one worker per core (TEST_WORKERS=0 runs in one process); each worker has its own test database.
# --dist loadgroup: tests are dealt one by one (the longest files split across workers), except a file marked
# xdist_group, which one worker runs whole (tests/ops/test_db_roles.py: its role is cluster-wide).
TEST_WORKERS ?= auto
test: $(STAMP) ## Run the test suite on every core (SQLite; PostgreSQL, Celery and browser tests skip with a reason)
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

mutation: $(STAMP) ## Mutation testing of the rule modules (MODULE=tables/games/rules.py for one): kill ratio, survivors
	$(BIN)/python tools/mutation.py $(MODULE)

mutation-guards: $(STAMP) ## Weaken each SQL guard one at a time (ONLY=text to select), show a guard test fails for each
	$(BIN)/python tools/guard_mutation.py --only "$(ONLY)"

mutation-hand: $(STAMP) ## Plausible bugs written by hand (ONLY=A3,B2 for some, AGAIN=1 for all): each must fail a test
	$(BIN)/python tools/hand_mutations.py $(if $(ONLY),--only $(ONLY)) $(if $(AGAIN),--again)

# NO_MKDOCS_2_WARNING: mkdocs-material's end-of-life banner, which is no warning of this site.
docs: $(STAMP) ## Build the documentation site (mkdocs, --strict) into site/
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d site

lint: $(STAMP) ## Check formatting, lint with ruff, and the layering with lint-imports
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

format: $(STAMP) ## Format the code and sort imports with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix --select I .

check: export DEBUG = 1
check: $(STAMP) ## Django system checks and no missing migrations
	$(BIN)/python manage.py check
	$(BIN)/python manage.py makemigrations --check --dry-run

worker: $(STAMP) ## Start a Celery worker (needs CELERY_BROKER_URL)
	$(BIN)/celery -A casino worker --loglevel=INFO

beat: $(STAMP) ## Start Celery beat, which schedules the nightly approval check (needs CELERY_BROKER_URL)
	$(BIN)/celery -A casino beat --loglevel=INFO

# Needs PostgreSQL on 127.0.0.1:5432 (user postgres; a database and two roles of its own, dropped after) and Debian's
# redis-server (a throwaway one, with a password, on a free port).
smoke: $(STAMP) ## Production smoke test: the stack as docker-compose.yml configures it, natively, end to end
	$(BIN)/python tools/prod_smoke.py

# A throwaway PostgreSQL cluster of its own (initdb on a free port under a temporary folder, run as the postgres OS
# user when started as root): never the machine's server.
restore-drill: $(STAMP) ## Back up, lose the database, restore it to a point in time, prove the casino intact (RPO/RTO)
	$(BIN)/python -m tools.restore_drill

clean: ## Remove caches and collected static files (keeps .venv and db.sqlite3)
	rm -rf .pytest_cache .ruff_cache .hypothesis staticfiles mutants .mutation
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +
