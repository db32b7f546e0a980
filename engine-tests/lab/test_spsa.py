"""The SPSA tuner (spsa.py) without engines: standard library only, part of `make lab-unit`.

    python3 -m unittest discover -s engine-tests/lab -p 'test_spsa.py'

- the gains and the update rule against numbers worked out by hand from OpenBench's formulas;
- the engine values: floor(x + u), clamped; the update clamped;
- a run stopped (--stop-after), then interrupted in the middle of an iteration, then resumed
  ends exactly where one uninterrupted run ends: state, trajectory CSV and SVG;
- the CSV and SVG writers, the table parser, --params and the final report.
The games are a fake: a deterministic function of the iteration and the two sides' values.
With python-chess (`make lab-test`) the tuner also runs end to end against a fake UCI engine.
"""

from __future__ import annotations

import csv
import dataclasses
import doctest
import hashlib
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import spsa  # noqa: E402

try:
    import chess  # noqa: F401
except ImportError:
    chess = None

TABLE = """\
aspiration_delta, int, 20, 5, 60, 3, 0.002
rfp_margin, int, 80, 30, 160, 6, 0.002
lmp_base, int, 3, 0, 10, 1, 0.002
time_moves_to_go, int, 25, 10, 60, 2, 0.002
"""


def load_tests(loader, tests, ignore):
    tests.addTests(doctest.DocTestSuite(spsa))
    return tests


def settings(params, iterations=12, pairs=2, seed=7):
    return {
        "engine": "fake", "iterations": iterations, "pairs_per_iter": pairs,
        "alpha": spsa.ALPHA, "gamma": spsa.GAMMA, "a_ratio": spsa.A_RATIO,
        "seed": seed, "limit": "nodes 2000", "openings": "book.epd", "concurrency": 1,
        "params": [dataclasses.asdict(p) for p in params],
    }


def fake_play(k, plus, minus):
    """W/D/L of plus over 2 pairs: plus scores better the closer rfp_margin is to 100 (a
    made-up optimum), with noise from a hash of everything it is given."""
    h = hashlib.sha256(json.dumps([k, plus, minus], sort_keys=True).encode()).digest()
    edge = abs(minus["rfp_margin"] - 100) - abs(plus["rfp_margin"] - 100)
    w = min(4, max(0, (h[0] % 3) + (1 if edge > 0 else 0)))
    l = min(4 - w, h[1] % 2 + (1 if edge < 0 else 0))
    return w, 4 - w - l, l


class Table(unittest.TestCase):
    def test_parse(self):
        params = spsa.parse_table("# a comment\n\n" + TABLE)
        self.assertEqual([p.name for p in params], ["aspiration_delta", "rfp_margin", "lmp_base", "time_moves_to_go"])
        self.assertEqual(params[1], spsa.Param("rfp_margin", 80.0, 30.0, 160.0, 6.0, 0.002))

    def test_bad_tables(self):
        for text in ("x, int, 5, 0, 10, 1\n", "x, float, 5, 0, 10, 1, 0.002\n", "x, int, 11, 0, 10, 1, 0.002\n",
                     "x, int, 5, 0, 10, 0, 0.002\n", "x, int, five, 0, 10, 1, 0.002\n",
                     "x, int, 5, 0, 10, 1, 0.002\nx, int, 5, 0, 10, 1, 0.002\n", "\n"):
            with self.assertRaises(spsa.UsageError, msg=text):
                spsa.parse_table(text)

    def test_select(self):
        params = spsa.parse_table(TABLE)
        notes = []
        self.assertEqual([p.name for p in spsa.select(params, None, clocked=False, log=notes.append)],
                         ["aspiration_delta", "rfp_margin", "lmp_base"])
        self.assertEqual(len(notes), 1)
        self.assertEqual(len(spsa.select(params, None, clocked=True)), 4)
        chosen = spsa.select(params, ["lmp_base,rfp_*", "time_moves_to_go"], clocked=False)
        self.assertEqual([p.name for p in chosen], ["rfp_margin", "lmp_base", "time_moves_to_go"])
        with self.assertRaises(spsa.UsageError):
            spsa.select(params, ["no_such"], clocked=False)


