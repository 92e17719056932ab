# The two commands of the README. Both bootstrap themselves (scripts/bootstrap.sh) and are idempotent.
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin

.PHONY: run test bootstrap bootstrap-run lint typecheck pytest bench clean

# what running needs (scripts/apt-run.txt, anima[all]); testing adds browsers and dev tools
bootstrap-run:
	@scripts/bootstrap.sh run

bootstrap:
	@scripts/bootstrap.sh test

run: bootstrap-run
	$(BIN)/anima serve

test: bootstrap
	$(BIN)/ruff format --check src tests benchmarks examples scripts
	$(BIN)/ruff check src tests benchmarks examples scripts
	$(BIN)/mypy --strict src
	$(BIN)/lint-imports --no-cache  # the floors: pyproject.toml's [tool.importlinter] contracts
	# four workers on the two cores, a test file per worker (its module fixtures shared): most
	# tests wait on real time more than they compute (issue 31), so four overlap their waits
	# (2 workers: 685 s, 4: 476 s, all passing); the slowest tests listed, to keep make test
	# under 10 minutes; then the tests that measure a rate, alone
	$(BIN)/pytest -q -n 4 --dist loadfile --durations=15 -m "not serial"
	$(BIN)/pytest -q -m serial

bench: bootstrap
	$(BIN)/anima bench loop --seconds 10

clean:
	rm -rf $(VENV) .venv-reachy .mypy_cache .ruff_cache .pytest_cache .hypothesis
