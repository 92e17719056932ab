# The two commands of the README. Both bootstrap themselves (scripts/bootstrap.sh) and are idempotent.
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
FAST_WORKERS := -n 2
# a file per worker, the slowest files first (tests/conftest.py orders them by tests/durations.json;
# xdist's own reordering, by number of tests, would undo that)
BY_FILE := --dist loadfile --no-loadscope-reorder
# the integration tier waits more than it computes (367 s of CPU in 241 s on four workers: ~115
# core-seconds idle); five: 204-223 s; six, once its CPU fell to ~290 s (the voice agent's start
# no longer synthesizes its replies nor loads Whisper twice): 177-198 s against 225 s on five.
# The model tier computes (275 s of CPU in 161 s): four.
INTEGRATION_WORKERS := -n 6
MODEL_WORKERS := -n 4

# Bytecode is kept beside the sources (scripts/bootstrap.sh compiles the installed packages once):
# make test starts a dozen pytest processes and dozens of `anima` subprocesses, and with
# PYTHONDONTWRITEBYTECODE set (as on these machines) each compiled every module it imported again:
# a worker's collection took 15-17 s of CPU instead of 7, and an `anima` process 1.4 s to import
# its runtime instead of 0.5. The same files serve an `anima` run outside make.
unexport PYTHONDONTWRITEBYTECODE
unexport PYTHONPYCACHEPREFIX

.PHONY: run test test-fast bootstrap bootstrap-run lint typecheck pytest bench clean

# what running needs (scripts/apt-run.txt, anima[all]); testing adds browsers and dev tools
bootstrap-run:
	@scripts/bootstrap.sh run

bootstrap:
	@scripts/bootstrap.sh test

run: bootstrap-run
	$(BIN)/anima serve

# lint, types and the floors, then the test tiers fastest first (tests/conftest.py: each test names
# its tier), stopping at the first step that fails; the table at the end gives each step's time.
# Workers per tier on this 2-core machine: the fast tier computes, so two (one per core; alone
# it used 50 s of CPU, on two 67 s, and about the same wall time under load); the integration
# and model tiers wait on real time (brokers, servers, browsers, subprocesses) more than they
# compute, so four or five overlap their waits (the whole suite: 685 s on two, 476 s on four;
# the integration tier's figures above), a test file per worker (its module fixtures shared);
# serial asserts wall-clock rates, so alone.
test: bootstrap
	@scripts/timed.sh --reset
	scripts/timed.sh format $(BIN)/ruff format --check src tests benchmarks examples scripts
	scripts/timed.sh lint $(BIN)/ruff check src tests benchmarks examples scripts
	scripts/timed.sh lint-imports $(BIN)/lint-imports --no-cache  # the floors: pyproject.toml's [tool.importlinter] contracts
	@# mypy (one process, ~27 s with no cache) checks beside the collection and the fast tier, not
	@# before them: their CPU overlaps on the two cores; its output follows the tier's, and any of
	@# them failing stops here. The collection of every tier, once, first: pytest rewrites each test
	@# file's asserts and caches the result beside it (__pycache__/*-pytest-*.pyc), but the workers
	@# of a tier start together and each rewrote every file of the tier itself (the integration
	@# tier's collection: 17 s of CPU cold, 10 s warm, in each of its four workers); once, ~28 s.
	@# (mypy+: a step beside the others, its wall time not added to the total)
	scripts/timed.sh mypy+ $(BIN)/mypy --strict src >$(VENV)/mypy.out 2>&1 & types=$$!; \
	  scripts/timed.sh collect $(BIN)/pytest --collect-only -q >$(VENV)/collect.out 2>&1; \
	  collected=$$?; [ $$collected = 0 ] || cat $(VENV)/collect.out; \
	  [ $$collected != 0 ] || scripts/timed.sh fast $(BIN)/pytest -q --tier fast $(FAST_WORKERS); \
	  fast=$$?; wait $$types; typed=$$?; cat $(VENV)/mypy.out; \
	  [ $$collected = 0 ] && [ $$fast = 0 ] && [ $$typed = 0 ]
	scripts/timed.sh integration $(BIN)/pytest -q --tier integration $(INTEGRATION_WORKERS) $(BY_FILE) --durations=10
	scripts/timed.sh model $(BIN)/pytest -q --tier model $(MODEL_WORKERS) $(BY_FILE) --durations=5
	scripts/timed.sh serial $(BIN)/pytest -q --tier serial --durations=5
	@scripts/timed.sh --table

# the inner loop: the fast tier alone (no lint), on a .venv made once by make test or make
# bootstrap (re-made only when missing or older than pyproject.toml: the browsers and Pollen's
# daemon are the other tiers' needs)
test-fast:
	@[ -f $(VENV)/.anima-installed-test ] && [ ! pyproject.toml -nt $(VENV)/.anima-installed-test ] \
	  || scripts/bootstrap.sh test
	$(BIN)/pytest -q --tier fast $(FAST_WORKERS)

bench: bootstrap
	$(BIN)/anima bench loop --seconds 10

clean:
	rm -rf $(VENV) .venv-reachy .mypy_cache .ruff_cache .pytest_cache .hypothesis