class Gains(unittest.TestCase):
    # c_end 6, r_end 0.002, N = 100 iterations: A = 10,
    # c = 6 * 100^0.101 = 9.55325, a = 0.002 * 36 * 110^0.602 = 1.21969.
    P = spsa.Param("rfp_margin", 80, 30, 160, 6, 0.002)
    S = spsa.Schedule(100)

    def test_constants(self):
        self.assertAlmostEqual(self.S.big_a, 10.0)
        self.assertAlmostEqual(self.S.c(self.P), 9.55325, places=4)
        self.assertAlmostEqual(self.S.a(self.P), 1.21969, places=4)

    def test_first_middle_last(self):
        # k = 0: c_0 = c, a_0 = a / 11^0.602 = 0.287960.
        self.assertAlmostEqual(self.S.c_k(self.P, 0), 9.55325, places=4)
        self.assertAlmostEqual(self.S.a_k(self.P, 0), 0.287960, places=5)
        # k = 49: c / 50^0.101 = 6.43510, a / 60^0.602 = 0.103706.
        self.assertAlmostEqual(self.S.c_k(self.P, 49), 6.43510, places=4)
        self.assertAlmostEqual(self.S.a_k(self.P, 49), 0.103706, places=5)
        # k = N-1: c_k = c_end and a_k / c_k^2 = r_end exactly (what c and a are made for).
        self.assertAlmostEqual(self.S.c_k(self.P, 99), 6.0, places=9)
        self.assertAlmostEqual(self.S.a_k(self.P, 99) / 6.0 ** 2, 0.002, places=12)

    def test_integer_floor_of_c(self):
        small = spsa.Param("x", 5, 0, 10, 0.3, 0.002)
        # c_0 = 0.3 * 100^0.101 = 0.4777 and c_99 = 0.3: both below half a unit, so 0.5.
        self.assertEqual(self.S.c_k(small, 0), 0.5)
        self.assertEqual(self.S.c_k(small, 99), 0.5)
        self.assertAlmostEqual(self.S.c_k(spsa.Param("y", 5, 0, 10, 0.4, 0.002), 0), 0.63689, places=4)

    def test_update_rule(self):
        params = [self.P, spsa.Param("lmp_base", 3, 0, 10, 1, 0.002)]
        theta = {"rfp_margin": 80.0, "lmp_base": 3.0}
        pert = spsa.Perturbation(signs=[1, -1], c=[self.S.c_k(p, 0) for p in params], plus={}, minus={})
        # r = +2 (plus won 2 more): rfp_margin += a_0 * 2 / (c_0 * +1) = +0.0602853;
        # lmp_base: c_0 = 100^0.101 = 1.59222, a_0 = 0.002 * 110^0.602 / 11^0.602 = 0.0079989,
        # += a_0 * 2 / (c_0 * -1) = -0.0100475.
        moved = spsa.update(params, theta, pert, 0, self.S, 2)
        self.assertAlmostEqual(moved["rfp_margin"], 80.0602853, places=6)
        self.assertAlmostEqual(moved["lmp_base"], 2.9899525, places=6)
        # The last iteration: a game won moves by r_end * c_end = 0.012 (rfp_margin).
        pert = spsa.Perturbation(signs=[-1, 1], c=[6.0, 1.0], plus={}, minus={})
        moved = spsa.update(params, theta, pert, 99, self.S, 1)
        self.assertAlmostEqual(moved["rfp_margin"], 80.0 - 0.012, places=9)
        self.assertAlmostEqual(moved["lmp_base"], 3.0 + 0.002, places=9)

    def test_update_is_clamped(self):
        params = [self.P]
        pert = spsa.Perturbation(signs=[1], c=[1.0], plus={}, minus={})
        self.assertEqual(spsa.update(params, {"rfp_margin": 159.99}, pert, 0, self.S, 1000)["rfp_margin"], 160.0)
        self.assertEqual(spsa.update(params, {"rfp_margin": 30.01}, pert, 0, self.S, -1000)["rfp_margin"], 30.0)


