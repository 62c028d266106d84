# Two commands on a fresh machine (Python 3.11, git, make):
#   make demo   - the main job on embedded defaults
#   make test   - build the environment and run every test tier
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed-stamp
PYTEST := $(PY) -m pytest -p no:cacheprovider -p no:warnings

.PHONY: venv services lint unit functional test demo benchmarks config-sample clean

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

unit: venv services
	$(PYTEST) tests/unit

functional: venv services
	$(PYTEST) tests/functional

test: lint unit functional
	@echo "make test: all tiers passed"

demo: venv
	$(PY) tools/demo.py

benchmarks: venv
	for script in benchmarks/*.py; do $(PY) $$script || exit 1; done

config-sample: venv
	$(VENV)/bin/oslo-config-generator --namespace nova_drs --output-file etc/nova-drs/nova-drs.conf.sample

clean:
	rm -rf $(VENV) build *.egg-info
