# codeseam — two commands on a fresh machine:
#   make demo   install codeseam into its own lean venv (no torch), index this repository's
#               source, search it at once, and show the vectors arriving behind
#   make test   set up the test stack (if needed) and run the test suite
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_VENV ?= .venv-demo
DEMO := RAG_DATA_DIR=$(CURDIR)/.codeseam-demo $(DEMO_VENV)/bin/codeseam
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup test test-fast demo bench clean

$(BIN)/codeseam: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade "pip>=24"
	# the tests compare the torch-free ONNX graph with torch, so the dev venv has the st extra:
	# torch first, pinned to the CPU build (a loose requirement pulls a CUDA build)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,st]'
	@touch $@

setup: $(BIN)/codeseam

test: setup
	$(BIN)/pytest -q

test-fast: setup
	$(BIN)/pytest -q -m "not slow and not integration"

# the demo's venv is what a user installs (`pip install .`: no torch, no test tools)
$(DEMO_VENV)/bin/codeseam: pyproject.toml
	$(PY) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/pip install -q --upgrade "pip>=24"
	$(DEMO_VENV)/bin/pip install -q .
	@touch $@

demo: $(DEMO_VENV)/bin/codeseam
	@echo "== codeseam index src: returns once every file is searchable by keyword"
	$(DEMO) index src --repo-id codeseam
	@echo "== a search right away (keyword hits now; dense hits join as the vectors arrive)"
	$(DEMO) search "where are secrets redacted before storage" -k 5
	@echo "== the vectors arriving, written by the background server that holds the index"
	@for i in 1 2 3; do sleep 10; $(DEMO) status | grep -i -E "vector|chunks" | head -2; done
	@echo "== done. Run codeseam yourself on the demo's index:"
	@echo "   RAG_DATA_DIR=$(CURDIR)/.codeseam-demo $(DEMO_VENV)/bin/codeseam search \"your question\""
	@echo "   (or: source $(DEMO_VENV)/bin/activate; the index is in ./.codeseam-demo;"
	@echo "    the background server stops by itself when idle, or with: codeseam stop)"

clean:
	rm -rf $(VENV) $(DEMO_VENV) .codeseam-demo .pytest_cache .ruff_cache .mypy_cache