class Rounding(unittest.TestCase):
    def test_engine_value(self):
        p = spsa.Param("x", 5, 0, 10, 1, 0.002)
        self.assertEqual(spsa.engine_value(5.0 + 1.3, 0.5, p), 6)   # floor(6.8)
        self.assertEqual(spsa.engine_value(5.0 - 1.3, 0.5, p), 4)   # floor(4.2)
        self.assertEqual(spsa.engine_value(5.0 + 1.3, 0.75, p), 7)  # floor(7.05)
        self.assertEqual(spsa.engine_value(5.0 - 1.3, 0.25, p), 3)  # floor(3.95)
        self.assertEqual(spsa.engine_value(-0.5, 0.4, p), 0)        # clamped up
        self.assertEqual(spsa.engine_value(10.6, 0.9, p), 10)       # clamped down
        self.assertIsInstance(spsa.engine_value(3.2, 0.1, p), int)

    def test_tuned_value(self):
        p = spsa.Param("x", 5, 0, 10, 1, 0.002)
        self.assertEqual([spsa.tuned_value(p, x) for x in (4.49, 4.5, 5.5, -1.0, 10.7)], [4, 5, 6, 0, 10])

    def test_perturb(self):
        params = spsa.parse_table(TABLE)
        theta = {p.name: p.start for p in params}
        theta["lmp_base"] = 0.2  # near its minimum: minus is clamped there
        s = spsa.Schedule(50)
        a = spsa.perturb(params, theta, 3, s, seed=11)
        self.assertEqual(a, spsa.perturb(params, theta, 3, s, seed=11))  # the seed and k decide
        self.assertNotEqual([spsa.perturb(params, theta, k, s, seed=11).signs for k in range(8)],
                            [a.signs] * 8)
        for p, d, c in zip(params, a.signs, a.c):
            self.assertIn(d, (1, -1))
            self.assertEqual(c, s.c_k(p, 3))
            hi, lo = (a.plus[p.name], a.minus[p.name]) if d == 1 else (a.minus[p.name], a.plus[p.name])
            self.assertTrue(p.min <= lo <= hi <= p.max)
            if p.name != "lmp_base":
                # Same u on both sides: the gap is floor or ceil of 2c.
                self.assertIn(hi - lo, (int(2 * c), int(2 * c) + 1))
                self.assertTrue(abs((hi + lo) / 2 - theta[p.name]) <= 1)
        self.assertEqual(min(a.plus["lmp_base"], a.minus["lmp_base"]), 0)


