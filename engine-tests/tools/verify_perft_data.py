#!/usr/bin/env python3
"""Verify the node counts of a perft EPD file against a UCI engine.

Usage:
    verify_perft_data.py ENGINE EPD [--chess960] [--max-nodes N] [--timeout S]

EPD lines look like
    <FEN (4 or 6 fields)> ;D1 20 ;D2 400 ;D3 8902
("; D1 20; D2 400" is accepted too). Lines starting with '#' and blank
lines are ignored.

One engine process is started and driven over pipes. For each position
the script sends `position fen <FEN>` followed by `go perft <d>` for every
depth listed, and compares the engine's `Nodes searched: N` line with the
published count. Engines that implement `go perft` this way include
Stockfish (and engines copying its output format).

With --chess960 (or when a castling field uses file letters such as
"HAha") `setoption name UCI_Chess960 value true` is sent first.

Mismatches and engine errors are printed one per line; the last line is
a summary:
    SUMMARY positions=<n> depth_entries=<n> mismatches=<n> errors=<n>
Exit status is 0 when there are no mismatches and no errors, 1 otherwise.
"""

import argparse
import queue
import re
import subprocess
import sys
import threading
import time

NODES_RE = re.compile(r"^Nodes searched\s*:\s*(\d+)")
DEPTH_RE = re.compile(r"^D(\d+)\s+(\d+)$")


def parse_epd_line(line):
    """Return (fen, [(depth, count), ...]) or None for comments/blank lines."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    parts = line.split(";")
    fen = " ".join(parts[0].split())
    fields = fen.split(" ")
    if len(fields) == 4:
        fen += " 0 1"
    elif len(fields) != 6:
        raise ValueError("bad FEN field count: %r" % parts[0])
    entries = []
    for p in parts[1:]:
        p = p.strip()
        if not p:
            continue
        m = DEPTH_RE.match(p)
        if not m:
            raise ValueError("bad depth entry %r" % p)
        entries.append((int(m.group(1)), int(m.group(2))))
    return fen, entries


def needs_960(fen):
    castling = fen.split(" ")[2]
    return any(c not in "KQkq-" for c in castling)


class Engine:
    def __init__(self, path):
        self.path = path
        self.proc = None
        self.lines = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            [self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self.lines = queue.Queue()
        t = threading.Thread(target=self._reader, args=(self.proc, self.lines), daemon=True)
        t.start()
        self.send("uci")
        self.wait_for(lambda l: l == "uciok", 30)

    @staticmethod
    def _reader(proc, q):
        for line in proc.stdout:
            q.put(line.rstrip("\r\n"))
        q.put(None)  # EOF

    def alive(self):
        return self.proc.poll() is None

    def send(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()

    def wait_for(self, pred, timeout):
        """Read lines until pred(line) is true; return (line, seen_lines)."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timeout; last output: %r" % seen[-5:])
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise EOFError("engine exited; last output: %r" % seen[-5:])
            seen.append(line)
            if pred(line):
                return line, seen

    def isready(self, timeout=30):
        self.send("isready")
        self.wait_for(lambda l: l == "readyok", timeout)

    def perft(self, fen, depth, timeout):
        self.send("position fen " + fen)
        self.send("go perft %d" % depth)
        line, _ = self.wait_for(lambda l: NODES_RE.match(l) is not None, timeout)
        return int(NODES_RE.match(line).group(1))

    def quit(self):
        try:
            if self.alive():
                self.send("quit")
                self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("engine", help="path to a UCI engine supporting 'go perft' (e.g. Stockfish)")
    ap.add_argument("epd", help="perft EPD file")
    ap.add_argument("--chess960", action="store_true", help="set UCI_Chess960 for every position")
    ap.add_argument("--max-nodes", type=int, default=None, help="skip depth entries with more nodes than this")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds allowed per perft call")
    ap.add_argument("--quiet", action="store_true", help="do not print a progress line per position")
    args = ap.parse_args()

    eng = Engine(args.engine)
    eng.send("setoption name Threads value 1")
    eng.send("setoption name Hash value 16")
    current_960 = None

    positions = entries_checked = mismatches = errors = skipped = 0
    with open(args.epd) as f:
        for lineno, raw in enumerate(f, 1):
            try:
                parsed = parse_epd_line(raw)
            except ValueError as e:
                print("ERROR line %d: parse: %s" % (lineno, e))
                errors += 1
                continue
            if parsed is None:
                continue
            fen, entries = parsed
            positions += 1
            want_960 = args.chess960 or needs_960(fen)
            if want_960 != current_960:
                eng.send("setoption name UCI_Chess960 value %s" % ("true" if want_960 else "false"))
                current_960 = want_960
            try:
                eng.isready()
            except (TimeoutError, EOFError) as e:
                print("ERROR line %d: engine not ready: %s" % (lineno, e))
                errors += 1
                eng = Engine(args.engine)
                current_960 = None
                continue
            bad = False
            for depth, expected in entries:
                if args.max_nodes is not None and expected > args.max_nodes:
                    skipped += 1
                    continue
                try:
                    got = eng.perft(fen, depth, args.timeout)
                except (TimeoutError, EOFError) as e:
                    print("ERROR line %d: %s D%d: %s" % (lineno, fen, depth, e))
                    errors += 1
                    bad = True
                    if not eng.alive():
                        eng = Engine(args.engine)
                        current_960 = None
                    else:
                        eng.send("stop")
                    break
                entries_checked += 1
                if got != expected:
                    print("MISMATCH line %d: %s D%d expected %d got %d" % (lineno, fen, depth, expected, got))
                    mismatches += 1
                    bad = True
            if not args.quiet:
                print("%s line %d: %s (%d depths)" % ("bad" if bad else "ok ", lineno, fen, len(entries)),
                      file=sys.stderr)
    eng.quit()
    extra = " skipped=%d" % skipped if skipped else ""
    print("SUMMARY positions=%d depth_entries=%d mismatches=%d errors=%d%s"
          % (positions, entries_checked, mismatches, errors, extra))
    return 0 if mismatches == 0 and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
