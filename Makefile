# codeseam — two commands on a fresh machine:
#   make demo   set up a venv, install, index this repository, run a sample search
#   make test   set up (if needed) and run the test suite
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
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

demo: setup
	RAG_DATA_DIR=$(CURDIR)/.codeseam-demo $(BIN)/codeseam index . --repo-id codeseam
	RAG_DATA_DIR=$(CURDIR)/.codeseam-demo $(BIN)/codeseam search "where are secrets redacted before storage" --path "src/**" -k 5
	RAG_DATA_DIR=$(CURDIR)/.codeseam-demo $(BIN)/codeseam status

clean:
	rm -rf $(VENV) .codeseam-demo .pytest_cache .ruff_cache .mypy_cache