class Resume(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.params = spsa.parse_table(TABLE)[:3]
        self.settings = settings(self.params)

    def tearDown(self):
        self.dir.cleanup()

    def paths(self, name):
        base = os.path.join(self.dir.name, name)
        return base + ".json", base + ".csv", base + ".svg"

    def read(self, name):
        st, cv, sv = self.paths(name)
        with open(st) as f:
            state = json.load(f)
        state.pop("elapsed_s")
        with open(cv) as f:
            csv_text = f.read()
        with open(sv) as f:
            svg_text = f.read()
        return state, csv_text, svg_text

    def test_interrupted_run_resumed_equals_uninterrupted(self):
        quiet = [].append
        spsa.run(self.settings, *self.paths("whole"), fake_play, log=quiet)

        spsa.run(self.settings, *self.paths("parts"), fake_play, stop_after=4, log=quiet)
        self.assertEqual(self.read("parts")[0]["iteration"], 4)

        def interrupted(k, plus, minus):
            if k == 7:
                raise KeyboardInterrupt  # Ctrl-C during iteration 8's games
            return fake_play(k, plus, minus)

        with self.assertRaises(KeyboardInterrupt):
            spsa.run(self.settings, *self.paths("parts"), interrupted, log=quiet)
        self.assertEqual(self.read("parts")[0]["iteration"], 7)  # only the iteration in flight is lost

        # An interrupt after the CSV row but before the state: the row is dropped on resume.
        spsa.append_trajectory(self.paths("parts")[1], ["8", "1.0", "2.0", "3.0"])
        lines = []
        spsa.run(self.settings, *self.paths("parts"), fake_play, log=lines.append)
        self.assertIn("resuming", lines[0])
        whole, parts = self.read("whole"), self.read("parts")
        self.assertEqual(whole, parts)
        self.assertEqual(whole[0]["iteration"], 12)
        self.assertEqual(whole[0]["games"], 48)
        self.assertNotEqual(whole[0]["theta"], {p.name: p.start for p in self.params})
        rows = list(csv.reader(whole[1].splitlines()))
        self.assertEqual(rows[0], ["iteration", "aspiration_delta", "rfp_margin", "lmp_base"])
        self.assertEqual([r[0] for r in rows[1:]], [str(k) for k in range(13)])
        self.assertEqual(rows[1][1:], ["20.0000", "80.0000", "3.0000"])

        # A finished run resumed plays nothing and changes nothing.
        spsa.run(self.settings, *self.paths("parts"), lambda *a: self.fail("played"), log=quiet)
        self.assertEqual(self.read("parts"), whole)

    def test_a_new_state_replaces_an_old_trajectory(self):
        st, cv, _ = self.paths("n")
        names = [p.name for p in self.params]
        spsa.write_trajectory(cv, names, [spsa.trajectory_row(k, names, {n: 1.0 for n in names})
                                          for k in range(30)])
        spsa.run(self.settings, st, cv, self.paths("n")[2], fake_play, stop_after=2, log=[].append)
        rows = spsa.read_trajectory(cv, names, 100)
        self.assertEqual([r[0] for r in rows], ["0", "1", "2"])
        self.assertEqual(rows[0][1:], ["20.0000", "80.0000", "3.0000"])

    def test_resume_with_other_settings_is_refused(self):
        quiet = [].append
        spsa.run(self.settings, *self.paths("a"), fake_play, stop_after=2, log=quiet)
        other = dict(self.settings, iterations=20)
        with self.assertRaises(spsa.UsageError) as cm:
            spsa.run(other, *self.paths("a"), fake_play, log=quiet)
        self.assertIn("iterations: 12 in the state, 20 now", str(cm.exception))
        fewer = dict(self.settings, params=self.settings["params"][1:])
        moved = json.loads(json.dumps(self.settings))
        moved["params"][1]["start"] = 85.0
        with self.assertRaises(spsa.UsageError) as cm:
            spsa.run(fewer, *self.paths("a"), fake_play, log=quiet)
        self.assertIn("params: not tuned now: aspiration_delta", str(cm.exception))
        with self.assertRaises(spsa.UsageError) as cm:
            spsa.run(moved, *self.paths("a"), fake_play, log=quiet)
        self.assertIn("rfp_margin: {", str(cm.exception))
        # What may change between sessions: the engine path, the concurrency.
        spsa.run(dict(self.settings, engine="rebuilt", concurrency=4), *self.paths("a"), fake_play,
                 stop_after=1, log=quiet)
        self.assertEqual(self.read("a")[0]["iteration"], 3)

    def test_progress_and_final_report(self):
        lines = []
        state = spsa.run(self.settings, *self.paths("r"), fake_play, log=lines.append)
        self.assertEqual(len(lines), 12)
        self.assertTrue(lines[-1].startswith("[12/12] games 48  plus W "), lines[-1])
        self.assertIn("ETA 0:00:00", lines[-1])
        report = spsa.final_report(self.settings, state)
        self.assertTrue(report.startswith("Tuned values: 48 games"))
        self.assertIn("rfp_margin                   80     80  (80.22, +0.04)", report)
        self.assertTrue(report.endswith("No parameter moved by a whole unit: nothing to test or paste."))
        state["theta"] = {"aspiration_delta": 19.4, "rfp_margin": 91.6, "lmp_base": 3.2}
        state["iteration"] = 5
        report = spsa.final_report(self.settings, state).splitlines()
        self.assertTrue(report[0].startswith("Values so far (iteration 5 of 12; the same command resumes)"))
        self.assertEqual(report[-5:], [
            "For src/search/params.rs, the 2 lines that change (the doc comments stay):",
            "    aspiration_delta = 19, 5..=60, 3;",
            "    rfp_margin = 92, 30..=160, 6;",
            "For an SPRT with match.py (the same tune build on both sides, the opponent at the values before):",
            "  --engine-opt aspiration_delta=19 --engine-opt rfp_margin=92"])


class Writers(unittest.TestCase):
    def test_csv_reconcile(self):
        params = spsa.parse_table(TABLE)[:2]
        names = [p.name for p in params]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.csv")
            rows = [spsa.trajectory_row(k, names, {"aspiration_delta": 20 + k, "rfp_margin": 80 - k / 3})
                    for k in range(5)]
            spsa.write_trajectory(path, names, rows)
            with open(path) as f:
                self.assertEqual(f.readline(), "iteration,aspiration_delta,rfp_margin\n")
                self.assertEqual(f.readline(), "0,20.0000,80.0000\n")
            self.assertEqual(spsa.read_trajectory(path, names, 10), rows)
            self.assertEqual(spsa.read_trajectory(path, names, 2), rows[:3])
            self.assertEqual(spsa.read_trajectory(path, ["other", "rfp_margin"], 10), [])
            with open(path, "a") as f:
                f.write("5,21.0")  # a row cut short by a kill
            self.assertEqual(spsa.read_trajectory(path, names, 10), rows)
            state = {"iteration": 3, "theta": {}}
            spsa.reconcile_trajectory(path, params, state, log=[].append)
            self.assertEqual(spsa.read_trajectory(path, names, 10), rows[:4])
            # A CSV lost (or of other columns): it starts again at the state's iteration, and
            # that shorter trajectory is kept from then on.
            os.remove(path)
            notes = []
            state = {"iteration": 4, "theta": {"aspiration_delta": 21.5, "rfp_margin": 79.0}}
            spsa.reconcile_trajectory(path, params, state, log=notes.append)
            self.assertEqual(len(notes), 1)
            spsa.append_trajectory(path, spsa.trajectory_row(5, names, state["theta"]))
            state["iteration"] = 5
            spsa.reconcile_trajectory(path, params, state, log=notes.append)
            self.assertEqual(len(notes), 1)
            self.assertEqual(spsa.read_trajectory(path, names, 10),
                             [["4", "21.5000", "79.0000"], ["5", "21.5000", "79.0000"]])

    def test_svg(self):
        params = [spsa.Param("a<b", 5, 0, 10, 1, 0.002), spsa.Param("c", 100, 50, 150, 10, 0.002)]
        rows = [[str(k), f"{5 + k / 1000:.4f}", f"{100 - k / 100:.4f}"] for k in range(2001)]
        text = spsa.svg_trajectories(params, rows, 4000, "SPSA & test", max_points=100)
        root = ET.fromstring(text)  # well-formed, the name and title escaped
        ns = {"s": "http://www.w3.org/2000/svg"}
        lines = root.findall("s:polyline", ns)
        self.assertEqual([pl.find("s:title", ns).text for pl in lines], ["a<b", "c"])
        self.assertIn("SPSA & test", [t.text for t in root.findall("s:text", ns)])
        for pl in lines:
            pts = [tuple(map(float, xy.split(","))) for xy in pl.get("points").split()]
            self.assertLessEqual(len(pts), 102)  # downsampled, the last point kept
            self.assertEqual(pts[0][0], 56.0)  # iteration 0 at the left edge
            self.assertAlmostEqual(pts[-1][0], 56 + 1024 * 2000 / 4000, places=1)  # halfway
            ys = [y for _, y in pts]
            self.assertTrue(all(40 <= y <= 440 for y in ys))
        # a = 5 is the middle of 0..10: y = 40 + 400 * 0.5; c moves down its range from the middle.
        first = [tuple(map(float, xy.split(","))) for xy in lines[0].get("points").split()][0]
        self.assertAlmostEqual(first[1], 240.0)
        # No rows yet (a run that has not started): still a picture.
        ET.fromstring(spsa.svg_trajectories(params, [], 10, "empty"))


# A tune build as the tuner sees it: `spsa-params`, spin options, and a game it loses (by an
# illegal move) whenever its x is below 50, so plus wins exactly when its sign for x is +1.
FAKE = '''#!{python}
import sys
import chess
if sys.argv[1:] == ["spsa-params"]:
    print("x, int, 50, 0, 100, 5, 0.002")
    print("y, int, 5, 0, 10, 1, 0.002")
    sys.exit(0)
options = {{"x": 50, "y": 5}}
board = chess.Board()
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "uci":
        print("id name Fake tune")
        print("option name Hash type spin default 16 min 1 max 64")
        print("option name x type spin default 50 min 0 max 100")
        print("option name y type spin default 5 min 0 max 10")
        print("uciok", flush=True)
    elif cmd[0] == "setoption" and cmd[2] in options:
        options[cmd[2]] = int(cmd[4])
    elif cmd[0] == "isready":
        print("readyok", flush=True)
    elif cmd[0] == "position":
        board = chess.Board(" ".join(cmd[2:8]))
        if "moves" in cmd:
            for mv in cmd[cmd.index("moves") + 1:]:
                board.push_uci(mv)
    elif cmd[0] == "go":
        move = next(iter(board.legal_moves)).uci() if options["x"] >= 50 else "0000"
        print("info depth 1 score cp 0 nodes 1")
        print("bestmove " + move, flush=True)
    elif cmd[0] == "quit":
        break
'''


@unittest.skipIf(chess is None, "python-chess is not installed (make lab-venv)")
class EndToEnd(unittest.TestCase):
    def test_a_fake_tune_build(self):
        with tempfile.TemporaryDirectory() as d:
            engine = os.path.join(d, "fake")
            with open(engine, "w", encoding="utf-8") as f:
                f.write(FAKE.format(python=sys.executable))
            os.chmod(engine, os.stat(engine).st_mode | stat.S_IEXEC)
            state = os.path.join(d, "run", "state.json")
            cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "spsa.py"),
                   "--engine", engine, "--iterations", "4", "--pairs-per-iter", "2", "--concurrency", "2",
                   "--nodes", "1", "--seed", "3", "--state", state, "--pgn", os.path.join(d, "run", "g.pgn")]
            first = subprocess.run(cmd + ["--stop-after", "3"], capture_output=True, text=True, timeout=120)
            self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
            self.assertIn("[3/4] games 12", first.stdout)
            self.assertIn("Values so far (iteration 3 of 4", first.stdout)
            second = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
            self.assertIn("resuming", second.stdout)
            self.assertIn("[4/4] games 16", second.stdout)
            self.assertIn("Tuned values: 16 games", second.stdout)
            with open(state, encoding="utf-8") as f:
                st = json.load(f)
            self.assertEqual((st["iteration"], st["games"], st["draws"]), (4, 16, 0))
            self.assertEqual(st["failures"], 16)  # every game ends with the loser's null move
            # Whatever the sign d, the side with the higher x won all 4 games: r = 4d, and x rose
            # by a_k * 4d / (c_k * d) = 4 a_k / c_k each iteration.
            s = spsa.Schedule(4)
            p = spsa.Param("x", 50, 0, 100, 5, 0.002)
            rise = sum(4 * s.a_k(p, k) / s.c_k(p, k) for k in range(4))
            self.assertAlmostEqual(st["theta"]["x"], 50 + rise, places=9)
            with open(os.path.join(d, "run", "g.pgn"), encoding="utf-8") as f:
                self.assertEqual(f.read().count("[Event "), 16)
            for ext in (".csv", ".svg"):
                self.assertTrue(os.path.getsize(os.path.join(d, "run", "state" + ext)) > 0)


if __name__ == "__main__":
    unittest.main()
