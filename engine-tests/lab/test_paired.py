"""The pair-by-pair comparison of two journals held to numbers worked out by hand.

    python3 -m unittest discover -s engine-tests/lab -p 'test_paired.py'
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import paired  # noqa: E402

SETTINGS = {"seed": 7, "openings_sha256": "ab", "pairs": 3}


def _journal(directory: str, name: str, games: list[tuple[int, bool, str]], settings: dict) -> str:
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"format": paired.match.JOURNAL_FORMAT, "settings": settings}) + "\n")
        for number, (pair, white, result) in enumerate(games, start=1):
            game = {"number": number, "pair": pair, "tested_white": white, "result": result,
                    "reason": "test", "termination": "normal", "plies": 40}
            f.write(json.dumps({"game": game}) + "\n")
    return path


class PairedTest(unittest.TestCase):
    def test_hand_worked_difference(self) -> None:
        # New: pair 0 won twice (2), pair 1 one win one loss (1), pair 2 win + draw (1.5),
        # pair 3 only one game (left out). Old: 1, 1, 0.5. Differences 1, 0, 1: mean 2/3,
        # sample variance ((1/3)^2 * 2 + (2/3)^2) / 2 = 1/3, error 1.96 * sqrt(1/9) = 0.6533.
        with tempfile.TemporaryDirectory() as d:
            new = _journal(d, "new.jsonl", [
                (0, True, "1-0"), (0, False, "0-1"), (1, True, "1-0"), (1, False, "1-0"),
                (2, True, "1/2-1/2"), (2, False, "0-1"), (3, True, "1-0")], SETTINGS)
            old = _journal(d, "old.jsonl", [
                (0, True, "1/2-1/2"), (0, False, "1/2-1/2"), (1, True, "0-1"), (1, False, "0-1"),
                (2, True, "0-1"), (2, False, "1/2-1/2")], SETTINGS)
            _, a = paired.pair_points(new)
            _, b = paired.pair_points(old)
            self.assertEqual(a, {0: 2.0, 1: 1.0, 2: 1.5})
            self.assertEqual(b, {0: 1.0, 1: 1.0, 2: 0.5})
            r = paired.compare(a, b)
            assert r is not None
            self.assertEqual(r["pairs"], 3)
            self.assertAlmostEqual(r["new_score"], 4.5 / 6)
            self.assertAlmostEqual(r["old_score"], 2.5 / 6)
            self.assertAlmostEqual(r["pair_difference"], 2 / 3)
            self.assertAlmostEqual(r["pair_error"], 0.65332, places=4)
            self.assertAlmostEqual(r["game_error"], 0.32666, places=4)
            self.assertEqual(paired.main([new, old]), 0)

    def test_other_openings_refused(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            games = [(0, True, "1-0"), (0, False, "0-1"), (1, True, "1-0"), (1, False, "0-1")]
            new = _journal(d, "new.jsonl", games, SETTINGS)
            old = _journal(d, "old.jsonl", games, dict(SETTINGS, seed=8))
            self.assertEqual(paired.main([new, old]), 2)

    def test_not_a_journal(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                f.write("hello\n")
            with self.assertRaises(paired.match.UsageError):
                paired.pair_points(path)


if __name__ == "__main__":
    unittest.main()
