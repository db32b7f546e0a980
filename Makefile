# Qilin. `make` builds ./qilin (or EXE=path, as OpenBench expects; on
# Windows the file is EXE.exe), `make run` starts it in UCI mode, `make test`
# runs what CI runs. `make EVALFILE=path/to/net.nnue` embeds that net
# instead of nets/qilin-net-3.nnue (build.rs checks it; a path relative to
# this folder or absolute).
EXE ?= qilin
CARGO ?= cargo
ifeq ($(OS),Windows_NT)
EXE_FILE := $(patsubst %.exe,%,$(EXE)).exe
else
EXE_FILE := $(EXE)
endif
# OpenBench runs `make CC=<the compiler it checked> EXE=… EVALFILE=…`, and for
# a Rust engine that compiler is cargo: not a C compiler, so it must not
# reach the cc crate that compiles zstd's C library.
ifneq ($(findstring cargo,$(CC)),)
unexport CC
endif
# EVALFILE needs no export: make passes a variable of its command line or
# of the environment on to cargo, and build.rs reads it there.
# The CPU to build for: `native` (this machine: popcnt, BMI2, AVX2 where it
# has them, as engines built from source do) or a portable level: x86-64,
# x86-64-v2 (popcnt), x86-64-v3 (AVX2, BMI2), x86-64-v4 (AVX-512). Every
# target (build, clippy, tests) uses the same flags, so cargo's cache stays
# valid between them; RUSTFLAGS from the environment wins over ARCH.
ARCH ?= native
RUSTFLAGS ?= -C target-cpu=$(ARCH)
export RUSTFLAGS

.PHONY: all build run test fmt-check clippy unit-and-engine-tests lab-unit lab-test clean lab-venv match spsa sprt datagen train

all: build

# rustc writes the binary to EXE itself: no `cp`, which a Windows shell
# lacks. (cargo rustc links again on each call, even when nothing changed.)
build:
	$(CARGO) rustc --release --locked --bin qilin -- --emit link=$(EXE_FILE)

# The binary as a command: a relative EXE from this folder.
EXE_COMMAND = $(if $(filter /%,$(EXE_FILE)),$(EXE_FILE),./$(EXE_FILE))

run: build
	$(EXE_COMMAND)

test: fmt-check lab-unit clippy unit-and-engine-tests

fmt-check:
	rustup component add rustfmt clippy >/dev/null 2>&1 || true
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --release --locked --all-targets -- -D warnings

unit-and-engine-tests:
	$(CARGO) test --release --locked

# The strength lab's statistics (Elo, the exact SPRT, two runs compared pair by
# pair) and the SPSA tuner's arithmetic and files: standard-library Python, a
# few seconds. `lab-test` adds match.py run against fake engines (python-chess).
lab-unit:
	$(LAB_PYTHON) -m unittest discover -s engine-tests/lab -p 'test_match_stats.py'
	$(LAB_PYTHON) -m unittest discover -s engine-tests/lab -p 'test_spsa.py'
	$(LAB_PYTHON) -m unittest discover -s engine-tests/lab -p 'test_paired.py'

lab-test: lab-venv
	$(LAB_VENV)/bin/python -m unittest discover -s engine-tests/lab -p 'test_*.py'

clean:
	$(CARGO) clean
	$(if $(wildcard $(EXE_FILE)),$(RM) $(EXE_FILE))

# Strength lab (engine-tests/lab): a private Python venv with pinned python-chess,
# and the match runner. Example:
#   make match ARGS="--engine ./qilin --opponent sf:1800 --tc 10+0.1 --games 100"
LAB_VENV ?= engine-tests/.venv
LAB_PYTHON ?= python3

lab-venv: $(LAB_VENV)/.installed

$(LAB_VENV)/.installed: engine-tests/lab/requirements.txt
	$(LAB_PYTHON) -m venv $(LAB_VENV)
	$(LAB_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r engine-tests/lab/requirements.txt
	touch $@

match: lab-venv
	$(LAB_VENV)/bin/python engine-tests/lab/match.py $(ARGS)

# SPSA tuning of the search parameters (docs/search-parameters.md); the engine
# must be a tune build, and the same command resumes a stopped run:
#   make spsa ARGS="--engine target-tune/release/qilin --iterations 2000 --pairs-per-iter 4 --concurrency 4"
spsa: lab-venv
	$(LAB_VENV)/bin/python engine-tests/lab/spsa.py $(ARGS)

# SPRT of the working tree against BASE (a binary or a git ref, default HEAD):
#   make sprt BASE=main TC=8+0.08 ELO0=0 ELO1=5
BASE ?= HEAD
TC ?= 8+0.08
ELO0 ?= 0
ELO1 ?= 5
sprt: build lab-venv
	base=$$(engine-tests/lab/build_base.sh "$(BASE)") && \
	$(LAB_VENV)/bin/python engine-tests/lab/match.py --engine $(EXE_COMMAND) --engine-name new \
	  --opponent "$$base" --opponent-name base --tc $(TC) --sprt $(ELO0) $(ELO1) --games 20000 $(ARGS)

# Self-play data and a net trained on it (docs/nnue.md, "Training a network"): a
# run folder of chunk files, then a training folder; the same command resumes
# either after a stop.
#   make datagen GAMES=8000 DATA=data/runs/my-run
#   make train DATA=data/runs/my-run NET=my-net.nnue   (then: setoption name EvalFile value my-net.nnue)
DATA ?= engine-tests/out/selfplay
GAMES ?= 8000
NODES ?= 5000
THREADS ?= 2
BOOK ?= engine-tests/books/8moves_2000.epd
SEED ?= 101
EPOCHS ?= 12
HIDDEN ?= 128
TRAIN_DIR ?= engine-tests/out/train
NET ?= engine-tests/out/net.nnue
COMMIT = $(shell git describe --always --dirty 2>/dev/null || echo unknown)
datagen: build
	$(EXE_COMMAND) datagen --out $(DATA) --games $(GAMES) --nodes $(NODES) --threads $(THREADS) --book $(BOOK) --seed $(SEED) --commit $(COMMIT)

train: build
	$(EXE_COMMAND) train --data $(DATA) --dir $(TRAIN_DIR) --out $(NET) --hidden $(HIDDEN) --mirror --epochs $(EPOCHS) --lambda 0.1 --threads $(THREADS)
