#!/usr/bin/env bash
# Startpos perft 6 side by side: Qilin with 1 and 2 threads against
# Stockfish 15.1 (`go perft 6`, which is single-threaded), in one hyperfine run.
# Usage: engine-tests/tools/perft_speed.sh [qilin binary] [depth]
set -euo pipefail
QILIN=${1:-./qilin}
DEPTH=${2:-6}
SF=${STOCKFISH:-$(command -v stockfish || echo /usr/games/stockfish)}
hyperfine --warmup 1 --runs "${RUNS:-5}" --export-markdown "${OUT:-/dev/stdout}" \
  -n "qilin-1t" "$QILIN perft $DEPTH --threads 1" \
  -n "qilin-2t" "$QILIN perft $DEPTH --threads 2" \
  -n "stockfish-15.1" "printf 'go perft $DEPTH\nquit\n' | $SF"
