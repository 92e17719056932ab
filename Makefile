# The two commands of the README. Both bootstrap themselves (scripts/bootstrap.sh) and are idempotent.
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin

.PHONY: run test bootstrap lint typecheck pytest bench clean

bootstrap:
	@scripts/bootstrap.sh

run: bootstrap
	$(BIN)/anima serve

test: bootstrap
	$(BIN)/ruff format --check src tests benchmarks examples scripts
	$(BIN)/ruff check src tests benchmarks examples scripts
	$(BIN)/mypy --strict src
	$(BIN)/pytest -q

bench: bootstrap
	$(BIN)/anima bench loop --seconds 10

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
