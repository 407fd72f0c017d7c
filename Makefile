# The README's two commands, `make run` and `make test`, each set up .venv by themselves: `make run`
# only what running needs (the package's dependencies), `make test` the test and proof toolchain too.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV     := $(BIN)/uv
STAMP  := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
HYPOTHESIS_PROFILE ?= ci
# pytest processes for `make unit` (pytest-xdist); every run is derandomized, so the split does not change a verdict
TEST_WORKERS ?= 2
export HYPOTHESIS_PROFILE

.PHONY: setup run-setup run vectors-bundle test typecheck unit proofs proofs-deep explore-deep explore-million mutation mutation-vectors bench bench-compare bench-process bench-workspace fault-hunt thorough thorough-long conform-harness fuzz fuzz-harness clean

## setup: .venv with the package (editable), the plot extra and the test and proof toolchain (what make test uses)
setup: $(STAMP)

## run-setup: .venv with the package (editable) and its runtime dependencies only (what make run uses)
run-setup: $(RUN_STAMP)

# uv installs what pip would (the same ranges from the same index) in about 15 s where pip took 44 s: setup is part of
# CI's 10 minutes. The venv keeps its own pip, which tests/test_wheel.py builds and installs the wheel with.
$(UV):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet 'uv>=0.9,<1'

# Both stamps install into the one .venv: after make test, make run finds everything there already.
$(RUN_STAMP): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(BIN)/python -e .
	$(BIN)/python -m compileall -q model/prefix_model
	touch $@

# uv writes no bytecode unless asked (both stamps ask), and the editable model lives outside site-packages, which is
# all --compile-bytecode compiles: compileall writes the model's own .pyc, so a start reads bytecode as one from a
# wheel does, even where PYTHONDONTWRITEBYTECODE keeps Python from writing it (bench/startup_bench.py).
$(STAMP): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]'
	$(BIN)/python -m compileall -q model/prefix_model
	touch $@

## run: the loop scenario (log, requests, properties), the faulty-variant catalogue, the design review (short), a reconstruction
run: run-setup
	$(BIN)/prefix-model demo
	$(BIN)/prefix-model variants
	$(BIN)/prefix-model review --short
	$(BIN)/prefix-model request --example --turn 1 --step 2
	$(BIN)/prefix-model check --example

## vectors-bundle: the conformance vectors, their README and the specification as dist/session-prefix-vectors-<version>.tar.gz
## (the same bytes from the same commit)
vectors-bundle: run-setup
	mkdir -p dist
	$(BIN)/prefix-model vectors --bundle dist

## test: mypy --strict, the pytest suite, then the CrossHair proofs; fails if any fails
test: typecheck unit proofs

typecheck: setup
	$(BIN)/mypy --strict model tests proofs bench

unit: setup
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup

## proofs: CrossHair at a budget of paths per condition: the same verdict on a busy or an idle machine
proofs: setup
	$(BIN)/python proofs/run.py

## proofs-deep: CrossHair at CPU seconds per condition: searches further; load-dependent, not part of test
proofs-deep: setup
	$(BIN)/python proofs/run.py --deep

## explore-deep: the bounded exploration of the loop at the deep bound of proofs/explore-counts.json (contracts off; not part of test)
explore-deep: setup
	$(BIN)/python proofs/explore_counts.py --check deep

## explore-million: the bound of proofs/explore-counts.json past 10^6 states (depth 10), on 2 processes (about 10 minutes; not part of test)
explore-million: setup
	$(BIN)/python proofs/explore_counts.py --check million --jobs 2

## mutation: AST mutants of each module of MODULES against its own tests (not part of test; resumable, .mutation/)
MODULES ?= core/json_values.py core/events.py core/surface.py core/log.py core/derive.py core/headers.py core/request_log.py core/requests.py core/fork.py
MUTATION_JOBS ?= 2
# MUTATION_SAMPLE=N judges 1 mutant in N of each module (a fixed selection; its score says "sample")
MUTATION_SAMPLE ?= 1
mutation: setup
	$(BIN)/python proofs/mutation.py --jobs $(MUTATION_JOBS) --sample $(MUTATION_SAMPLE) $(MODULES)

## mutation-vectors: the vectors' score: the mutants of MODULES their tests kill, against the published vectors (contracts off)
mutation-vectors: setup
	$(BIN)/python proofs/mutation.py --against vectors --jobs $(MUTATION_JOBS) --sample $(MUTATION_SAMPLE) $(MODULES)

