# `make test` and `make demo` each create .venv with Python 3.12 and install bayeval if needed.
PYTHON ?= python3.12
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# pytensor's compiled C code is cached inside the repo (ignored by git) and reused across runs.
export PYTENSOR_FLAGS := base_compiledir=$(CURDIR)/.cache/pytensor
export MPLBACKEND := Agg

# Label Studio, for the test that round-trips a session through a real server: its own venv,
# since it pins numpy, pandas and Django versions of its own.
LABEL_STUDIO_VENV := .venv-label-studio
LABEL_STUDIO_STAMP := $(LABEL_STUDIO_VENV)/.installed
export BAYEVAL_LABEL_STUDIO := $(CURDIR)/$(LABEL_STUDIO_VENV)/bin/label-studio

.PHONY: test demo lint clean chromium docs

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

$(LABEL_STUDIO_STAMP):
	@test -x $(LABEL_STUDIO_VENV)/bin/python || $(PYTHON) -m venv $(LABEL_STUDIO_VENV)
	$(LABEL_STUDIO_VENV)/bin/python -m pip install --quiet label-studio==1.23.2
	@touch $(LABEL_STUDIO_STAMP)

# Debian's chromium for the notebook widget's browser tests: apt, as root (Playwright never
# downloads a browser here). Without it the browser tests skip, and fail under CI=true.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
		apt-get install -y -qq --no-install-recommends chromium >/dev/null; } || \
		echo "no chromium: the browser tests will skip (and fail under CI=true)"

lint: $(STAMP)
	$(BIN)/ruff check bayeval tests benchmarks scripts docs
	$(BIN)/ruff format --check bayeval tests benchmarks scripts docs
	$(BIN)/lint-imports

# The three installs are independent and run side by side (on a fresh checkout this saves about
# two minutes), then the lint, then the tests: one worker per core (pytest-xdist; a module's
# tests and fixtures stay on one worker), each on one BLAS thread so that the workers do not
# oversubscribe the cores.
test: export OPENBLAS_NUM_THREADS = 1
test: export OMP_NUM_THREADS = 1
test:
	@$(MAKE) --no-print-directory -j3 $(STAMP) $(LABEL_STUDIO_STAMP) chromium
	@$(MAKE) --no-print-directory lint
	$(BIN)/python -m pytest tests bayeval notebooks --nbmake -p no:cacheprovider --durations=30 \
		-n auto --dist loadscope

# The documentation (Sphinx, pydata-sphinx-theme, numpydoc, the notebooks through myst-nb with
# their saved outputs, a gallery of plots), warnings as errors; open docs/_build/html/index.html.
docs: $(STAMP)
	$(BIN)/python -m sphinx -E -W --keep-going -b html docs docs/_build/html

# Label 1,000 of the 499,500 FEBRL record pairs with AIS (the truth as oracle); `bayeval demo` is
# the earlier walk-through (intervals from a fixed stratified sample).
demo: $(STAMP)
	$(BIN)/bayeval evaluate --pool febrl --measure f1 --budget 1000 --sampler ais

clean:
	rm -rf $(VENV) $(LABEL_STUDIO_VENV) .cache build *.egg-info docs/_build docs/generated
