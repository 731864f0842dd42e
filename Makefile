# The README's two commands: `make demo` and `make test`. Both create the virtualenv on first use;
# `make install` only sets it up. PORT and HOST say where `make demo` and `make serve` listen:
#   make demo PORT=8600 HOST=127.0.0.1
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501
HOST ?= 127.0.0.1

.PHONY: install demo test serve bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit("annotator needs Python 3.11 or newer" if sys.version_info < (3, 11) else 0)'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# irrCAC (GPL, a test-time cross-check only) pins scipy==1.12 and so numpy<2, which pyarrow
# refuses; its code runs on the current scipy, so it is installed without its pins.
$(BIN)/.reference: $(BIN)/.installed
	$(BIN)/python -m pip install --quiet --no-deps 'irrCAC==0.4.4'
	touch $@

install: $(BIN)/.installed $(BIN)/.reference  ## set up .venv (the package, its test extra, irrCAC) and nothing else

demo: $(BIN)/.installed  ## the app on the embedded SQLite default, with demo data and users
	$(BIN)/annotator demo --port '$(PORT)' --host '$(HOST)'

serve: $(BIN)/.installed  ## the app on DATABASE_URL, else data/annotator.db
	$(BIN)/annotator serve --port '$(PORT)' --host '$(HOST)'

# The suite in TEST_WORKERS processes (pytest-xdist), each test file whole in one of them: the files
# share costly module fixtures (servers, browsers, databases). TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= 2
# More pytest options, e.g. make test PYTEST_ARGS='--durations=0 -k agreement'
PYTEST_ARGS ?=

test: $(BIN)/.installed $(BIN)/.reference  ## the whole test suite
	$(BIN)/python -m pytest -n '$(TEST_WORKERS)' --dist loadfile $(PYTEST_ARGS)

bench: $(BIN)/.installed
	$(BIN)/python benchmarks/baseline.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
