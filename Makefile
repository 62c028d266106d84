# Two commands on a fresh machine (Python 3.11, git, make):
#   make demo   - the main job on embedded defaults
#   make test   - build the environment and run every test tier
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# uv installs every venv (.venv-cloud too, tests/integration/cloud.py): in a
# clean-clone `make test` pip's resolving, unpacking and byte-compiling took
# 68-73 s of CPU a venv, uv 11-17 s (2026-12-07, README figures). pip stays
# in each venv, for tests/release. No byte-code at install: see below.
UV_VERSION := 0.13.9
UV := $(abspath $(VENV))/bin/uv
UV_INSTALL := UV_LINK_MODE=copy $(UV) pip install -q
# Every process the rules start writes the byte-code of the modules it
# imports, once (machines that set PYTHONDONTWRITEBYTECODE=1 would have each
# of the run's hundreds of processes compile nova-drs, the tests and every
# module without a .pyc again, and pytest rewrite every test module again).
unexport PYTHONDONTWRITEBYTECODE
STAMP := $(VENV)/.installed-stamp
DOCS_STAMP := $(VENV)/.docs-installed-stamp
PYTEST := $(PY) -m pytest -p no:cacheprovider -p no:warnings
# The tiers' TMPDIR: a fresh directory in memory, removed afterwards (the
# tests' SQLite commits would otherwise wait on the disk; tools/in-tmpfs.sh).
IN_TMPFS := tools/in-tmpfs.sh

.PHONY: venv services shellcheck lint unit component functional integration integration-daemon \
	integration-others test waiting-tiers local-tiers \
	demo benchmarks \
	config-sample docs clean venv-2026.1 venv-2025.2 unit-2026.1 unit-2025.2 component-2026.1 \
	component-2025.2 smoke-2026.1 smoke-2025.2 older-releases \
	release-2026.1 release-2025.2 release-2026.2 deploy-check libvirt

$(STAMP): requirements.txt test-requirements.txt constraints.txt setup.cfg
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q uv==$(UV_VERSION)
	$(UV_INSTALL) --python $(PY) --upgrade pip
	$(UV_INSTALL) --python $(PY) -c constraints.txt -r requirements.txt -r test-requirements.txt
	$(UV_INSTALL) --python $(PY) -c constraints.txt --no-deps -e .
	$(PY) tools/install-monitor-alias.py
	touch $@

venv: $(STAMP)

services:
	tools/ensure-services.sh

lint: venv
	$(VENV)/bin/ruff check .

# tests/component/test_devstack_shellcheck.py needs shellcheck (Debian package).
shellcheck:
	@command -v shellcheck >/dev/null || \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck >/dev/null 2>&1; } || \
	  { echo "make: shellcheck is missing and 'apt-get install shellcheck' failed" >&2; exit 1; }

# Two pytest-xdist workers: the unit tier runs in processes eventlet has not
# patched (tests/unpatched.py), each test with its own paths. It needs no
# service and no shellcheck, systemd-analyze or sshd
# (tests/unit/tree/test_unit_isolation.py).
unit: venv
	$(IN_TMPFS) $(PYTEST) -n 2 --durations=10 tests/unit

# The real components operators run: MariaDB, PostgreSQL, Redis, RabbitMQ
# (tools/ensure-services.sh), the BMC simulators and sshd (tests/peers.py),
# shellcheck, systemd-analyze; no nova service. Two pytest-xdist workers: each
# test has its own databases, Redis group, RabbitMQ topic, ports and paths.
component: venv services shellcheck
	$(IN_TMPFS) $(PYTEST) -n 2 --durations=10 tests/component

# One pytest process per test file, two at a time (tools/test-shards.py says
# why not pytest-xdist), each forked from a process that imported nova's
# functional fixtures and ours once; the slowest files are printed at the end.
FUNCTIONAL_PRELOAD := --preload tests.functional.base --preload tests.functional.api_base \
	--preload tests.functional.daemon_support
