#!/usr/bin/env python3
"""Qilin strength lab: a small cutechess-style match runner.

Plays game pairs (each opening twice, colours swapped) between the engine under
test (--engine) and an opponent (--opponent), with a real chess clock, rules-only
results (python-chess judges the rules), per-side failure accounting (time
forfeits, illegal moves, crashes, stalls, engine restarts), PGN and JSON
output, a pentanomial Elo estimate (also without the pairs the opponent
forfeited) and an optional exact pentanomial SPRT, decided at the pair that
crosses a bound (sprt.py; docs/testing-statistics.md).

Run `python3 match.py --help` for the options and `python3 match.py --selftest`
for the statistics self-test. See README.md next to this file.

UCI is driven by our own pipe code (not chess.engine) so that the clock is
measured exactly from writing `go` to reading `bestmove`, a stalled engine can
be killed at a deadline, and a malformed or illegal `bestmove` is recorded
verbatim. python-chess is used for the board and the rules and for PGN.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import doctest
import hashlib
import json
import math
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from typing import Optional

try:
    import chess
    import chess.pgn
except ImportError:  # pragma: no cover - only hit outside the lab venv
    chess = None  # type: ignore[assignment]

# The book kept in the repository (engine-tests/books), found from this file so that
# the default works from any working directory.
DEFAULT_BOOK = os.path.relpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "books", "8moves_2000.epd")
)
# The statistics (Elo, error bars, the exact pentanomial SPRT, the pair tally)
# live in sprt.py beside this file, standard library only, so that their tests
# run without python-chess (`python3 -m unittest discover -s engine-tests/lab`).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sprt import SPRT_ALPHA, SPRT_BETA, PairTally, sprt_bounds  # noqa: E402


def selftest() -> int:
    """The statistics' unit tests (test_match_stats.py) and sprt.py's doctests."""
    import unittest
    import sprt as sprt_module
    import test_match_stats
    suite = unittest.TestSuite()
    suite.addTests(unittest.defaultTestLoader.loadTestsFromModule(test_match_stats))
    suite.addTests(doctest.DocTestSuite(sprt_module))
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    return 0 if result.wasSuccessful() else 1


# ---------------------------------------------------------------------------
# Engine specs
# ---------------------------------------------------------------------------


class UsageError(Exception):
    pass


@dataclasses.dataclass
class EngineSpec:
    spec: str
    cmd: list[str]
    options: dict[str, str]  # UCI options (shorthand ones + user ones), user wins
    name: Optional[str] = None
    id_name: Optional[str] = None
    applied: Optional[dict[str, str]] = None  # what gets sent, after validation


SHORTHANDS = {
    "sf": (["/usr/games/stockfish"], "Stockfish", "stockfish"),
    "stockfish": (["/usr/games/stockfish"], "Stockfish", "stockfish"),
    "ethereal": (["/usr/games/ethereal-chess"], "Ethereal", "ethereal-chess"),
    "glaurung": (["/usr/games/glaurung"], "Glaurung", "glaurung"),
    "toga2": (["/usr/games/toga2"], "Toga II", "toga2"),
    # /usr/games/gnuchessu is a sh wrapper that needs /usr/games on PATH; run the binary directly.
    "gnuchessu": (["/usr/games/gnuchess", "--uci"], "GNU Chess", "gnuchess"),
    "gnuchess": (["/usr/games/gnuchess", "--uci"], "GNU Chess", "gnuchess"),
}


def parse_opts(items: Optional[list[str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"engine option '{item}' is not NAME=VALUE")
        k, v = item.split("=", 1)
        k = k.strip()
        if not k:
            raise UsageError(f"engine option '{item}' has an empty name")
        out[k] = v.strip()
    return out


# Stockfish's default Move Overhead (10 ms) does not cover what this runner's
# clock charges it: the time from writing `go` to reading `bestmove` includes
# the pipes and the wait for a core on a loaded machine. At 10+0.1, two games at
# a time, Stockfish 15.1 at UCI_Elo 2400 lost 13 of 207 games on time, which
# counted as our wins. 100 ms stops that at the cost of a sliver of its thinking
# time (an opponent's strength is its playing, not its clock handling); playing
# one game at a time instead would halve every match's speed. Qilin keeps its
# own default: its forfeits are bugs to see. `--opponent-opt "Move Overhead=N"`
# overrides it.
STOCKFISH_MOVE_OVERHEAD_MS = 100


def shorthand_options(key: str, arg: str) -> dict[str, str]:
    """UCI options a shorthand engine spec implies (the user's options win over these).

    >>> shorthand_options("sf", "2400")
    {'Move Overhead': '100', 'UCI_LimitStrength': 'true', 'UCI_Elo': '2400'}
    >>> shorthand_options("ethereal", "")
    {}
    """
    opts: dict[str, str] = {}
    if key in ("sf", "stockfish"):
        opts["Move Overhead"] = str(STOCKFISH_MOVE_OVERHEAD_MS)
        if arg:
            if not re.fullmatch(r"\d+", arg):
                raise UsageError(f"{key}:{arg}: expected sf:<elo> with an integer Elo")
            opts.update({"UCI_LimitStrength": "true", "UCI_Elo": arg})
    return opts


def resolve_spec(spec: str, user_opts: dict[str, str], name: Optional[str]) -> EngineSpec:
    base, _, arg = spec.partition(":")
    key = base.lower()
    if key in SHORTHANDS and (arg == "" or key in ("sf", "stockfish")):
        cmd, pretty, pkg = SHORTHANDS[key]
        if not os.access(cmd[0], os.X_OK):
            raise UsageError(f"{spec}: {cmd[0]} not found; install it with: apt-get install -y {pkg}")
        opts = shorthand_options(key, arg)
        default_name = f"{pretty} {arg}" if arg else pretty
        user_keys = {k.lower() for k in user_opts}
        opts = {k: v for k, v in opts.items() if k.lower() not in user_keys}
        opts.update(user_opts)
        return EngineSpec(spec, list(cmd), opts, name or default_name)
    path = os.path.abspath(os.path.expanduser(spec))
    if not os.path.isfile(path):
        raise UsageError(f"engine '{spec}': no such file (give a path to a UCI binary or one of: "
                         f"sf, sf:<elo>, ethereal, glaurung, toga2, gnuchessu)")
    if not os.access(path, os.X_OK):
        raise UsageError(f"engine '{spec}': {path} is not executable")
    return EngineSpec(spec, [path], dict(user_opts), name)


# ---------------------------------------------------------------------------
# UCI pipe driver
# ---------------------------------------------------------------------------


class EngineCrash(Exception):
    pass


class EngineStall(Exception):
    pass


class UciLog:
    def __init__(self, path: Optional[str]):
        self.f = open(path, "w", encoding="utf-8") if path else None
        self.lock = threading.Lock()
        self.t0 = time.perf_counter()

    def write(self, tag: str, direction: str, line: str) -> None:
        if self.f is None:
            return
        with self.lock:
            self.f.write(f"{time.perf_counter() - self.t0:10.4f} {tag} {direction} {line}\n")

    def close(self) -> None:
        if self.f:
            self.f.close()


def _parse_option(line: str) -> Optional[dict]:
    # option name <name...> type <t> [default <d...>] [min <a>] [max <b>] [var <v>]*
    toks = line.split()
    try:
        i_type = toks.index("type")
    except ValueError:
        return None
    name = " ".join(toks[2:i_type])
    opt: dict = {"name": name, "type": toks[i_type + 1] if i_type + 1 < len(toks) else ""}
    for key in ("min", "max"):
        if key in toks[i_type:]:
            j = i_type + toks[i_type:].index(key)
            try:
                opt[key] = int(toks[j + 1])
            except (IndexError, ValueError):
                pass
    return opt


class UciEngine:
    def __init__(self, spec: EngineSpec, tag: str, log: UciLog):
        self.spec = spec
        self.tag = tag
        self.log = log
        self.proc: Optional[subprocess.Popen] = None
        self.q: "queue.Queue[tuple[float, Optional[str]]]" = queue.Queue()
        self.stderr_tail: deque[str] = deque(maxlen=20)
        self.options: dict[str, dict] = {}
        self.id_name: Optional[str] = None
        self.starts = 0

    # -- process management -------------------------------------------------
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, configure: bool = True, timeout: float = 20.0) -> None:
        self.kill()
        self.q = queue.Queue()
        self.stderr_tail = deque(maxlen=20)
        self.starts += 1
        try:
            self.proc = subprocess.Popen(
                self.spec.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, encoding="utf-8", errors="replace", bufsize=1, start_new_session=True)
        except OSError as exc:
            raise EngineCrash(f"cannot start {self.spec.cmd}: {exc}") from exc
        proc, q = self.proc, self.q
        threading.Thread(target=self._read_stdout, args=(proc, q), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(proc, self.stderr_tail), daemon=True).start()
        self.send("uci")
        deadline = time.perf_counter() + timeout
        self.options = {}
        while True:
            _, line = self.readline(deadline)
            if line.startswith("id name "):
                self.id_name = line[8:].strip()
            elif line.startswith("option name "):
                opt = _parse_option(line)
                if opt:
                    self.options[opt["name"].lower()] = opt
            elif line.strip() == "uciok":
                break
        if configure:
            for k, v in (self.spec.applied or {}).items():
                opt = self.options.get(k.lower())
                if opt and opt["type"] == "button":
                    self.send(f"setoption name {opt['name']}")
                elif opt:
                    self.send(f"setoption name {opt['name']} value {v}")
            self.isready(60.0)

    def _read_stdout(self, proc: subprocess.Popen, q: queue.Queue) -> None:
        try:
            for line in proc.stdout:  # type: ignore[union-attr]
                ts = time.perf_counter()
                line = line.rstrip("\r\n")
                self.log.write(self.tag, "<", line)
                q.put((ts, line))
        except (OSError, ValueError):
            pass
        q.put((time.perf_counter(), None))

    @staticmethod
    def _read_stderr(proc: subprocess.Popen, tail: deque) -> None:
        try:
            for line in proc.stderr:  # type: ignore[union-attr]
                tail.append(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its own session: takes wrapper children too
            except (ProcessLookupError, PermissionError, OSError):
                try:
                    proc.kill()
                except OSError:
                    pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if f:
                    f.close()
            except OSError:
                pass

    def quit(self) -> None:
        if self.alive():
            try:
                self.send("quit")
                self.proc.wait(timeout=2)  # type: ignore[union-attr]
            except (EngineCrash, subprocess.TimeoutExpired, AttributeError):
                pass
        self.kill()

    def exit_info(self) -> str:
        rc = None
        if self.proc is not None:
            try:
                rc = self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                rc = None
        tail = " | ".join(list(self.stderr_tail)[-5:])
        msg = f"exit code {rc}" if rc is not None else "process gone"
        if rc is not None and rc < 0:
            try:
                msg += f" ({signal.Signals(-rc).name})"
            except ValueError:
                pass
        return msg + (f"; stderr: {tail}" if tail else "")

    # -- protocol -------------------------------------------------------------
    def send(self, line: str) -> None:
        if self.proc is None or self.proc.stdin is None:
            raise EngineCrash("engine not running")
        self.log.write(self.tag, ">", line)
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise EngineCrash(f"write failed: {exc}") from exc

    def readline(self, deadline: float) -> tuple[float, str]:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            raise EngineStall("deadline passed")
        try:
            ts, line = self.q.get(timeout=remaining)
        except queue.Empty:
            raise EngineStall("no answer before the deadline") from None
        if line is None:
            self.q.put((ts, None))  # keep the EOF visible
            raise EngineCrash("engine closed its output")
        return ts, line

    def isready(self, timeout: float) -> None:
        self.send("isready")
        deadline = time.perf_counter() + timeout
        while True:
            _, line = self.readline(deadline)
            if line.strip() == "readyok":
                return

    def new_game(self) -> None:
        self.send("ucinewgame")
        self.isready(60.0)

    def go(self, position_cmd: str, go_cmd: str, max_wait: float) -> tuple[str, float, dict]:
        # Drain anything stale (e.g. info strings after the last bestmove).
        while True:
            try:
                ts, line = self.q.get_nowait()
            except queue.Empty:
                break
            if line is None:
                self.q.put((ts, None))
                raise EngineCrash("engine closed its output")
        self.send(position_cmd)
        self.send(go_cmd)
        t0 = time.perf_counter()
        deadline = t0 + max_wait
        info: dict = {}
        while True:
            ts, line = self.readline(deadline)
            if line.startswith("bestmove"):
                toks = line.split()
                return (toks[1] if len(toks) > 1 else ""), ts - t0, info
            if line.startswith("info") and " string " not in line[:12]:
                _parse_info(line, info)


def _parse_info(line: str, info: dict) -> None:
    toks = line.split()
    if "multipv" in toks:
        i = toks.index("multipv")
        if i + 1 < len(toks) and toks[i + 1] != "1":
            return
    i = 1
    while i < len(toks) - 1:
        t = toks[i]
        if t in ("depth", "nodes", "seldepth"):
            try:
                info[t] = int(toks[i + 1])
            except ValueError:
                pass
            i += 2
        elif t == "score" and i + 2 < len(toks):
            kind, val = toks[i + 1], toks[i + 2]
            try:
                v = int(val)
            except ValueError:
                i += 3
                continue
            if kind == "cp":
                info["score"] = v
                info.pop("mate", None)
            elif kind == "mate":
                info["mate"] = v
                info["score"] = (100000 - abs(v)) * (1 if v > 0 else -1)
            i += 3
        elif t == "pv":
            break
        else:
            i += 1


# ---------------------------------------------------------------------------
# Match configuration
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class TimeControl:
    base: Optional[float] = None  # seconds
    inc: float = 0.0
    moves: Optional[int] = None  # moves per period (movestogo)
    nodes: Optional[int] = None
    depth: Optional[int] = None
    movetime: Optional[int] = None  # ms

    @property
    def clocked(self) -> bool:
        return self.base is not None

    def pgn_tag(self) -> str:
        if not self.clocked:
            return "-"
        base = _fmt_num(self.base)  # type: ignore[arg-type]
        s = f"{self.moves}/{base}" if self.moves else base
        return f"{s}+{_fmt_num(self.inc)}" if self.inc or not self.moves else s

    def describe(self) -> str:
        parts = []
        if self.clocked:
            parts.append(f"tc {self.pgn_tag()}")
        if self.nodes:
            parts.append(f"nodes {self.nodes}")
        if self.depth:
            parts.append(f"depth {self.depth}")
        if self.movetime:
            parts.append(f"movetime {self.movetime}ms")
        return ", ".join(parts)


def _fmt_num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def parse_tc(s: str) -> tuple[float, float, Optional[int]]:
    """'10+0.1' -> (10, 0.1, None); '40/150+0' -> (150, 0, 40); '1:30+1' -> (90, 1, None)."""
    m = re.fullmatch(r"\s*(?:(\d+)/)?(?:(\d+):)?(\d+(?:\.\d*)?)(?:\+(\d+(?:\.\d*)?))?\s*", s)
    if not m:
        raise UsageError(f"--tc '{s}': expected BASE[+INC] or MOVES/BASE[+INC] (seconds), e.g. 10+0.1")
    moves = int(m.group(1)) if m.group(1) else None
    base = float(m.group(3)) + (60 * int(m.group(2)) if m.group(2) else 0)
    inc = float(m.group(4)) if m.group(4) else 0.0
    if base <= 0 or (moves is not None and moves <= 0):
        raise UsageError(f"--tc '{s}': base time and moves must be positive")
    return base, inc, moves


@dataclasses.dataclass
class Adjudication:
    draw: Optional[tuple[int, int, int]] = None  # move number, move count, score cp
    resign: Optional[tuple[int, int]] = None  # move count, score cp


def load_openings(path: str) -> list[str]:
    fens = []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            board = chess.Board()
            try:
                board.set_epd(line)
            except ValueError as exc:
                print(f"warning: {path}:{lineno}: bad EPD ({exc}), skipped", file=sys.stderr)
                continue
            if not board.is_valid() or board.is_game_over():
                print(f"warning: {path}:{lineno}: invalid or finished position, skipped", file=sys.stderr)
                continue
            fens.append(board.fen())
    return fens


# ---------------------------------------------------------------------------
# Playing games
# ---------------------------------------------------------------------------

SIDES = ("engine", "opponent")
FAIL_KINDS = ("time forfeit", "illegal move", "crash", "stall")
FAIL_LABELS = {"time forfeit": "time forfeits", "illegal move": "illegal moves", "crash": "crashes",
               "stall": "stalls"}


@dataclasses.dataclass
class GameResult:
    number: int
    pair: int
    tested_white: bool
    result: str  # "1-0", "0-1", "1/2-1/2"
    reason: str
    termination: str
    plies: int
    failure: Optional[tuple[str, str, str]] = None  # (side, kind, detail)
    overruns: dict = dataclasses.field(default_factory=dict)  # side -> [count, max_ms]
    move_times: dict = dataclasses.field(default_factory=dict)  # side -> [sum_s, count, max_s]
    min_clock: dict = dataclasses.field(default_factory=dict)  # side -> lowest clock left (s)
    pgn: str = ""

    def tested_points(self) -> float:
        if self.result == "1/2-1/2":
            return 0.5
        white_won = self.result == "1-0"
        return 1.0 if white_won == self.tested_white else 0.0


class Config:
    def __init__(self, args: argparse.Namespace, tc: TimeControl, adj: Adjudication,
                 specs: dict[str, EngineSpec]):
        self.args = args
        self.tc = tc
        self.adj = adj
        self.specs = specs
        self.max_plies = args.max_plies
        self.grace = args.stall_grace
        self.stall_timeout = args.stall_timeout
        self.timemargin = args.timemargin / 1000.0
        self.movetime_margin = args.movetime_margin


def play_game(cfg: Config, engines: dict[str, UciEngine], start_fen: str, number: int,
              pair: int, tested_white: bool) -> GameResult:
    tc = cfg.tc
    side_of = {chess.WHITE: "engine" if tested_white else "opponent",
               chess.BLACK: "opponent" if tested_white else "engine"}
    name_of = {c: cfg.specs[side_of[c]].name for c in (chess.WHITE, chess.BLACK)}
    board = chess.Board(start_fen)
    root = board.copy()
    clocks = {chess.WHITE: tc.base or 0.0, chess.BLACK: tc.base or 0.0}
    moves_made = {chess.WHITE: 0, chess.BLACK: 0}
    scores: list[Optional[int]] = []  # mover's POV per ply, for optional adjudication
    comments: list[str] = []
    overruns: dict = {}
    move_times = {s: [0.0, 0, 0.0] for s in SIDES}
    min_clock: dict = {}
    result = reason = termination = None
    failure = None
    final_comment = ""

    # Prepare both engines (restart dead ones; a failure here is the engine's fault).
    for color in (chess.WHITE, chess.BLACK):
        eng = engines[side_of[color]]
        try:
            if not eng.alive():
                eng.start()
            eng.new_game()
        except (EngineCrash, EngineStall):
            try:  # one clean restart before blaming the engine
                eng.start()
                eng.new_game()
            except (EngineCrash, EngineStall) as exc:
                kind = "crash" if isinstance(exc, EngineCrash) else "stall"
                detail = f"{kind} before the first move: {exc}; {eng.exit_info()}"
                eng.kill()
                failure = (side_of[color], kind, detail)
                result = "0-1" if color == chess.WHITE else "1-0"
                reason, termination = f"{kind} ({name_of[color]})", "abandoned"
                break

    uci_moves: list[str] = []
    while result is None:
        # -- rules ------------------------------------------------------------
        if board.is_checkmate():
            result = "0-1" if board.turn == chess.WHITE else "1-0"
            reason, termination = "checkmate", "normal"
            break
        if board.is_stalemate():
            result, reason, termination = "1/2-1/2", "stalemate", "normal"
            break
        if board.is_insufficient_material():
            result, reason, termination = "1/2-1/2", "insufficient material", "normal"
            break
        if board.is_fivefold_repetition():
            result, reason, termination = "1/2-1/2", "fivefold repetition", "normal"
            break
        if board.is_seventyfive_moves():
            result, reason, termination = "1/2-1/2", "75-move rule", "normal"
            break
        if board.is_repetition(3):  # claimable threefold: end it as a draw, like cutechess
            result, reason, termination = "1/2-1/2", "threefold repetition", "normal"
            break
        if board.halfmove_clock >= 100:  # claimable fifty-move rule (not mate: checked above)
            result, reason, termination = "1/2-1/2", "fifty-move rule", "normal"
            break
        if len(uci_moves) >= cfg.max_plies:
            result, reason, termination = "1/2-1/2", f"max plies ({cfg.max_plies})", "adjudication"
            break
        adj = _adjudicate(cfg.adj, scores, board)
        if adj:
            result, reason = adj
            termination = "adjudication"
            break

        # -- engine to move ----------------------------------------------------
        color = board.turn
        side = side_of[color]
        eng = engines[side]
        pos = f"position fen {start_fen}" + (" moves " + " ".join(uci_moves) if uci_moves else "")
        go = ["go"]
        if tc.clocked:
            go += [f"wtime {max(1, int(clocks[chess.WHITE] * 1000))}",
                   f"btime {max(1, int(clocks[chess.BLACK] * 1000))}",
                   f"winc {int(round(tc.inc * 1000))}", f"binc {int(round(tc.inc * 1000))}"]
            if tc.moves:
                go.append(f"movestogo {tc.moves - moves_made[color] % tc.moves}")
            max_wait = clocks[color] + cfg.grace
        elif tc.movetime:
            max_wait = tc.movetime / 1000.0 + cfg.grace
        else:
            max_wait = cfg.stall_timeout
        if tc.nodes:
            go.append(f"nodes {tc.nodes}")
        if tc.depth:
            go.append(f"depth {tc.depth}")
        if tc.movetime:
            go.append(f"movetime {tc.movetime}")
        loser_result = "0-1" if color == chess.WHITE else "1-0"
        ply_desc = f"ply {len(uci_moves) + 1}, FEN {board.fen()}"
        try:
            mv_str, elapsed, info = eng.go(pos, " ".join(go), max_wait)
        except EngineStall:
            eng.kill()  # restarted before the next game
            failure = (side, "stall", f"no bestmove within {max_wait:.1f}s at {ply_desc}")
            result, reason, termination = loser_result, f"stall ({name_of[color]})", "abandoned"
            final_comment = f"{name_of[color]} stalled (no bestmove within {max_wait:.1f}s)"
            break
        except EngineCrash:
            detail = eng.exit_info()
            eng.kill()
            failure = (side, "crash", f"{detail} at {ply_desc}")
            result, reason, termination = loser_result, f"crash ({name_of[color]})", "abandoned"
            final_comment = f"{name_of[color]} crashed: {detail}"
            break

        mt = move_times[side]
        mt[0] += elapsed
        mt[1] += 1
        mt[2] = max(mt[2], elapsed)

        # -- clock -------------------------------------------------------------
        if tc.clocked:
            if elapsed > clocks[color] + cfg.timemargin:
                over = elapsed - clocks[color]
                failure = (side, "time forfeit",
                           f"used {elapsed * 1000:.0f} ms with {clocks[color] * 1000:.0f} ms left "
                           f"(+{over * 1000:.0f} ms) at {ply_desc}")
                final_comment = f"{name_of[color]} loses on time ({over * 1000:.0f} ms over)"
                termination = "time forfeit"
                if board.has_insufficient_material(not color):
                    result, reason = "1/2-1/2", "time forfeit, opponent cannot mate"
                else:
                    result, reason = loser_result, f"time forfeit ({name_of[color]})"
                break
            clocks[color] += tc.inc - elapsed
            moves_made[color] += 1
            if tc.moves and moves_made[color] % tc.moves == 0:
                clocks[color] += tc.base  # type: ignore[operator]
            min_clock[side] = min(min_clock.get(side, math.inf), clocks[color])
        elif tc.movetime and elapsed * 1000 > tc.movetime + cfg.movetime_margin:
            o = overruns.setdefault(side, [0, 0.0])
            o[0] += 1
            o[1] = max(o[1], elapsed * 1000 - tc.movetime)

        # -- legality ----------------------------------------------------------
        move = None
        try:
            cand = chess.Move.from_uci(mv_str)
            if cand and cand in set(board.legal_moves):
                move = cand
        except ValueError:
            move = None
        if move is None:
            shown = mv_str if mv_str else "(empty)"
            failure = (side, "illegal move", f"bestmove '{shown}' at {ply_desc}")
            result, reason, termination = loser_result, f"illegal move {shown}", "rules infraction"
            final_comment = f"{name_of[color]} played illegal move {shown}"
            break

        board.push(move)
        uci_moves.append(mv_str)
        sc = info.get("score")
        scores.append(sc)
        comments.append(_move_comment(info, elapsed))

    # -- PGN -------------------------------------------------------------------
    game = chess.pgn.Game()
    h = game.headers
    h["Event"] = cfg.args.event
    h["Site"] = "Qilin lab"
    h["Date"] = datetime.date.today().strftime("%Y.%m.%d")
    h["Round"] = str(number)
    h["White"] = name_of[chess.WHITE]
    h["Black"] = name_of[chess.BLACK]
    h["Result"] = result
    h["TimeControl"] = tc.pgn_tag()
    if not tc.clocked or tc.nodes or tc.depth or tc.movetime:
        h["Limit"] = tc.describe()
    game.setup(root)
    if "FEN" not in h:
        h["FEN"] = root.fen()
        h["SetUp"] = "1"
    h["Termination"] = termination  # type: ignore[assignment]
    h["Reason"] = reason  # type: ignore[assignment]
    h["PlyCount"] = str(len(uci_moves))
    node: chess.pgn.GameNode = game
    for mv, com in zip(board.move_stack, comments):
        node = node.add_variation(mv, comment=com)
    if final_comment:
        node.comment = (node.comment + " " if node.comment else "") + final_comment
    pgn_text = str(game)

    return GameResult(number=number, pair=pair, tested_white=tested_white, result=result,  # type: ignore[arg-type]
                      reason=reason, termination=termination, plies=len(uci_moves),  # type: ignore[arg-type]
                      failure=failure, overruns=overruns, move_times=move_times,
                      min_clock=min_clock, pgn=pgn_text)


def _move_comment(info: dict, elapsed: float) -> str:
    parts = []
    if "mate" in info:
        m = info["mate"]
        parts.append(f"{'+' if m > 0 else '-'}M{abs(m)}")
    elif "score" in info:
        parts.append(f"{info['score'] / 100:+.2f}")
    if "depth" in info:
        parts[-1:] = [f"{parts[-1]}/{info['depth']}" if parts else f"d{info['depth']}"]
    parts.append(f"{elapsed:.3f}s")
    return " ".join(parts)


def _adjudicate(adj: Adjudication, scores: list[Optional[int]], board: "chess.Board") -> Optional[tuple[str, str]]:
    if adj.draw:
        movenum, count, limit = adj.draw
        n = 2 * count
        if board.fullmove_number >= movenum and len(scores) >= n:
            last = scores[-n:]
            if all(s is not None and abs(s) <= limit for s in last):
                return "1/2-1/2", f"draw adjudication ({count} moves within {limit} cp)"
    if adj.resign:
        count, limit = adj.resign
        n = 2 * count
        if len(scores) >= n:
            last = scores[-n:]
            if all(s is not None for s in last):
                # last[-1] was played by the side that just moved (not board.turn)
                mover_last = [last[i] for i in range(n - 1, -1, -2)]
                other = [last[i] for i in range(n - 2, -1, -2)]
                mover = not board.turn
                if all(s <= -limit for s in mover_last) and all(s >= limit for s in other):  # type: ignore[operator]
                    return ("0-1" if mover == chess.WHITE else "1-0"), "resign adjudication"
                if all(s >= limit for s in mover_last) and all(s <= -limit for s in other):  # type: ignore[operator]
                    return ("1-0" if mover == chess.WHITE else "0-1"), "resign adjudication"
    return None


# ---------------------------------------------------------------------------
# Match orchestration
# ---------------------------------------------------------------------------


class Match:
    def __init__(self, cfg: Config, openings: list[str], total_pairs: int, seed: int,
                 journal: Optional["Journal"] = None):
        self.cfg = cfg
        self.args = cfg.args
        self.openings = openings
        rng = random.Random(seed)
        self.order = list(range(len(openings)))
        rng.shuffle(self.order)
        self.total_pairs = total_pairs
        self.seed = seed
        self.lock = threading.Lock()
        self.next_pair = 0
        self.stop = threading.Event()
        self.aborted = False
        self.fatal: Optional[str] = None
        self.games: list[GameResult] = []
        # Pairs, the SPRT decision at the moment of its crossing, the opponent's forfeits.
        self.tally = PairTally(self.args.sprt)
        self.engines_by_side: dict[str, list[UciEngine]] = {side: [] for side in SIDES}
        self.log = UciLog(self.args.uci_log)
        self.journal = journal
        self.resumed_games = 0
        self.resumed_seconds = 0.0
        # Pairs finished in earlier segments of this run (from the journal): not played again.
        self.done_pairs: set[int] = set()
        if journal is not None:
            self.resumed_seconds = journal.elapsed_s
            for g in journal.games:
                self.done_pairs.add(g.pair)
                self.games.append(g)
                if self.tally.add_game(g.pair, g.tested_points(), _opponent_forfeit(g)):
                    self.stop.set()  # decided before the stop: nothing more to play
            self.resumed_games = len(self.games)
        mode = "a" if self.resumed_games else "w"
        self.pgn_file = open(self.args.pgn, mode, encoding="utf-8") if self.args.pgn else None
        self.all_engines: list[UciEngine] = []
        self.t_start = time.time()

    # -- work distribution ----------------------------------------------------
    def take_pair(self) -> Optional[int]:
        with self.lock:
            while self.next_pair in self.done_pairs:
                self.next_pair += 1
            if self.stop.is_set() or self.next_pair >= self.total_pairs:
                return None
            p = self.next_pair
            self.next_pair += 1
            return p

    def worker(self, wid: int) -> None:
        engines = {side: UciEngine(self.cfg.specs[side], f"w{wid}:{side}", self.log) for side in SIDES}
        with self.lock:
            self.all_engines.extend(engines.values())
            for side, eng in engines.items():
                self.engines_by_side[side].append(eng)
        try:
            while True:
                p = self.take_pair()
                if p is None:
                    return
                fen = self.openings[self.order[p % len(self.order)]]
                for k, tested_white in enumerate((True, False)):
                    if self.aborted:
                        return
                    for side, eng in engines.items():
                        if not eng.alive():
                            self._ensure_started(eng)
                    if self.aborted or self.fatal:
                        return
                    g = play_game(self.cfg, engines, fen, 2 * p + k + 1, p, tested_white)
                    if self.aborted:
                        return
                    self.record(g)
        except Exception as exc:  # bug in the runner itself: stop, report what we have
            import traceback
            traceback.print_exc()
            with self.lock:
                self.fatal = f"worker {wid}: internal error {exc!r}"
            self.stop.set()
        finally:
            for eng in engines.values():
                eng.quit()

    def _ensure_started(self, eng: UciEngine) -> None:
        last = None
        for _ in range(3):
            try:
                eng.start()
                return
            except (EngineCrash, EngineStall) as exc:
                last = exc
                eng.kill()
                time.sleep(0.5)
        with self.lock:
            self.fatal = (f"cannot (re)start {eng.spec.name} ({' '.join(eng.spec.cmd)}): {last}; "
                          f"{eng.exit_info()}")
        self.stop.set()

    # -- results ----------------------------------------------------------------
    def record(self, g: GameResult) -> None:
        with self.lock:
            self.games.append(g)
            if self.pgn_file:
                self.pgn_file.write(g.pgn + "\n\n")
                self.pgn_file.flush()
            if self.journal is not None:
                self.journal.append(g, self.resumed_seconds + time.time() - self.t_start)
            decision = self.tally.add_game(g.pair, g.tested_points(), _opponent_forfeit(g))
            if decision:
                # No new pair starts. Games already running finish and are counted
                # in the totals, but the decision and its figures are those of now.
                self.stop.set()
            n = len(self.games)
            if self.args.verbose:
                e = self.cfg.specs
                w, b = (e["engine"].name, e["opponent"].name) if g.tested_white else (e["opponent"].name, e["engine"].name)
                print(f"Game {g.number:4d}: {w} vs {b}: {g.result} {{{g.reason}}} ({g.plies} plies)", flush=True)
            if g.failure and g.failure[0] == "engine":
                print(f"!!! game {g.number}: {self.cfg.specs['engine'].name}: {g.failure[1]}: {g.failure[2]}",
                      flush=True)
            if n % self.args.report_every == 0 or decision:
                print(self.progress_line(), flush=True)
            if decision:
                print(f"SPRT: {decision['result']} at game {decision['games']} "
                      f"({decision['pairs']} pairs): LLR {decision['llr']:+.2f}, "
                      f"pentanomial {decision['pentanomial']}; games in flight finish without changing it",
                      flush=True)

    @property
    def penta(self) -> list[int]:
        return self.tally.penta

    def restarts(self) -> dict[str, int]:
        """Engine processes started again after the first start of each worker's engine."""
        return {side: sum(max(e.starts - 1, 0) for e in engs) for side, engs in self.engines_by_side.items()}

    def wdl(self) -> tuple[int, int, int]:
        w = sum(1 for g in self.games if g.tested_points() == 1.0)
        d = sum(1 for g in self.games if g.tested_points() == 0.5)
        return w, d, len(self.games) - w - d

    def elo(self) -> tuple[float, float]:
        elo, err, _ = self.tally.elo()
        return elo, err

    def progress_line(self) -> str:
        w, d, l = self.wdl()
        n = w + d + l
        s = (w + d / 2) / n if n else 0.5
        elo, err = self.elo()
        line = (f"[{n}/{2 * self.total_pairs}] {self.cfg.specs['engine'].name} vs "
                f"{self.cfg.specs['opponent'].name}: W {w} D {d} L {l}  {100 * s:.1f}%  "
                f"Elo {_fmt_elo(elo)} +/- {_fmt_err(err)}  penta {self.penta}")
        if self.args.sprt:
            lo, hi = sprt_bounds()
            line += f"  LLR {self.tally.llr():+.2f} ({lo:.2f}, {hi:.2f})"
            dec = self.tally.decision
            if dec:
                line += f" {dec['result']} at game {dec['games']} (LLR {dec['llr']:+.2f})"
        fails = self.failure_counts()["engine"]
        nf = sum(fails.values())
        if nf:
            line += f"  ENGINE FAILURES {nf}"
        return line

    def failure_counts(self) -> dict[str, Counter]:
        out = {s: Counter({k: 0 for k in FAIL_KINDS}) for s in SIDES}
        for g in self.games:
            if g.failure:
                out[g.failure[0]][g.failure[1]] += 1
        return out

    def summary(self) -> dict:
        w, d, l = self.wdl()
        n = w + d + l
        elo, err = self.elo()
        specs = self.cfg.specs
        fails = self.failure_counts()
        overruns = {s: [0, 0.0] for s in SIDES}
        times = {s: [0.0, 0, 0.0] for s in SIDES}
        min_clock = {s: math.inf for s in SIDES}
        for g in self.games:
            for s, (c, m) in g.overruns.items():
                overruns[s][0] += c
                overruns[s][1] = max(overruns[s][1], m)
            for s, (tot, cnt, mx) in g.move_times.items():
                times[s][0] += tot
                times[s][1] += cnt
                times[s][2] = max(times[s][2], mx)
            for s, c in g.min_clock.items():
                min_clock[s] = min(min_clock[s], c)
        lo, hi = sprt_bounds()
        nf_elo, nf_err, nf_basis = self.tally.elo_no_forfeit()
        opp_forfeits = sum(1 for g in self.games if g.failure and g.failure[0] == "opponent")
        dec = self.tally.decision
        return {
            "engine": {"name": specs["engine"].name, "spec": specs["engine"].spec,
                       "command": specs["engine"].cmd, "options": specs["engine"].applied},
            "opponent": {"name": specs["opponent"].name, "spec": specs["opponent"].spec,
                         "command": specs["opponent"].cmd, "options": specs["opponent"].applied},
            "time_control": self.cfg.tc.describe(),
            "openings": self.args.openings, "seed": self.seed,
            "games": n, "games_planned": 2 * self.total_pairs,
            "wins": w, "draws": d, "losses": l,
            "score": (w + d / 2) / n if n else None,
            "draw_ratio": d / n if n else None,
            "elo": None if math.isinf(elo) else elo,
            "elo_error_95": None if math.isinf(err) else err,
            "elo_model": "logistic; error from pentanomial variance (delta method)",
            "pentanomial": {"LL": self.penta[0], "LD": self.penta[1], "DD_WL": self.penta[2],
                            "WD": self.penta[3], "WW": self.penta[4], "list": list(self.penta)},
            "without_opponent_forfeits": {
                "elo": None if not math.isfinite(nf_elo) else nf_elo,
                "elo_error_95": None if math.isinf(nf_err) else nf_err,
                "basis": nf_basis,
                "opponent_forfeited_games": opp_forfeits,
                "pairs_dropped": len(self.tally.opponent_forfeit_pairs),
                "pentanomial": list(self.tally.penta_no_forfeit),
                "method": "every game pair in which the opponent lost a game by a failure (time forfeit, "
                          "illegal move, crash, stall) is dropped whole"},
            "sprt": None if not self.args.sprt else {
                "elo0": self.args.sprt[0], "elo1": self.args.sprt[1],
                "alpha": SPRT_ALPHA, "beta": SPRT_BETA, "lower": lo, "upper": hi,
                "result": dec["result"] if dec else "inconclusive",
                # the LLR of the decision (at the crossing), or the current one when undecided
                "llr": dec["llr"] if dec else self.tally.llr(),
                "decision": None if dec is None else {
                    k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in dec.items()},
                "llr_all_games": self.tally.llr(),
                "model": "exact pentanomial GSPRT, logistic Elo: constrained maximum-likelihood "
                         "estimates under each hypothesis (fishtest's LLR_logistic)"},
            "engine_restarts": self.restarts(),
            "terminations": dict(Counter(g.reason for g in self.games).most_common()),
            "failures": {s: dict(fails[s]) for s in SIDES},
            "movetime_overruns": {s: {"count": overruns[s][0], "max_ms": overruns[s][1]} for s in SIDES},
            "move_time": {s: {"avg_ms": 1000 * times[s][0] / times[s][1] if times[s][1] else None,
                              "max_ms": 1000 * times[s][2], "moves": times[s][1]} for s in SIDES},
            "min_clock_ms": {s: None if math.isinf(min_clock[s]) else 1000 * min_clock[s] for s in SIDES},
            "engine_failure_details": [
                {"game": g.number, "kind": g.failure[1], "detail": g.failure[2]}
                for g in sorted(self.games, key=lambda g: g.number) if g.failure and g.failure[0] == "engine"],
            "aborted": self.aborted, "fatal": self.fatal,
            "elapsed_s": self.resumed_seconds + time.time() - self.t_start,
            "resumed_games": self.resumed_games,
        }

    def report(self) -> dict:
        s = self.summary()
        E, O = s["engine"]["name"], s["opponent"]["name"]
        out = []
        bar = "=" * 72
        out.append(bar)
        out.append(f"Match: {E} vs {O}   {s['time_control']}   seed {s['seed']}   "
                   f"{s['elapsed_s']:.0f}s")
        out.append(f"Games: {s['games']} of {s['games_planned']} planned"
                   + (f"  ({s['resumed_games']} of them from the journal {self.journal.path})"
                      if self.journal is not None and s["resumed_games"] else "")
                   + ("  (ABORTED)" if s["aborted"] else "") + (f"  (STOPPED: {s['fatal']})" if s["fatal"] else ""))
        if s["games"]:
            out.append(f"Score of {E} vs {O}: W {s['wins']}  D {s['draws']}  L {s['losses']}  "
                       f"[{s['score']:.3f}]  {100 * s['score']:.1f}%   draw ratio {100 * s['draw_ratio']:.1f}%")
            elo, err, basis = self.tally.elo()
            out.append(f"Elo difference: {_fmt_elo(elo)} +/- {_fmt_err(err)} (95%, {basis})")
            nf = s["without_opponent_forfeits"]
            if nf["opponent_forfeited_games"]:
                nf_elo, nf_err, nf_basis = self.tally.elo_no_forfeit()
                figure = ("no game left" if math.isnan(nf_elo) else
                          f"{_fmt_elo(nf_elo)} +/- {_fmt_err(nf_err)} (95%, {nf_basis}, "
                          f"pentanomial {nf['pentanomial']})")
                out.append(f"Without the {nf['pairs_dropped']} pairs in which {O} forfeited a game "
                           f"({nf['opponent_forfeited_games']} games forfeited): {figure}")
            else:
                out.append(f"Without the opponent's forfeits: the same ({O} forfeited no game)")
            out.append(f"Pentanomial [LL, LD, DD/WL, WD, WW]: {self.penta}  ({sum(self.penta)} pairs)")
        if s["sprt"]:
            sp = s["sprt"]
            head = (f"SPRT elo0={sp['elo0']:g} elo1={sp['elo1']:g} (logistic Elo, exact pentanomial GSPRT, "
                    f"alpha={sp['alpha']:g} beta={sp['beta']:g}, bounds {sp['lower']:.2f} {sp['upper']:.2f}): ")
            dec = sp["decision"]
            if dec:
                out.append(head + f"{dec['result']} at game {dec['games']} ({dec['pairs']} pairs): "
                           f"LLR {dec['llr']:+.2f}, W {dec['wins']} D {dec['draws']} L {dec['losses']}, "
                           f"pentanomial {dec['pentanomial']}, Elo {_fmt_elo(self.tally.decision['elo'])} +/- "  # type: ignore[index]
                           f"{_fmt_err(self.tally.decision['elo_error_95'])}")  # type: ignore[index]
                if s["games"] > dec["games"]:
                    late = s["games"] - dec["games"]
                    out.append(f"  then {late} game{'s' if late > 1 else ''} in flight finished (counted above, "
                               f"not in the decision): LLR {sp['llr_all_games']:+.2f}")
            else:
                out.append(head + f"LLR {sp['llr']:+.2f} -> inconclusive")
        rs = s["engine_restarts"]
        out.append(f"Engine restarts between games: {E} {rs['engine']}, {O} {rs['opponent']}")
        if s["terminations"]:
            out.append("Terminations: " + ", ".join(f"{k} {v}" for k, v in s["terminations"].items()))
        mt = s["move_time"]
        line = "Move time avg/max (ms): " + ", ".join(
            f"{nm} {mt[sd]['avg_ms']:.0f}/{mt[sd]['max_ms']:.0f}" for sd, nm in (("engine", E), ("opponent", O))
            if mt[sd]["avg_ms"] is not None)
        if any(v is not None for v in s["min_clock_ms"].values()):
            line += "   lowest clock left (ms): " + ", ".join(
                f"{nm} {s['min_clock_ms'][sd]:.0f}" for sd, nm in (("engine", E), ("opponent", O))
                if s["min_clock_ms"][sd] is not None)
        out.append(line)
        w1 = max(len(E), 8)
        w2 = max(len(O), 8)
        out.append(f"Failures {'':14} {E:>{w1}} {O:>{w2}}")
        for k in FAIL_KINDS:
            label = FAIL_LABELS[k]
            out.append(f"  {label:22} {s['failures']['engine'][k]:>{w1}} {s['failures']['opponent'][k]:>{w2}}")
        if self.cfg.tc.movetime:
            out.append(f"  {'movetime overruns':22} {s['movetime_overruns']['engine']['count']:>{w1}} "
                       f"{s['movetime_overruns']['opponent']['count']:>{w2}}"
                       f"   (> movetime + {self.cfg.movetime_margin} ms; not forfeits)")
        nfail = sum(s["failures"]["engine"].values())
        if nfail:
            out.append("!" * 72)
            out.append(f"!!! {nfail} BUG(S) IN {E}: " + ", ".join(
                f"{v} {FAIL_LABELS[k] if v > 1 else k}" for k, v in s["failures"]["engine"].items() if v))
            for d in s["engine_failure_details"][:25]:
                out.append(f"!!!   game {d['game']}: {d['kind']}: {d['detail']}")
            if len(s["engine_failure_details"]) > 25:
                out.append(f"!!!   ... and {len(s['engine_failure_details']) - 25} more (see --json)")
            out.append("!" * 72)
        out.append(bar)
        print("\n".join(out), flush=True)
        return s

    def close(self) -> None:
        if self.pgn_file:
            self.pgn_file.close()
        if self.journal is not None:
            self.journal.close()
        self.log.close()


def _opponent_forfeit(g: GameResult) -> bool:
    return bool(g.failure and g.failure[0] == "opponent")


JOURNAL_FORMAT = "qilin-match-journal 1"


def read_journal(path: str) -> tuple[dict, list[tuple[GameResult, str]], float]:
    """A journal's settings, its games (each with its line) and the seconds of play it records.

    A last line cut short by a kill is left out: that game is played again.
    """
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        head = json.loads(lines[0])
    except ValueError:
        raise UsageError(f"--journal {path}: not a match journal")
    if not isinstance(head, dict) or head.get("format") != JOURNAL_FORMAT:
        raise UsageError(f"--journal {path}: not a match journal ({JOURNAL_FORMAT})")
    fields = {f.name for f in dataclasses.fields(GameResult)}
    found = []
    elapsed_s = 0.0
    for i, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            g = GameResult(**{k: v for k, v in rec["game"].items() if k in fields})
            if g.failure is not None:
                g.failure = tuple(g.failure)  # type: ignore[assignment]
            elapsed_s = float(rec.get("elapsed_s", elapsed_s))
        except (ValueError, KeyError, TypeError):
            if i == len(lines):  # the last line, cut short by a kill: that game is played again
                break
            raise UsageError(f"--journal {path}: line {i} is not a game record")
        found.append((g, line))
    return head.get("settings", {}), found, elapsed_s


class Journal:
    """Every finished game of a run, one JSON line each after a header that holds the run's settings.

    A run stopped from outside (the machine's session ends, the process is killed)
    goes on when started again with the same settings and the same file: the games
    of its complete pairs are counted again in the order they finished, so the SPRT
    sees the one sequence of pairs it would have seen without the stop, and only the
    pairs not yet complete are played. Other settings (another binary, option, limit,
    seed, game count or SPRT bound) are refused: that would be another run.
    """

    def __init__(self, path: str, settings: dict):
        self.path = path
        self.elapsed_s = 0.0
        found = self._load(settings) if os.path.exists(path) and os.path.getsize(path) > 0 else []
        # Only the games of complete pairs, in the order they finished: a pair cut by
        # the stop is played again whole, and its lone game must not meet its replay's.
        count = Counter(g.pair for g, _ in found)
        kept = [(g, line) for g, line in found if count[g.pair] == 2]
        self.games: list[GameResult] = [g for g, _ in kept]
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps({"format": JOURNAL_FORMAT, "settings": settings}, sort_keys=True) + "\n")
            f.writelines(line + "\n" for _, line in kept)
        os.replace(tmp, path)
        self.file = open(path, "a", encoding="utf-8")

    def _load(self, settings: dict) -> list[tuple[GameResult, str]]:
        """The games recorded (each with its line), after checking the settings."""
        theirs, found, self.elapsed_s = read_journal(self.path)
        differ = sorted(k for k in set(theirs) | set(settings) if theirs.get(k) != settings.get(k))
        if differ:
            raise UsageError(f"--journal {self.path} belongs to another run: "
                             + "; ".join(f"{k}: {theirs.get(k)!r} there, {settings.get(k)!r} now" for k in differ))
        return found

    def append(self, g: GameResult, elapsed_s: float) -> None:
        rec = dataclasses.asdict(g)
        rec.pop("pgn", None)
        self.file.write(json.dumps({"game": rec, "elapsed_s": elapsed_s}) + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def _file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def journal_settings(args: argparse.Namespace, specs: dict[str, EngineSpec], total_pairs: int,
                     seed: int) -> dict:
    """What makes a run the same run: both engines (binary bytes included), every limit, the openings."""
    def engine(sp: EngineSpec) -> dict:
        exe = sp.cmd[0] if sp.cmd else ""
        digest = _file_sha256(exe) if os.path.isfile(exe) else None
        # an option naming a file (a net, a book) is that file's bytes too
        files = {k: _file_sha256(v) for k, v in (sp.applied or {}).items() if os.path.isfile(str(v))}
        return {"command": sp.cmd, "sha256": digest, "options": sp.applied, "option_files_sha256": files}
    book = _file_sha256(args.openings)
    return {"engine": engine(specs["engine"]), "opponent": engine(specs["opponent"]),
            "tc": args.tc, "nodes": args.nodes, "depth": args.depth, "movetime": args.movetime,
            "timemargin": args.timemargin, "max_plies": args.max_plies,
            "adjudicate_draw": args.adjudicate_draw, "adjudicate_resign": args.adjudicate_resign,
            "openings_sha256": book, "seed": seed, "pairs": total_pairs, "sprt": args.sprt}


def _fmt_elo(e: float) -> str:
    if math.isnan(e):
        return "n/a"
    return "+inf" if e == math.inf else "-inf" if e == -math.inf else f"{e:+.1f}"


def _fmt_err(e: float) -> str:
    return "inf" if math.isinf(e) else f"{e:.1f}"


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Qilin strength lab match runner (game pairs, real clocks, pentanomial Elo/SPRT).",
        epilog="Engine specs: a path to a UCI binary, or sf, sf:<elo> (Stockfish with UCI_LimitStrength), "
               "ethereal, glaurung, toga2, gnuchessu. Engines get Threads=1 and Hash=16 unless told otherwise.")
    p.add_argument("--selftest", action="store_true", help="run the statistics self-test and exit")
    p.add_argument("--engine", help="engine under test (spec)")
    p.add_argument("--opponent", help="opponent engine (spec)")
    p.add_argument("--engine-opt", action="append", metavar="NAME=VALUE", help="UCI option for the engine (repeatable)")
    p.add_argument("--opponent-opt", action="append", metavar="NAME=VALUE", help="UCI option for the opponent (repeatable)")
    p.add_argument("--engine-name", help="display name of the engine (default: its UCI id name)")
    p.add_argument("--opponent-name", help="display name of the opponent")
    p.add_argument("--tc", help="clock: BASE[+INC] or MOVES/BASE[+INC] in seconds, e.g. 10+0.1, 40/150+0")
    p.add_argument("--nodes", type=int, help="go nodes N (may be combined with --tc)")
    p.add_argument("--depth", type=int, help="go depth N (may be combined with --tc)")
    p.add_argument("--movetime", type=int, metavar="MS", help="go movetime MS (overruns are recorded, not forfeited)")
    p.add_argument("--timemargin", type=int, default=0, metavar="MS",
                   help="clock tolerance before a time forfeit (default 0 ms, as cutechess)")
    p.add_argument("--movetime-margin", type=int, default=100, metavar="MS",
                   help="--movetime answers later than movetime + this are counted as overruns (default 100)")
    p.add_argument("--stall-grace", type=float, default=5.0, metavar="S",
                   help="a move is a stall when no bestmove arrives within clock (or movetime) + S seconds (default 5)")
    p.add_argument("--stall-timeout", type=float, default=60.0, metavar="S",
                   help="stall limit when there is no clock/movetime (--nodes/--depth only; default 60)")
    p.add_argument("--games", type=int, help="total games, rounded up to pairs (default 100, or 100000 with --sprt)")
    p.add_argument("--concurrency", type=int, default=2, help="games played at once (default 2)")
    p.add_argument("--openings", default=DEFAULT_BOOK, help=f"EPD opening file (default {DEFAULT_BOOK})")
    p.add_argument("--seed", type=int, help="seed for the opening order (default: random, printed)")
    p.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                   help="stop when the exact pentanomial SPRT (logistic Elo bounds, alpha=beta=0.05) decides")
    p.add_argument("--max-plies", type=int, default=600, help="draw after this many plies (default 600)")
    p.add_argument("--adjudicate-draw", nargs=3, type=int, metavar=("MOVENUMBER", "MOVECOUNT", "SCORE"),
                   help="draw when, from MOVENUMBER on, both engines report |score| <= SCORE cp for MOVECOUNT moves each (off by default)")
    p.add_argument("--adjudicate-resign", nargs=2, type=int, metavar=("MOVECOUNT", "SCORE"),
                   help="win when both engines agree the score is beyond SCORE cp for MOVECOUNT moves each (off by default)")
    p.add_argument("--pgn", help="write all games to this PGN file")
    p.add_argument("--json", help="write the summary to this JSON file")
    p.add_argument("--journal", metavar="FILE",
                   help="write each finished game to FILE; started again with the same settings and FILE, "
                        "the run goes on from its complete pairs (a match stopped from outside resumes)")
    p.add_argument("--event", default="Qilin lab match", help="PGN Event header")
    p.add_argument("--report-every", type=int, default=10, metavar="N", help="progress line every N games (default 10)")
    p.add_argument("--uci-log", metavar="FILE", help="log all UCI traffic (timestamped) to FILE")
    p.add_argument("-v", "--verbose", action="store_true", help="print a line per finished game")
    return p


