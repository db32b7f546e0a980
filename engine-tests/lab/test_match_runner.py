"""match.py end to end with tiny fake UCI engines (needs python-chess: skipped without it).

    engine-tests/.venv/bin/python -m unittest discover -s engine-tests/lab -p 'test_*.py'

The fakes answer at once, so a match of a hundred games takes seconds and no
clock matters: one plays the first legal move, one answers every `go` with the
null move (an illegal move: it loses every game), one exits at its first `go`
(a crash: the runner restarts it before the next game).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import sprt  # noqa: E402

try:
    import chess  # noqa: F401
except ImportError:
    chess = None

FAKE = '''#!{python}
import sys
import chess
MODE = {mode!r}
board = chess.Board()
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "uci":
        print("id name Fake " + MODE)
        print("option name Hash type spin default 16 min 1 max 64")
        print("uciok", flush=True)
    elif cmd[0] == "isready":
        print("readyok", flush=True)
    elif cmd[0] == "position":
        fen = " ".join(cmd[2:8]) if cmd[1] == "fen" else chess.STARTING_FEN
        board = chess.Board(fen)
        if "moves" in cmd:
            for mv in cmd[cmd.index("moves") + 1:]:
                board.push_uci(mv)
    elif cmd[0] == "go":
        if MODE == "crash":
            sys.exit(3)
        if MODE == "null":
            print("bestmove 0000", flush=True)
        else:
            print("bestmove " + next(iter(board.legal_moves)).uci(), flush=True)
    elif cmd[0] == "quit":
        break
'''


@unittest.skipIf(chess is None, "python-chess is not installed (make lab-venv)")
class MatchRunnerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def fake(self, mode: str) -> str:
        path = os.path.join(self.dir.name, f"fake_{mode}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(FAKE.format(python=sys.executable, mode=mode))
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        return path

    def run_match(self, *args: str) -> dict:
        out = os.path.join(self.dir.name, "summary.json")
        proc = subprocess.run([sys.executable, os.path.join(HERE, "match.py"), "--nodes", "1",
                               "--seed", "1", "--json", out, *args],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.stdout = proc.stdout
        with open(out, encoding="utf-8") as f:  # strict JSON: no Infinity or NaN
            return json.load(f, parse_constant=lambda c: self.fail(f"{c} in the JSON summary"))

    def test_crashing_opponent_restarted_and_its_pairs_dropped(self):
        s = self.run_match("--engine", self.fake("first"), "--opponent", self.fake("crash"),
                           "--games", "6", "--concurrency", "1")
        self.assertEqual((s["wins"], s["draws"], s["losses"]), (6, 0, 0))
        self.assertEqual(s["failures"]["opponent"]["crash"], 6)
        # one worker: the opponent's process started once, then again before games 2..6
        self.assertEqual(s["engine_restarts"], {"engine": 0, "opponent": 5})
        nf = s["without_opponent_forfeits"]
        self.assertEqual((nf["opponent_forfeited_games"], nf["pairs_dropped"]), (6, 3))
        self.assertEqual(nf["pentanomial"], [0, 0, 0, 0, 0])
        self.assertIsNone(nf["elo"])
        self.assertIn("Engine restarts between games: Fake first 0, Fake crash 5", self.stdout)

    def test_sprt_decision_recorded_at_the_crossing(self):
        s = self.run_match("--engine", self.fake("first"), "--opponent", self.fake("null"),
                           "--sprt", "100", "150", "--concurrency", "2", "--games", "1000")
        sp = s["sprt"]
        dec = sp["decision"]
        self.assertEqual(sp["result"], "H1 accepted")
        self.assertEqual(dec["wins"], dec["games"])
        self.assertEqual(dec["pentanomial"], [0, 0, 0, 0, dec["pairs"]])
        lo, hi = sprt.sprt_bounds()
        # the exact LLR of n won pairs crosses 2.944 at exactly one n
        self.assertGreaterEqual(dec["llr"], hi)
        self.assertLess(sprt.sprt_llr([0, 0, 0, 0, dec["pairs"] - 1], 100, 150), hi)
        self.assertAlmostEqual(dec["llr"], sprt.sprt_llr(dec["pentanomial"], 100, 150), places=12)
        self.assertEqual(sp["llr"], dec["llr"])
        # what finished after the crossing is in the totals only
        self.assertGreaterEqual(s["games"], dec["games"])
        self.assertAlmostEqual(sp["llr_all_games"], sprt.sprt_llr(s["pentanomial"]["list"], 100, 150), places=12)
        self.assertEqual(s["without_opponent_forfeits"]["pairs_dropped"], sum(s["pentanomial"]["list"]))

    def test_a_journal_resumes_a_stopped_run_as_the_same_run(self):
        """A run cut after 2.5 pairs and started again ends with what the whole run gives."""
        first = self.fake("first")
        args = ("--engine", first, "--opponent", first, "--games", "8", "--concurrency", "1")
        whole_path = os.path.join(self.dir.name, "whole.jsonl")
        whole = self.run_match(*args, "--journal", whole_path)
        with open(whole_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 1 + 8)  # the settings, then one line a game
        # the same run stopped after five games: pairs 0 and 1 complete, pair 2 cut
        cut_path = os.path.join(self.dir.name, "cut.jsonl")
        with open(cut_path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines[:6]) + "\n")
        resumed = self.run_match(*args, "--journal", cut_path)
        self.assertIn("resumed : 4 games (2 pairs)", self.stdout)
        self.assertEqual(resumed["resumed_games"], 4)
        for key in ("games", "wins", "draws", "losses", "pentanomial", "terminations"):
            self.assertEqual(resumed[key], whole[key], key)
        with open(cut_path, encoding="utf-8") as f:
            pairs = Counter(json.loads(line)["game"]["pair"] for line in f.read().splitlines()[1:])
        self.assertEqual(pairs, Counter({0: 2, 1: 2, 2: 2, 3: 2}))
        # another setting is another run: refused, the journal untouched
        proc = subprocess.run([sys.executable, os.path.join(HERE, "match.py"), "--nodes", "2", "--seed", "1",
                               *args, "--journal", cut_path], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("belongs to another run: nodes: 1 there, 2 now", proc.stderr)


if __name__ == "__main__":
    unittest.main()
