# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint docs bench load corpus clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Compiled once here: an editable install has no bytecode, and where PYTHONDONTWRITEBYTECODE is set
# every command would compile every module it imports (three times the review path's imports).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[app]'
	$(BIN)/python -m compileall -q bot checks webhooks
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	$(BIN)/python -m compileall -q bot checks webhooks
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/chart-review demo

lint: $(VENV)/.installed-test
	$(BIN)/ruff check bot checks webhooks tests bench
	$(BIN)/mypy bot checks webhooks
	$(BIN)/lint-imports  # the layers' import contracts, in .importlinter

# The generated pages of docs/ (cli, checks, config, the Action's inputs) and config.schema.json,
# from the parsers, the registry, the config's models and action.yml (bot/cli/docs_pages/).
docs: $(VENV)/.installed
	$(BIN)/python -m bot.cli.docs_pages

# Debian's docker-registry, the real OCI registry of the dependency-fetch tests
# (tests/support/oci_registry.py); CHART_REVIEW_NO_REGISTRY=1 skips those tests instead.
REGISTRY := /usr/bin/docker-registry

$(REGISTRY):
	@if [ "$${CHART_REVIEW_NO_REGISTRY:-}" = 1 ]; then \
	  echo "no $@: CHART_REVIEW_NO_REGISTRY=1, the OCI registry tests are skipped"; \
	elif command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  echo "installing docker-registry for the OCI registry tests"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker-registry; \
	else \
	  echo "no $@ and cannot apt-get install docker-registry (needs root):" \
	    "install it, or set CHART_REVIEW_NO_REGISTRY=1 to skip the OCI registry tests" >&2; \
	  exit 1; \
	fi

test: $(VENV)/.installed-test $(REGISTRY) lint
	$(BIN)/pytest -n 2

bench: $(VENV)/.installed
	$(BIN)/python bench/review_bench.py
	$(BIN)/python bench/replay_bench.py
	$(BIN)/python bench/all_charts_bench.py
	$(BIN)/python bench/dependencies_bench.py
	$(BIN)/python bench/provenance_bench.py

# The App under load and scale-out, and the Action's install and publishing (they use the fake
# GitHub from tests/, hence the test extra).
load: $(VENV)/.installed-test
	$(BIN)/python bench/webhook_load.py
	$(BIN)/python bench/workers_bench.py
	$(BIN)/python bench/action_bench.py

# The real-world corpus (bench/corpus/): needs CORPUS_DIR holding clones of bench/corpus/repos.yaml.
corpus: $(VENV)/.installed
	$(BIN)/python bench/corpus/run.py
	$(BIN)/python bench/corpus/open_prs.py

clean:
	rm -rf $(VENV) data
