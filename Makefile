# Qilin. `make` builds ./qilin (or EXE=path, as OpenBench expects),
# `make run` starts it in UCI mode, `make test` runs what CI runs.
EXE ?= qilin
CARGO ?= cargo
RUSTFLAGS_NATIVE ?=

.PHONY: all build run test fmt-check clippy unit-and-engine-tests clean

all: build

build:
	$(CARGO) build --release --locked
	cp target/release/qilin $(EXE)

run: build
	$(if $(filter /%,$(EXE)),$(EXE),./$(EXE))

test: fmt-check clippy unit-and-engine-tests

fmt-check:
	rustup component add rustfmt clippy >/dev/null 2>&1 || true
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --release --locked --all-targets -- -D warnings

unit-and-engine-tests:
	$(CARGO) test --release --locked

clean:
	$(CARGO) clean
	rm -f qilin