def validate_engines(specs: dict[str, EngineSpec]) -> None:
    """Start each engine once: check the UCI handshake, the options, and pick names."""
    log = UciLog(None)
    for side in SIDES:
        spec = specs[side]
        eng = UciEngine(spec, side, log)
        try:
            eng.start(configure=False)
        except (EngineCrash, EngineStall) as exc:
            detail = eng.exit_info()
            eng.kill()
            raise UsageError(f"{side} '{spec.spec}': UCI handshake failed ({exc}; {detail})")
        try:
            spec.id_name = eng.id_name
            applied: dict[str, str] = {}
            for k, v in (("Threads", "1"), ("Hash", "16")):
                if k.lower() in eng.options and k.lower() not in {o.lower() for o in spec.options}:
                    applied[eng.options[k.lower()]["name"]] = v
            for k, v in spec.options.items():
                opt = eng.options.get(k.lower())
                if opt is None:
                    raise UsageError(f"{side} '{spec.spec}' has no UCI option '{k}' "
                                     f"(it has: {', '.join(o['name'] for o in eng.options.values())})")
                if opt["type"] == "spin":
                    try:
                        iv = int(v)
                    except ValueError:
                        raise UsageError(f"{side} option {k}={v}: not an integer") from None
                    lo, hi = opt.get("min", iv), opt.get("max", iv)
                    if not lo <= iv <= hi:
                        clamped = min(max(iv, lo), hi)
                        print(f"warning: {side} option {opt['name']}={iv} outside [{lo}, {hi}]; using {clamped}",
                              file=sys.stderr)
                        v = str(clamped)
                applied[opt["name"]] = v
            # Hash default may be below an engine's minimum (e.g. Toga needs >= 4): clamp quietly.
            for k in list(applied):
                opt = eng.options.get(k.lower())
                if opt and opt["type"] == "spin" and k not in spec.options:
                    iv = int(applied[k])
                    applied[k] = str(min(max(iv, opt.get("min", iv)), opt.get("max", iv)))
            spec.applied = applied
            if not spec.name:
                spec.name = eng.id_name or os.path.basename(spec.cmd[0])
        finally:
            eng.quit()
    e, o = specs["engine"], specs["opponent"]
    if e.name == o.name:  # e.g. new vs base build of the same engine: fall back to the specs
        e.name = f"{e.name} [{e.spec}]"
        o.name = f"{o.name} [{o.spec}]"


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.selftest:
        return selftest()
    if chess is None:
        print("error: python-chess is missing; run `make lab-venv` and use engine-tests/.venv/bin/python "
              "(or `make match ARGS=...`)", file=sys.stderr)
        return 2
    try:
        if not args.engine or not args.opponent:
            raise UsageError("--engine and --opponent are required")
        tc = TimeControl(nodes=args.nodes, depth=args.depth, movetime=args.movetime)
        if args.tc:
            tc.base, tc.inc, tc.moves = parse_tc(args.tc)
        if args.movetime is not None and args.tc:
            raise UsageError("--movetime and --tc are mutually exclusive")
        for flag, val in (("--nodes", args.nodes), ("--depth", args.depth), ("--movetime", args.movetime),
                          ("--concurrency", args.concurrency), ("--report-every", args.report_every),
                          ("--max-plies", args.max_plies)):
            if val is not None and val <= 0:
                raise UsageError(f"{flag} must be positive")
        if not (tc.clocked or tc.nodes or tc.depth or tc.movetime):
            raise UsageError("give a limit: --tc, --nodes, --depth or --movetime")
        if args.games is not None and args.games <= 0:
            raise UsageError("--games must be positive")
        if args.sprt and args.sprt[0] >= args.sprt[1]:
            raise UsageError("--sprt ELO0 ELO1 needs ELO0 < ELO1")
        if not os.path.isfile(args.openings):
            raise UsageError(f"--openings {args.openings}: no such file")
        adj = Adjudication(draw=tuple(args.adjudicate_draw) if args.adjudicate_draw else None,  # type: ignore[arg-type]
                           resign=tuple(args.adjudicate_resign) if args.adjudicate_resign else None)  # type: ignore[arg-type]
        specs = {
            "engine": resolve_spec(args.engine, parse_opts(args.engine_opt), args.engine_name),
            "opponent": resolve_spec(args.opponent, parse_opts(args.opponent_opt), args.opponent_name),
        }
        validate_engines(specs)
        openings = load_openings(args.openings)
        if not openings:
            raise UsageError(f"--openings {args.openings}: no usable positions")
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    games = args.games if args.games is not None else (100000 if args.sprt else 100)
    total_pairs = (games + 1) // 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    journal = None
    if args.journal:
        if args.seed is None:
            print("error: --journal needs --seed (a resumed run plays the same openings in the same order)",
                  file=sys.stderr)
            return 2
        try:
            journal = Journal(args.journal, journal_settings(args, specs, total_pairs, seed))
        except UsageError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    cfg = Config(args, tc, adj, specs)
    if args.concurrency > (os.cpu_count() or 1):
        print(f"warning: --concurrency {args.concurrency} exceeds the {os.cpu_count()} CPUs; clocks will suffer",
              file=sys.stderr)
    for side in SIDES:
        sp = specs[side]
        opts = " ".join(f"{k}={v}" for k, v in (sp.applied or {}).items())
        print(f"{side:8}: {sp.name}  ({' '.join(sp.cmd)})  {opts}")
    print(f"limit   : {tc.describe()}   games {2 * total_pairs} ({total_pairs} pairs)   concurrency "
          f"{args.concurrency}   openings {args.openings} ({len(openings)}) seed {seed}"
          + (f"   SPRT [{args.sprt[0]:g}, {args.sprt[1]:g}]" if args.sprt else ""), flush=True)

    def _interrupt(signum, frame):  # SIGINT may be ignored when started in the background
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    match = Match(cfg, openings, total_pairs, seed, journal)
    if match.resumed_games:
        print(f"resumed : {match.resumed_games} games ({len(match.done_pairs)} pairs) from {args.journal}"
              + (f"; the SPRT was decided before the stop: {match.tally.decision['result']}"
                 if match.tally.decision else ""), flush=True)
    threads = [threading.Thread(target=match.worker, args=(i,), daemon=True)
               for i in range(min(args.concurrency, total_pairs))]
    rc = 0
    try:
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.2)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping, games in progress are discarded", file=sys.stderr)
        match.aborted = True
        match.stop.set()
        with match.lock:
            engines = list(match.all_engines)
        for e in engines:
            e.kill()
        for t in threads:
            t.join(timeout=5)
        rc = 130
    summary = match.report()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
    match.close()
    if match.fatal and rc == 0:
        rc = 3
    return rc


if __name__ == "__main__":
    sys.exit(main())
