# Morris Arena: `make demo` runs the demo tournament, `make test` type-checks the package
# (mypy, configured in pyproject.toml) and runs the test suite (which checks the import layers).
# Both create .venv on first use and install the package into it.
SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
BASE   := $(VENV)/.base
# pip warns once per package about index folders of the machine's own pip configuration that
# do not exist (not the project's); those lines alone are dropped, pip's status is kept
PIP    := set -o pipefail; $(BIN)/python -m pip
QUIET  := 2>&1 | { grep -v "^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$$" || true; }
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

# the package and what a tournament needs (the demo); the extras for the tests on top
$(BASE): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "pip install --upgrade pip; pip install -e . (into $(VENV))"
	@$(PIP) install --quiet --upgrade pip $(QUIET)
	@$(PIP) install --quiet -e . $(QUIET)
	$(BIN)/python -m compileall -q arena bots >/dev/null
	touch $(BASE)

$(STAMP): $(BASE)
	@echo "pip install -e '.[test,cluster,server,rl]' (into $(VENV))"
	@$(PIP) install --quiet -e '.[test,cluster,server,rl]' $(QUIET)
	touch $(STAMP)

# The demo includes bots/c-first, a C bot compiled by its `build:` step; where no C compiler
# is installed it runs a copy of demo.yaml without that bot (same name: results/demo).
demo: $(BASE)
ifneq ($(shell command -v cc),)
	$(BIN)/arena run tournaments/demo.yaml
else
	@echo "no C compiler (cc) here: the demo runs without bots/c-first"
	sed '/bots\/c-first/d' tournaments/demo.yaml > results/demo-without-cc.yaml
	$(BIN)/arena run results/demo-without-cc.yaml
endif

# The tests run in one process per core (pytest-xdist), a test file per process at a time
# (--dist loadfile: a file's module fixtures, such as a played tournament, are made once).
# Most tests wait on bot subprocesses; every test is written to pass on a loaded machine.
test: $(STAMP)
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -q -n auto --dist loadfile

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info
