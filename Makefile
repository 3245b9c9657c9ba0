# `make test` and `make demo` each create .venv with Python 3.12 and install bayeval if needed.
PYTHON ?= python3.12
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# pytensor's compiled C code is cached inside the repo (ignored by git) and reused across runs.
export PYTENSOR_FLAGS := base_compiledir=$(CURDIR)/.cache/pytensor
export MPLBACKEND := Agg

.PHONY: test demo lint clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check bayeval tests benchmarks scripts
	$(BIN)/ruff format --check bayeval tests benchmarks scripts
	$(BIN)/lint-imports

# One worker per core (pytest-xdist; a module's tests and fixtures stay on one worker), each on
# one BLAS thread so that the workers do not oversubscribe the cores.
test: export OPENBLAS_NUM_THREADS = 1
test: export OMP_NUM_THREADS = 1
test: lint
	$(BIN)/python -m pytest tests bayeval notebooks --nbmake -p no:cacheprovider --durations=30 \
		-n auto --dist loadscope

# Label 1,000 of the 499,500 FEBRL record pairs with AIS (the truth as oracle); `bayeval demo` is
# the earlier walk-through (intervals from a fixed stratified sample).
demo: $(STAMP)
	$(BIN)/bayeval evaluate --pool febrl --measure f1 --budget 1000 --sampler ais

clean:
	rm -rf $(VENV) .cache build *.egg-info
