# Two commands on a fresh machine (Python 3.11, git, make):
#   make demo   - the main job on embedded defaults
#   make test   - build the environment and run every test tier
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed-stamp
DOCS_STAMP := $(VENV)/.docs-installed-stamp
PYTEST := $(PY) -m pytest -p no:cacheprovider -p no:warnings

.PHONY: venv services shellcheck lint unit functional integration test demo benchmarks config-sample docs clean

$(STAMP): requirements.txt test-requirements.txt constraints.txt setup.cfg
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -c constraints.txt -r requirements.txt -r test-requirements.txt
	$(PIP) install -q -c constraints.txt --no-deps -e .
	$(PY) tools/install-monitor-alias.py
	touch $@

venv: $(STAMP)

services:
	tools/ensure-services.sh

lint: venv
	$(VENV)/bin/ruff check .

# tests/unit/test_devstack_shellcheck.py needs shellcheck (Debian package).
shellcheck:
	@command -v shellcheck >/dev/null || \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck >/dev/null 2>&1; } || \
	  { echo "make: shellcheck is missing and 'apt-get install shellcheck' failed" >&2; exit 1; }

unit: venv services shellcheck
	$(PYTEST) tests/unit

# One pytest process per test file, two at a time (tools/test-shards.py says
# why not pytest-xdist); the slowest files are printed at the end.
functional: venv services
	$(PY) tools/test-shards.py --jobs 2 tests/functional

# Multi-process mini-cloud (tests/integration/cloud.py): own venv .venv-cloud,
# MariaDB/RabbitMQ on loopback; service logs in state/minicloud/logs.
integration: venv services
	$(PYTEST) -s tests/integration

test: lint docs unit functional integration
	@echo "make test: all tiers passed"

demo: venv
	@$(PY) tools/demo.py

benchmarks: venv
	for script in benchmarks/*.py; do $(PY) $$script || exit 1; done

config-sample: venv
	$(VENV)/bin/oslo-config-generator --config-file etc/nova-drs/nova-drs-config-generator.conf

$(DOCS_STAMP): $(STAMP) doc/requirements.txt
	$(PIP) install -q -c constraints.txt -r doc/requirements.txt
	touch $@

# The documentation site, doc/build/html/index.html (Sphinx; warnings are
# errors). -E re-reads every page: the references are generated from the code.
docs: $(DOCS_STAMP)
	$(VENV)/bin/sphinx-build -E -W --keep-going -b html doc/source doc/build/html

clean:
	rm -rf $(VENV) build *.egg-info doc/build doc/source/_generated
