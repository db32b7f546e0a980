#!/usr/bin/env bash
# What probing Syzygy tables costs the search: a few 5- and 6-piece endgames
# (captures lead into 3- and 4-piece tables) searched to a fixed depth, one
# thread, 16 MB, without tables and with them; prints the last info line's
# nodes, nps, tbhits and time for each.
# Usage: engine-tests/tools/syzygy_nps.sh [qilin binary] [tables folder] [depth]
# By default the binary `make` builds and the 3- and 4-piece tables of
# engine-tests/syzygy (only some captures reach them; a folder of all 3-5
# piece tables shows more).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
QILIN=${1:-$ROOT/qilin}
TABLES=${2:-$ROOT/engine-tests/syzygy}
DEPTH=${3:-16}
FENS=(
  "8/5k2/8/3r4/8/2P5/4K3/3R4 w - - 0 1"
  "8/8/3k4/8/1p1P4/1P6/4K3/8 w - - 0 1"
  "6k1/5p2/8/8/8/8/5PK1/3Q4 w - - 0 1"
  "8/2k5/8/8/3N4/1B6/4K3/5r2 w - - 0 1"
  "8/8/2k5/3p4/3P4/2K1B3/8/2r5 w - - 0 1"
)
for path in "<empty>" "$TABLES"; do
  total_nodes=0 total_ms=0
  for fen in "${FENS[@]}"; do
    # End of input would stop the search: quit only after its bestmove.
    out=$(mktemp)
    {
      printf 'setoption name SyzygyPath value %s\nposition fen %s\ngo depth %s\n' "$path" "$fen" "$DEPTH"
      until grep -q '^bestmove' "$out"; do sleep 0.05; done
      echo quit
    } | "$QILIN" >"$out"
    line=$(grep '^info depth' "$out" | tail -1)
    rm -f "$out"
    nodes=$(awk '{for(i=1;i<NF;i++) if($i=="nodes") print $(i+1)}' <<<"$line")
    ms=$(awk '{for(i=1;i<NF;i++) if($i=="time") print $(i+1)}' <<<"$line")
    hits=$(awk '{for(i=1;i<NF;i++) if($i=="tbhits") print $(i+1)}' <<<"$line")
    echo "SyzygyPath=$path nodes $nodes tbhits $hits time $ms ms  $fen"
    total_nodes=$((total_nodes + nodes)) total_ms=$((total_ms + ms))
  done
  echo "SyzygyPath=$path total: $total_nodes nodes, $((total_nodes * 1000 / (total_ms > 0 ? total_ms : 1))) nps"
done