functional: venv services
	$(IN_TMPFS) $(PY) tools/test-shards.py --jobs 2 $(FUNCTIONAL_PRELOAD) tests/functional

# Multi-process mini-clouds (tests/integration/cloud.py): own venv .venv-cloud,
# MariaDB/RabbitMQ on loopback. Two sessions at once, each on its own cloud:
# the daemon-driven scenarios (in this order: the second picks up where the
# first left its cloud; service logs in state/minicloud-daemon/logs), and
# every other file (state/minicloud/logs). They mostly wait on their clouds.
INTEGRATION_DAEMON := tests/integration/test_daemon.py tests/integration/test_daemon_failures.py
integration:
	$(MAKE) -j2 --output-sync=target integration-daemon integration-others

integration-daemon: venv services
	NOVA_DRS_CLOUD_DIR=$(CURDIR)/state/minicloud-daemon NOVA_DRS_CLOUD_NAME=nova_drs_ci_daemon \
	  $(PYTEST) -s --durations=10 $(INTEGRATION_DAEMON)

integration-others: venv services
	$(PYTEST) -s --durations=10 $(addprefix --ignore=,$(INTEGRATION_DAEMON)) tests/integration

# Lint and docs, then four lanes at once, so that both cores stay busy: the
# daemon-driven integration session; the other integration session, then the
# component tier (both mostly wait: on a mini-cloud, on services, peers and
# daemons' timeouts; the second session ends ~250 s before the first); the
# 2026.2 tiers one after the other (unit, release-2026.2: installing with
# constraints.txt changes nothing under nova, tests/release; then
# functional, the longest, which starts sooner without the component tier
# before it); the older releases' lane, whose smoke runs one file at a time.
# Every test makes its own databases, names and ports, so the lanes do not
# meet. The services and shellcheck are installed first, once: apt-get
# cannot run twice at a time.
test: lint docs services shellcheck
	$(MAKE) -j4 --output-sync=target integration-daemon waiting-tiers local-tiers \
	  older-releases
	@echo "make test: all tiers passed"

waiting-tiers:
	$(MAKE) -j1 --no-print-directory integration-others component

local-tiers:
	$(MAKE) -j1 --no-print-directory unit release-2026.2 functional

# The older releases nova-drs supports (issue 28): one venv per release,
# .venv-<release>, installed through that release's constraints file
# (openstack/requirements stable/<release> upper-constraints.txt, filtered).
# `make older-releases` (in `make test`): for each, its unit and component
# tiers (two pytest-xdist workers, as on 2026.2), its install rule and its
# functional smoke, as many at once as make's job slots allow (one after the
# other alone; under `make test` they share its -j4 slots: the 2025.2 smoke
# started before that release's unit tier in the runs of 2026-12-07); the
# smoke two files at a time, as the functional tier: one at a time, the smokes
# took 293 s and 264 s for ~110 s of CPU each in a clean-clone run, and the
# lane ended last (2026-12-07 morning, README figures).
RELEASES := 2026.1 2025.2
older-releases:
	@for release in $(RELEASES); do \
	  $(MAKE) --no-print-directory unit-$$release component-$$release \
	    release-$$release smoke-$$release || exit 1; \
	done
# The smoke tier on an older release: the scheduler plugins with per-aggregate
# overcommit, the API extension under nova's paste pipeline, one daemon cycle
# that consolidates and suspends, the compute monitor loading.
SMOKE_FILES := tests/functional/test_scheduler_overcommit.py \
	tests/functional/test_api_hosts.py \
	tests/functional/test_daemon_cycle.py \
	tests/functional/test_resources_pipeline.py

