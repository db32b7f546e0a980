#!/usr/bin/env bash
# Soak run: Qilin against itself (or a second binary) for many games, looking for
# time forfeits, illegal moves, crashes/disconnects and stalls. Not part of `make test`.
#
# Uses cutechess-cli when found ($CUTECHESS, then PATH), otherwise the lab runner engine-tests/lab/match.py (which cannot ponder).
# Every setting (threads x ponder) is one match; after each, a one-line summary:
#   games N  forfeits F  illegal I  crashes C  stalls S  lowest-clock-left Xms
# Exit status: 0 clean, 1 a forfeit/illegal move/crash/stall (or an incomplete match),
# 2 usage or setup error. Run `engine-tests/soak.sh --help` for the options.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: engine-tests/soak.sh [options]          (each option also as an env var)

  -e, --engine PATH       engine binary                    ENGINE       ./qilin
      --opponent PATH     second binary (default: ENGINE)  OPPONENT
  -n, --games N           games per setting (even)         GAMES        1000
  -t, --tc TC             cutechess tc, BASE[+INC] seconds TC           10+0.1
                          or MOVES/BASE[+INC]
      --threads LIST      Threads, e.g. 1 or 1,2           THREADS      1
      --ponder LIST       off, on or off,on                PONDER       off
      --hash MB           Hash                             HASH         16
      --syzygy DIR        SyzygyPath for both sides, e.g.  SYZYGY       (none: no tables)
                          engine-tests/syzygy (the repository's 3-4-piece tables)
  -c, --concurrency N     games at once                    CONCURRENCY  2
  -b, --book FILE         EPD openings                     BOOK         engine-tests/books/8moves_2000.epd
  -o, --out DIR           output folder                    OUT          engine-tests/out/soak
      --seed N            opening order seed (random)      SEED
      --runner R          auto, cutechess or lab           RUNNER       auto
                          (lab: engine-tests/lab/match.py with LAB_PY, default
                          engine-tests/.venv/bin/python from `make lab-venv`; no pondering)
      --debug             log all UCI traffic (cutechess -debug all / lab --uci-log)
                          and count "info string error" lines           DEBUG=1
                          (big: about 300 KB per game at 1+0.01)
      --strict            also fail on runner warnings, engine stderr output
                          and "info string error" lines                  STRICT=1
      --summarise PGN [LOG]  only summarise an existing cutechess PGN (and log)
  -h, --help

A setting is one (threads, ponder) pair; with --threads 1,2 --ponder off,on four matches
are played. Files go to OUT/<date-time>/<setting>.{pgn,log,stderr}.
The book default is in the repository (engine-tests/books); paths are taken from the
repository's root.

Lowest clock left: the least time a side had left just after a move, before its
increment (its margin against a time forfeit). From cutechess it is replayed from the
time used per move in the PGN comments ({+0.25/12 0.12s}); cutechess rounds those to
1 ms under 0.1 s, 10 ms under 1 s and 100 ms under 10 s, so it is approximate with longer
moves: the summary gives the most the rounding can hide (± ms, summed over that side's
moves). Clocks start at base + increment, as cutechess starts them. With --debug the
exact minimum of the wtime/btime sent with `go` (clock at the start of a move, increment
included) is printed as well.
EOF
}