## thorough: the loop machine and the faulty variants through it, larger than make test, in a stated time (below)
# The budget: the loop machine runs 4 chunks (a test each) of 50 examples of 40 steps, seeded, and each of the 22 faulty
# variants runs until the machine rejects it, its counterexample shrunk for at most 10 s (tests/loop_machine.py).
# Every run is derandomized: the same examples, the same time. Measured on 2 cores shared with other jobs (load about 4):
# make thorough 679 s, 178 tests (414 s, 196 tests, on an idle machine at 58528ce); the machine's worker is the longest (its chunks 60 to 229 s, 466 s for its module alone
# on one process), the variants 14 to 133 s each. Stated: under 15 minutes on 2 cores; THOROUGH_LIMIT (seconds) stops a
# run that overruns it twice. -vv prints a line as each test ends, --durations the slowest.
THOROUGH_SET   := tests/loop/test_loop_stateful.py tests/loop/test_variants_machine.py tests/loop/test_loop.py tests/loop/test_properties.py
THOROUGH_LIMIT ?= 1800
thorough: setup
	HYPOTHESIS_PROFILE=thorough timeout $(THOROUGH_LIMIT) $(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup -vv --durations=15 $(THOROUGH_SET)

## thorough-long: the same set at the old sizes, with no time bound: the machine 1000 examples of 60 steps (one test, past
## 10 minutes on 2 loaded cores and 40 reported), variants shrunk for 20 s; a random seed each run (printed on a failure)
thorough-long: setup
	HYPOTHESIS_PROFILE=thorough-long $(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup -vv --durations=15 $(THOROUGH_SET)

## bench: check throughput against json.loads and its growth with size, and with the nodes two whole-surface compactions shadow,
## contracts off as the installed command runs (not a test; prints figures)
bench: setup
	$(BIN)/python bench/check_bench.py --sizes 10000,100000
	PREFIX_MODEL_CONTRACTS=0 $(BIN)/python bench/check_bench.py --shape compactions --sizes 5000,10000,20000,40000 --repeat 3
	$(BIN)/python bench/startup_bench.py

## bench-process: issue 35's figure, start-up included: CPU of a whole `prefix-model check LOG --requests CAPTURE` process
## against a whole `python -c` json.loads loop over both files, interleaved (ROUNDS; SIZES; SHAPE=compactions SIZES=40000)
bench-process: setup
	$(BIN)/python bench/process_bench.py --sizes $(SIZES) --rounds $(ROUNDS) --shape $(SHAPE)

## fault-hunt: where a 300-script campaign first finds each catalogued realistic fault (the generator's power; about 3 minutes)
fault-hunt: setup
	$(BIN)/python bench/fault_hunt.py --scripts 300 --seed 0

## bench-workspace: check over a generated workspace of SESSIONS sessions (harness layout, captures paired by name),
## --jobs 1 against 2: sessions/s and events/s, medians of interleaved runs (not a test; prints figures)
SESSIONS ?= 3000
bench-workspace: setup
	$(BIN)/python bench/workspace_bench.py --sessions $(SESSIONS) --jobs 1,2 --rounds 3

## bench-compare: check ÷ parse of BASE against HEAD, interleaved in one run on the same files (issue 12's 10 % bound);
## SHAPE=compactions SIZES=5000,10000,20000,40000 for the large-compaction session
BASE   ?= f50cf04
HEAD   ?= HEAD
SIZES  ?= 10000,100000,1000000
ROUNDS ?= 3
SHAPE  ?= turns
bench-compare: setup
	$(BIN)/python bench/compare_bench.py --base $(BASE) --head $(HEAD) --sizes $(SIZES) --rounds $(ROUNDS) --shape $(SHAPE)

## fuzz: a campaign of the model's own adapter against the model (FUZZ_SECONDS, default 60; 2 adapter processes)
FUZZ_SECONDS ?= 60
FUZZ_SCRIPTS ?= 2000
fuzz: setup
	$(BIN)/prefix-model fuzz --adapter '$(BIN)/prefix-model adapter' --seconds $(FUZZ_SECONDS) --jobs 2 --keep-going

## fuzz-harness: a campaign through the real deepseek-harness loop (HARNESS_DIR: a built checkout; Node >= 22 on PATH), its known
## divergences declared; FUZZ_SCRIPTS=2000 take about 3 minutes on 2 cores (12 scripts/s measured at 9f76fe4, before shrinking)
fuzz-harness: setup
	@test -n "$(HARNESS_DIR)" || { echo "make fuzz-harness: set HARNESS_DIR to a built deepseek-harness checkout (adapters/deepseek-harness/README.md)" >&2; exit 2; }
	HARNESS_DIR="$(HARNESS_DIR)" PREFIX_MODEL_CONTRACTS=0 $(BIN)/prefix-model fuzz --adapter '$(CURDIR)/adapters/deepseek-harness/run.sh' --timeout 20 \
		--scripts $(FUZZ_SCRIPTS) --keep-going --baseline '$(CURDIR)/adapters/deepseek-harness/baseline.json' --save fuzz-found

## conform-harness: the vectors through the real deepseek-harness loop (HARNESS_DIR: a built checkout; Node >= 22 on PATH)
conform-harness: setup
	@test -n "$(HARNESS_DIR)" || { echo "make conform-harness: set HARNESS_DIR to a built deepseek-harness checkout (adapters/deepseek-harness/README.md)" >&2; exit 2; }
	HARNESS_DIR="$(HARNESS_DIR)" $(BIN)/prefix-model conform --adapter '$(CURDIR)/adapters/deepseek-harness/run.sh' --timeout 20

clean:
	rm -rf $(VENV) .hypothesis .mypy_cache