.venv-%/.installed-stamp: requirements.txt test-requirements.txt constraints-%.txt setup.cfg | $(STAMP)
	$(PYTHON) -m venv .venv-$*
	$(UV_INSTALL) --python .venv-$*/bin/python --upgrade pip
	$(UV_INSTALL) --python .venv-$*/bin/python -c constraints-$*.txt -r requirements.txt \
	  -r test-requirements.txt
	$(UV_INSTALL) --python .venv-$*/bin/python -c constraints-$*.txt --no-deps -e .
	.venv-$*/bin/python tools/install-monitor-alias.py
	touch $@

$(addprefix venv-,$(RELEASES)): venv-%: .venv-%/.installed-stamp

$(addprefix unit-,$(RELEASES)): unit-%: .venv-%/.installed-stamp
	$(IN_TMPFS) .venv-$*/bin/python -m pytest -p no:cacheprovider -p no:warnings -q -n 2 tests/unit

$(addprefix component-,$(RELEASES)): component-%: .venv-%/.installed-stamp services shellcheck
	$(IN_TMPFS) .venv-$*/bin/python -m pytest -p no:cacheprovider -p no:warnings -q -n 2 tests/component

$(addprefix smoke-,$(RELEASES)): smoke-%: .venv-%/.installed-stamp services
	$(IN_TMPFS) .venv-$*/bin/python tools/test-shards.py --jobs 2 $(FUNCTIONAL_PRELOAD) \
	  $(SMOKE_FILES)

# The install rule: installing nova-drs with the host release's constraints
# never changes the installed nova or its libraries (tests/release/).
# The constraints file is the installed nova's release's.
$(addprefix release-,$(RELEASES)): release-%: .venv-%/.installed-stamp
	.venv-$*/bin/python -m pytest -p no:cacheprovider -p no:warnings -q tests/release
release-2026.2: venv
	$(PYTEST) -q tests/release

# The deployment recipes of deploy/ (kolla, OpenStack-Ansible, openstack-helm),
# tried as far as this machine allows: ansible-core and kolla-ansible go into
# a throwaway venv under pytest's tmp dir (deploy/README.md). Not in `make test`.
deploy-check: venv
	$(PYTEST) -q tests/deploy

# Real libvirt hosts (libvirtd 9, QEMU 7 under TCG) in network, mount, UTS and
# cgroup namespaces on this machine (tests/libvirt/hosts.py): a running guest
# live-migrates between two of them with its disk, with virsh alone
# (test_live_migration.py); then the mini-cloud's control plane (own databases
# nova_drs_lv_*, vhost and state dir, beside the integration tier's) with one
# nova-compute running nova's libvirt driver per host (nova_hosts.py): a
# server moves through nova's API and through nova-loadbalancer's suspend_host
# with the guest alive (test_nova_live_migration.py); the daemon's own
# consolidate -> suspend -> wake -> rebalance from the guests' measured burn
# (test_nova_loadbalancer_cycle.py). Needs root, MariaDB and RabbitMQ;
# tools/ensure-libvirt.sh installs the Debian packages, libvirt-python goes
# into .venv-cloud. Not in `make test`: its 6-8 minutes exceed the budget.
libvirt: venv services
	tools/ensure-libvirt.sh
	$(IN_TMPFS) $(PYTEST) -s tests/libvirt

demo: venv
	@$(PY) tools/demo.py

benchmarks: venv
	for script in benchmarks/*.py; do $(PY) $$script || exit 1; done

config-sample: venv
	$(VENV)/bin/oslo-config-generator --config-file etc/nova-drs/nova-drs-config-generator.conf

$(DOCS_STAMP): $(STAMP) doc/requirements.txt
	$(UV_INSTALL) --python $(PY) -c constraints.txt -r doc/requirements.txt
	touch $@

# The documentation site, doc/build/html/index.html (Sphinx; warnings are
# errors). -E re-reads every page: the references are generated from the code.
docs: $(DOCS_STAMP)
	$(VENV)/bin/sphinx-build -E -W --keep-going -b html doc/source doc/build/html

clean:
	rm -rf $(VENV) $(addprefix .venv-,$(RELEASES)) build *.egg-info doc/build doc/source/_generated