die() { echo "soak.sh: $*" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

ENGINE=${ENGINE:-./qilin}
OPPONENT=${OPPONENT:-}
GAMES=${GAMES:-1000}
TC=${TC:-10+0.1}
THREADS=${THREADS:-1}
PONDER=${PONDER:-off}
HASH=${HASH:-16}
SYZYGY=${SYZYGY:-}
CONCURRENCY=${CONCURRENCY:-2}
BOOK=${BOOK:-engine-tests/books/8moves_2000.epd}
OUT=${OUT:-engine-tests/out/soak}
SEED=${SEED:-}
RUNNER=${RUNNER:-auto}
DEBUG=${DEBUG:-0}
STRICT=${STRICT:-0}
SUMMARISE_PGN=
SUMMARISE_LOG=

need() { [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
    case $1 in
        -e|--engine) need "$@"; ENGINE=$2; shift 2 ;;
        --opponent) need "$@"; OPPONENT=$2; shift 2 ;;
        -n|--games) need "$@"; GAMES=$2; shift 2 ;;
        -t|--tc) need "$@"; TC=$2; shift 2 ;;
        --threads) need "$@"; THREADS=$2; shift 2 ;;
        --ponder) need "$@"; PONDER=$2; shift 2 ;;
        --hash) need "$@"; HASH=$2; shift 2 ;;
        --syzygy) need "$@"; SYZYGY=$2; shift 2 ;;
        -c|--concurrency) need "$@"; CONCURRENCY=$2; shift 2 ;;
        -b|--book) need "$@"; BOOK=$2; shift 2 ;;
        -o|--out) need "$@"; OUT=$2; shift 2 ;;
        --seed) need "$@"; SEED=$2; shift 2 ;;
        --runner) need "$@"; RUNNER=$2; shift 2 ;;
        --debug) DEBUG=1; shift ;;
        --strict) STRICT=1; shift ;;
        --summarise|--summarize)
            need "$@"; SUMMARISE_PGN=$2; shift 2
            if [[ $# -gt 0 && $1 != -* ]]; then SUMMARISE_LOG=$1; shift; fi ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done

# --- summariser (python3, standard library only) --------------------------------------
# Reads a cutechess PGN (+ optional log and engine stderr file) and prints the summary
# line and details; exits 1 when a forfeit/illegal/crash/stall (or with --strict a
# warning) was seen, or fewer games than planned were played.
SUMMARY_PY=$(cat <<'PYEOF'
import re, sys
from collections import Counter

pgn_path, log_path, err_path, label, planned, strict = sys.argv[1:7]
planned, strict = int(planned), strict == "1"

def parse_tc(s):
    """cutechess TimeControl tag -> (moves, base_ms, inc_ms), or None (no clock)."""
    m = re.fullmatch(r"(?:(\d+)/)?([\d.]+)(?:\+([\d.]+))?", s.strip())
    if not m:
        return None
    moves = int(m.group(1)) if m.group(1) else 0
    return moves, round(float(m.group(2)) * 1000), round(float(m.group(3) or 0) * 1000)

def games(text):
    """Split a PGN into (tags, movetext) pairs."""
    tags, body, out, in_tags = {}, [], [], False
    for line in text.splitlines():
        t = re.match(r'\s*\[(\w+)\s+"(.*)"\]\s*$', line)
        if t:
            if body and any(b.strip() for b in body):
                out.append((tags, "\n".join(body)))
                tags, body = {}, []
            tags[t.group(1)] = t.group(2)
        else:
            body.append(line)
    if tags:
        out.append((tags, "\n".join(body)))
    return out

TOKEN = re.compile(r"\{[^}]*\}|\$\d+|\d+\.(?:\.\.)?|1-0|0-1|1/2-1/2|\*|[^\s{}]+")
TIME = re.compile(r"(\d+(?:\.\d+)?)s\b")

n = 0
results = Counter()
terms = Counter()
fails = Counter({k: 0 for k in ("forfeit", "illegal", "crash", "stall")})
fail_games = []
lowest = None          # ms, just after a move, before the increment
lowest_at = ""
lowest_slack = 0.0     # ± ms of PGN rounding summed over that side's moves so far
for number, (tags, moves) in enumerate(games(open(pgn_path, encoding="utf-8", errors="replace").read()), 1):
    n += 1
    results[tags.get("Result", "*")] += 1
    term = tags.get("Termination", "")
    desc = ""
    toks = TOKEN.findall(moves)
    comments = [t[1:-1] for t in toks if t.startswith("{")]
    if comments:
        last = comments[-1]
        for phrase in ("loses on time", "by timeout", "illegal move", "disconnects", "stalls"):
            if phrase in last:
                desc = last
                break
    terms[term or "normal"] += 1
    kind = None
    # a flag against a side that cannot mate is "Draw by timeout": still a forfeit
    if term == "time forfeit" or "loses on time" in desc or "by timeout" in desc:
        kind = "forfeit"
    elif term == "illegal move" or "illegal move" in desc:
        kind = "illegal"
    elif term == "stalled connection" or "stalls" in desc:
        kind = "stall"
    elif term == "abandoned" or "disconnects" in desc:
        kind = "crash"
    if kind:
        fails[kind] += 1
        fail_games.append(f"game {number} ({tags.get('White','?')} - {tags.get('Black','?')}, "
                          f"{tags.get('Result','?')}): {desc or term}  FEN {tags.get('FEN', 'startpos')}")
    # clock replay
    tc = parse_tc(tags.get("TimeControl", ""))
    if not tc:
        continue
    per_move, base, inc = tc
    fen = tags.get("FEN", "")
    side = 1 if " b " in f" {fen} " and fen else 0
    # cutechess starts each clock at base + increment (TimeControl::initialize)
    # and adds the increment after each move.
    clock, made = [base + inc, base + inc], [0, 0]
    slack = [0.0, 0.0]   # ms the PGN's rounding may hide on each side's clock
    ply = 0
    i = 0
    while i < len(toks):
        t = toks[i]
        i += 1
        if t.startswith("{") or t.startswith("$") or re.fullmatch(r"\d+\.(?:\.\.)?", t) \
                or t in ("1-0", "0-1", "1/2-1/2", "*"):
            continue
        # a move; its comment (if any) follows
        used, book = None, False
        if i < len(toks) and toks[i].startswith("{"):
            c = toks[i][1:-1].split(",")[0]
            book = c.strip() == "book"
            times = TIME.findall(c)
            used = round(float(times[-1]) * 1000) if times else None
            # half the last printed digit, in ms: 5 for "0.12s", 50 for "1.2s", 0 for "0s"
            half_unit = 0.5 * 10 ** (3 - len(times[-1].partition(".")[2])) if used else 0.0
        ply += 1
        if used is not None and not book:
            left = clock[side] - used
            slack[side] += half_unit
            if lowest is None or left < lowest:
                lowest, lowest_at, lowest_slack = left, f"game {number} ply {ply}", slack[side]
            clock[side] = left + inc
            made[side] += 1
            if per_move and made[side] % per_move == 0:
                clock[side] += base
        side ^= 1

# runner log: warnings, failures the PGN might not show, engine errors, exact clocks
warnings, info_errors, go_min = Counter(), Counter(), None
log_fail = Counter()
debug_log = False      # cutechess -debug lines: "<ms> >name(id): command" / "<ms> <name(id): output"
if log_path:
    for line in open(log_path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if re.match(r"\d+ [<>]", line):
            debug_log = True
        if line.startswith("Finished game"):
            for phrase, k in (("loses on time", "forfeit"), ("by timeout", "forfeit"), ("illegal move", "illegal"),
                              ("disconnects", "crash"), ("stalls", "stall")):
                if phrase in line:
                    log_fail[k] += 1
        elif line.startswith(("Warning:", "Critical:", "Fatal:")):
            warnings[re.sub(r"\(\d+\)", "(N)", line)] += 1
        if "info string" in line and re.search(r"info string\s+(error|warning|panic)", line, re.I):
            info_errors[re.sub(r"^\d+\s+", "", line)[:200]] += 1
        if re.match(r"\d+ >.*: go ", line):
            for k in ("wtime", "btime"):
                m = re.search(rf"\b{k} (-?\d+)", line)
                if m:
                    v = int(m.group(1))
                    go_min = v if go_min is None else min(go_min, v)
# a failure in the log but missing from the PGN (e.g. the PGN was not written) still counts
for k, v in log_fail.items():
    if v > fails[k]:
        fails[k] = v

stderr_lines = []
if err_path:
    try:
        stderr_lines = [l.rstrip("\n") for l in open(err_path, encoding="utf-8", errors="replace") if l.strip()]
    except FileNotFoundError:
        pass

low = "n/a" if lowest is None else f"{lowest}ms"
print(f"[{label}] games {n}  forfeits {fails['forfeit']}  illegal {fails['illegal']}  "
      f"crashes {fails['crash']}  stalls {fails['stall']}  lowest-clock-left {low}")
w, d, l = results["1-0"], results["1/2-1/2"], results["0-1"]
detail = f"    results 1-0 {w}  1/2 {d}  0-1 {l}"
if results["*"]:
    detail += f"  unfinished {results['*']}"
detail += f"   terminations: " + ", ".join(f"{k} {v}" for k, v in terms.most_common())
if lowest is not None:
    detail += f"   (lowest at {lowest_at}, ± {lowest_slack:.0f}ms from the PGN's rounding)"
print(detail)
extra = []
if go_min is not None:
    extra.append(f"min wtime/btime sent with go {go_min}ms")
extra.append(f"runner warnings {sum(warnings.values())}")
extra.append(f"engine stderr lines {len(stderr_lines)}")
extra.append(f"info-string errors {sum(info_errors.values())}" if debug_log
             else "info-string errors n/a (no --debug)")
print("    " + "   ".join(extra))
for g in fail_games[:20]:
    print("    !!! " + g)
for wline, c in warnings.most_common(8):
    print(f"    warning x{c}: {wline[:200]}")
for eline, c in info_errors.most_common(8):
    print(f"    info-string x{c}: {eline}")
for sline in stderr_lines[:8]:
    print(f"    stderr: {sline[:200]}")
bad = sum(fails.values()) > 0
if planned and n < planned:
    print(f"    !!! incomplete: {n} of {planned} games in the PGN")
    bad = True
if strict and (warnings or info_errors or stderr_lines):
    bad = True
sys.exit(1 if bad else 0)
PYEOF
)

summarise() { # pgn log stderr label planned
    python3 -c "$SUMMARY_PY" "$1" "$2" "$3" "$4" "$5" "$STRICT"
}

if [[ -n $SUMMARISE_PGN ]]; then
    [[ -f $SUMMARISE_PGN ]] || die "no such PGN: $SUMMARISE_PGN"
    summarise "$SUMMARISE_PGN" "$SUMMARISE_LOG" "" "$(basename "$SUMMARISE_PGN" .pgn)" 0
    exit $?
fi

# --- checks ---------------------------------------------------------------------------
cd "$ROOT"
command -v python3 >/dev/null || die "python3 is needed for the summary"
abspath() { [[ $1 == /* ]] && echo "$1" || echo "$PWD/$1"; }
ENGINE=$(abspath "$ENGINE")
[[ -x $ENGINE ]] || die "engine not found or not executable: $ENGINE (make, or --engine PATH)"
OPPONENT=$(abspath "${OPPONENT:-$ENGINE}")
[[ -x $OPPONENT ]] || die "opponent not found or not executable: $OPPONENT"
BOOK=$(abspath "$BOOK")
[[ -f $BOOK ]] || die "opening book not found: $BOOK (the repository holds engine-tests/books/8moves_2000.epd)"
[[ $GAMES =~ ^[0-9]+$ && $GAMES -ge 2 ]] || die "--games must be a number >= 2"
if (( GAMES % 2 )); then GAMES=$((GAMES + 1)); echo "soak.sh: games rounded up to $GAMES (pairs)"; fi
[[ $CONCURRENCY =~ ^[1-9][0-9]*$ ]] || die "--concurrency must be a positive number"
[[ $HASH =~ ^[1-9][0-9]*$ ]] || die "--hash must be a positive number"
if [[ -n $SYZYGY ]]; then
    SYZYGY=$(abspath "$SYZYGY")
    [[ -d $SYZYGY ]] || die "--syzygy: no such folder: $SYZYGY (the repository holds engine-tests/syzygy)"
fi
[[ $TC =~ ^([0-9]+/)?[0-9.]+(\+[0-9.]+)?$ ]] || die "--tc must look like 10+0.1, 60 or 40/60+0"
IFS=, read -r -a THREAD_LIST <<<"$THREADS"
IFS=, read -r -a PONDER_LIST <<<"$PONDER"
for t in "${THREAD_LIST[@]}"; do [[ $t =~ ^[1-9][0-9]*$ ]] || die "bad threads value '$t'"; done
for p in "${PONDER_LIST[@]}"; do [[ $p == on || $p == off ]] || die "bad ponder value '$p' (on/off)"; done
[[ -n $SEED ]] || SEED=$(( (RANDOM << 15 | RANDOM) % 1000000000 ))
[[ $SEED =~ ^[0-9]+$ ]] || die "--seed must be a number"

CUTECHESS_BIN=
if [[ $RUNNER == auto || $RUNNER == cutechess ]]; then
    for c in "${CUTECHESS:-}" "$(command -v cutechess-cli 2>/dev/null || true)"; do
        if [[ -n $c && -x $c ]]; then CUTECHESS_BIN=$c; break; fi
    done
    if [[ -z $CUTECHESS_BIN ]]; then
        [[ $RUNNER == cutechess ]] && die "cutechess-cli not found (CUTECHESS=path or PATH)"
        RUNNER=lab
    else
        RUNNER=cutechess
    fi
fi
case $RUNNER in
    cutechess) ;;
    lab)
        LAB_PY=${LAB_PY:-$ROOT/engine-tests/.venv/bin/python}
        [[ -x $LAB_PY ]] || die "lab runner needs its venv: make lab-venv (or LAB_PY=python-with-chess)"
        for p in "${PONDER_LIST[@]}"; do
            [[ $p == off ]] || die "the lab runner (match.py) cannot ponder; install cutechess-cli for --ponder on"
        done ;;
    *) die "--runner must be auto, cutechess or lab" ;;
esac

RUN_DIR=$(abspath "$OUT")/$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN_DIR"
CORES=$(nproc 2>/dev/null || echo 1)
echo "soak: runner $RUNNER${CUTECHESS_BIN:+ ($CUTECHESS_BIN)}  engine $ENGINE  opponent $OPPONENT"
echo "soak: games $GAMES per setting  tc $TC  hash $HASH  concurrency $CONCURRENCY  book $BOOK  seed $SEED"
echo "soak: syzygy ${SYZYGY:-off}"
echo "soak: output $RUN_DIR"

# --- matches --------------------------------------------------------------------------
SUMMARIES=()
STATUS=0
for threads in "${THREAD_LIST[@]}"; do
    for ponder in "${PONDER_LIST[@]}"; do
        label="t${threads}-ponder-${ponder}${SYZYGY:+-syzygy}"
        pgn=$RUN_DIR/$label.pgn
        log=$RUN_DIR/$label.log
        err=$RUN_DIR/$label.stderr
        per_side=1; [[ $ponder == on ]] && per_side=2
        busy=$(( CONCURRENCY * threads * per_side ))
        if (( busy > CORES )); then
            echo "soak: warning: $label keeps up to $busy threads busy on $CORES cores; clocks will suffer"
        fi
        echo "soak: --- $label: tc $TC, Threads $threads, ponder $ponder -> $pgn"
        rc=0
        if [[ $RUNNER == cutechess ]]; then
            each=(proto=uci tc="$TC" timemargin=0 option.Threads="$threads" option.Hash="$HASH" stderr="$err")
            [[ $ponder == on ]] && each+=(ponder)
            [[ -n $SYZYGY ]] && each+=(option.SyzygyPath="$SYZYGY")
            args=(-engine name=qilin-a cmd="$ENGINE"
                  -engine name=qilin-b cmd="$OPPONENT"
                  -each "${each[@]}"
                  -openings file="$BOOK" format=epd order=random
                  -repeat -games 2 -rounds $((GAMES / 2))
                  -srand "$SEED"
                  -concurrency "$CONCURRENCY" -ratinginterval 10
                  -event "Qilin soak $label"
                  -pgnout "$pgn")
            # plain `-debug` is rejected by cutechess 1.5.1 on Qt 6 ("Empty value for option");
            # `-debug all` works and also sends `debug on` to the engines
            [[ $DEBUG == 1 ]] && args+=(-debug all)
            printf '%q ' "$CUTECHESS_BIN" "${args[@]}" >"$log.cmd"; echo >>"$log.cmd"
            # the log keeps everything; the terminal gets the score lines and warnings
            set +e
            "$CUTECHESS_BIN" "${args[@]}" 2>&1 | tee "$log" \
                | grep --line-buffered -E '^(Score of|Elo difference|Warning|Critical|Fatal)'
            statuses=("${PIPESTATUS[@]}")
            set -e
            rc=${statuses[0]}
            touch "$pgn"
        else
            args=(--engine "$ENGINE" --opponent "$OPPONENT" --engine-name qilin-a --opponent-name qilin-b
                  --engine-opt "Threads=$threads" --opponent-opt "Threads=$threads"
                  --engine-opt "Hash=$HASH" --opponent-opt "Hash=$HASH"
                  --tc "$TC" --timemargin 0 --games "$GAMES" --concurrency "$CONCURRENCY"
                  --openings "$BOOK" --seed "$SEED" --event "Qilin soak $label"
                  --pgn "$pgn" --json "$RUN_DIR/$label.json")
            [[ $DEBUG == 1 ]] && args+=(--uci-log "$RUN_DIR/$label.uci.log")
            [[ -n $SYZYGY ]] && args+=(--engine-opt "SyzygyPath=$SYZYGY" --opponent-opt "SyzygyPath=$SYZYGY")
            "$LAB_PY" "$ROOT/engine-tests/lab/match.py" "${args[@]}" 2>&1 | tee "$log" || rc=$?
        fi
        if [[ $RUNNER == cutechess ]]; then
            line=$(summarise "$pgn" "$log" "$err" "$label" "$GAMES") || STATUS=1
            (( rc == 0 )) || { line+=$'\n'"    !!! cutechess-cli exited with status $rc (see $log)"; STATUS=1; }
        else
            line=$("$LAB_PY" - "$RUN_DIR/$label.json" "$label" "$GAMES" "$TC" <<'PYEOF'
import json, math, re, sys
path, label, planned, tc = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    s = json.load(open(path))
except (OSError, ValueError) as e:
    print(f"[{label}] no summary ({e})"); sys.exit(1)
f = {k: s["failures"]["engine"].get(k, 0) + s["failures"]["opponent"].get(k, 0)
     for k in ("time forfeit", "illegal move", "crash", "stall")}
m = re.search(r"\+([\d.]+)$", tc)
inc = float(m.group(1)) * 1000 if m else 0.0
clocks = [v for v in s["min_clock_ms"].values() if v is not None]
low = "n/a" if not clocks else f"{min(clocks) - inc:.0f}ms"   # match.py records it after the increment
print(f"[{label}] games {s['games']}  forfeits {f['time forfeit']}  illegal {f['illegal move']}  "
      f"crashes {f['crash']}  stalls {f['stall']}  lowest-clock-left {low}")
print(f"    W/D/L (qilin-a) {s['wins']}/{s['draws']}/{s['losses']}   terminations: "
      + ", ".join(f"{k} {v}" for k, v in s["terminations"].items()))
for d in s.get("engine_failure_details", []):
    print(f"    !!! game {d['game']}: {d['kind']}: {d['detail']}")
bad = sum(f.values()) > 0 or s["games"] < planned or s.get("aborted") or s.get("fatal")
if s["games"] < planned:
    print(f"    !!! incomplete: {s['games']} of {planned} games")
sys.exit(1 if bad else 0)
PYEOF
            ) || STATUS=1
            (( rc == 0 )) || { line+=$'\n'"    !!! match.py exited with status $rc (see $log)"; STATUS=1; }
        fi
        echo "$line"
        SUMMARIES+=("$line")
    done
done

echo
echo "soak summary ($RUN_DIR):"
printf '%s\n' "${SUMMARIES[@]}" | tee "$RUN_DIR/summary.txt"
exit $STATUS
