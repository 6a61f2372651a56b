# gpuops.vgpu: one entry point for the lab and for every check.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
LAB_TOPOLOGY ?= lab/topologies/default.yml
VCSIM := lab/.build/vcsim-gpu
VCSIM_SOURCES := $(shell find lab/vcenter -name '*.go')

export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.tmp/collections
export ANSIBLE_ROLES_PATH := $(CURDIR)/roles
# Guests are converged in parallel over SSH (README: Guests at fleet scale); a run's -f still wins.
export ANSIBLE_FORKS ?= 20
# podman settings for this machine's kernel, written by lab/guests/guest-image.sh (lab guests and molecule).
export CONTAINERS_CONF := $(CURDIR)/.tmp/molecule/containers.conf

.PHONY: help deps collection-link lab-build lab-up lab-down lab test lint sanity lab-tests redfish units integration molecule \
        build bench clean soak ee docs galaxy-import test-matrix

help:
	@echo "make lab        start the lab and run playbooks/site.yml on inventories/lab"
	@echo "make test       every check: lint, sanity, lab, unit, docs, Galaxy, version matrix, integration, molecule"
	@echo "make lab-up     start the lab (LAB_TOPOLOGY=<file> for another datacenter); make lab-down stops it"
	@echo "make build      build the collection tarball"
	@echo "make ee         build the execution environment image (ansible-builder, podman; no registry needed)"
	@echo "make test-matrix sanity and unit tests on ansible-core 2.16 to 2.19, the lab smoke on the oldest and newest"
	@echo "make docs       HTML docs of every module, role, filter and guide in .tmp/docs/build/html (warnings fail)"
	@echo "make soak       site.yml killed at many seeded points and run under many chaos seeds, each run to convergence"

deps: $(VENV)/.requirements.sha256 collection-link

$(VENV)/.requirements.sha256: requirements.txt tests/requirements.txt tools/bootstrap.sh
	./tools/bootstrap.sh

# Ansible finds the collection through this link; the checkout itself stays the single copy.
collection-link:
	@mkdir -p .tmp/collections/ansible_collections/gpuops
	@ln -sfn ../../../.. .tmp/collections/ansible_collections/gpuops/vgpu

lab-build: deps $(VCSIM)

$(VCSIM): $(VCSIM_SOURCES)
	@mkdir -p lab/.build .tmp/go-cache
	./tools/go.sh build -o ../.build/vcsim-gpu .

lab-up: lab-build
	$(PY) lab/labctl.py up --guests --topology $(LAB_TOPOLOGY)

lab-down:
	@if [ -x $(PY) ]; then $(PY) lab/labctl.py down; fi

# The test tree's remote_tasks callback closes the run with the seconds per layer (play) and role, and the task
# executions per guest.
lab: lab-up
	ANSIBLE_CALLBACK_PLUGINS=$(CURDIR)/tests/callback_plugins ANSIBLE_CALLBACKS_ENABLED=remote_tasks \
	  ansible-playbook -i inventories/lab playbooks/site.yml

test: deps lab-build
	./tools/test.sh

lint sanity lab-tests redfish units integration molecule: deps lab-build
	./tools/test.sh $(patsubst lab-tests,lab,$@)

# The long form of the crash, chaos and lock tests that make test runs with one seed each. A failing seed replays
# alone: GPUOPS_CRASH_SEEDS=<seed> or GPUOPS_CHAOS_SEEDS=<seed> on tests/integration/test_site_{crash,chaos}.py,
# GPUOPS_GUEST_CRASH_SEEDS=<seed> on tests/integration/test_guest_crash.py, GPUOPS_VM_CRASH_SEEDS=<seed> on
# tests/integration/test_vm_vgpu_crash.py (200 running VMs, killed inside vm_vgpu), GPUOPS_SERVERS_CRASH_SEEDS=<seed>
# on tests/integration/test_servers_crash.py (the GPU servers' first converge); test_site_layer_kills.py kills
# site.yml inside each task that takes something away (GPUOPS_LAYER_KILLS=<layer> replays one).
SOAK_CRASH_SEEDS ?= 1-6
SOAK_VM_CRASH_SEEDS ?= 1-5
SOAK_CHAOS_SEEDS ?= 1-3
SOAK_GUEST_CRASH_SEEDS ?= 1-4
SOAK_SERVERS_CRASH_SEEDS ?= 1-4
SOAK_WORKERS ?= 2
soak: deps lab-build
	@mkdir -p .tmp/soak && rm -f .tmp/soak/trials.jsonl
	GPUOPS_SOAK_LOG=$(CURDIR)/.tmp/soak/trials.jsonl GPUOPS_CRASH_SEEDS=$(SOAK_CRASH_SEEDS) \
	  GPUOPS_CHAOS_SEEDS=$(SOAK_CHAOS_SEEDS) GPUOPS_GUEST_CRASH_SEEDS=$(SOAK_GUEST_CRASH_SEEDS) \
	  GPUOPS_VM_CRASH_SEEDS=$(SOAK_VM_CRASH_SEEDS) GPUOPS_SERVERS_CRASH_SEEDS=$(SOAK_SERVERS_CRASH_SEEDS) \
	  GPUOPS_LAYER_KILLS=all \
	  pytest -q -p no:cacheprovider -n $(SOAK_WORKERS) tests/integration/test_site_crash.py \
	  tests/integration/test_site_chaos.py tests/integration/test_guest_crash.py tests/integration/test_cluster_lock.py \
	  tests/integration/test_vm_vgpu_crash.py tests/integration/test_site_layer_kills.py \
	  tests/integration/test_servers_crash.py; \
	  status=$$?; $(PY) tools/soak_summary.py .tmp/soak/trials.jsonl || status=1; exit $$status

build: deps
	ansible-galaxy collection build --force --output-path .tmp/dist .

# The execution environment (execution-environment.yml) from the project's own Debian base image.
ee: deps
	tools/ee/build.sh

docs: deps
	./tools/docs.sh

# The supported ansible-core minors, each in a virtual environment of its own (MATRIX_CORES="2.16 2.17" picks some).
test-matrix: deps lab-build
	./tools/test-matrix.sh

# Galaxy's importer on the built tarball, in a virtual environment of its own; fails on any warning.
galaxy-import: deps
	./tools/galaxy_import.sh

bench: lab-build
	$(PY) bench/run.py $(BENCH_ARGS)

clean: lab-down
	rm -rf .tmp lab/.build tests/output
