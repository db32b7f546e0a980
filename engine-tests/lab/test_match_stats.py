"""The lab's statistics held to independently known numbers (standard library only).

    python3 -m unittest discover -s engine-tests/lab -p 'test_*.py'

- Elo and its error bar of the final match of the reading of the search
  (2026-12-03), as fishtest computes them;
- the exact LLR against a brute-force maximization written here (coordinate ascent
  with golden-section line searches over the constrained simplex, not the
  Lagrange/secular-equation solution of sprt.py);
- the exact LLR against LLRs fishtest published in Stockfish's commit messages for
  tests with logistic-Elo bounds (written with braces, `{elo0,elo1}`, 2020-2021);
- this project's old records, whose LLR was the Gaussian approximation;
- the bookkeeping of the runner: a decision frozen at the crossing, opponent
  forfeits dropped by pairs.
"""

from __future__ import annotations

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import sprt  # noqa: E402

GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _distribution(free: list[float], score: float) -> list[float]:
    """q0, q1, q2 given; q3 and q4 follow from sum q = 1 and mean score = score."""
    q0, q1, q2 = free
    rest = 1.0 - q0 - q1 - q2  # q3 + q4
    mass = score - 0.25 * q1 - 0.5 * q2  # 0.75 q3 + q4
    return [q0, q1, q2, 4.0 * rest - 4.0 * mass, 4.0 * mass - 3.0 * rest]


def _log_likelihood(counts: list[float], q: list[float]) -> float:
    if min(q) <= 0.0:
        return -math.inf
    return sum(c * math.log(x) for c, x in zip(counts, q))


def brute_force_max_log_likelihood(counts: list[float], score: float) -> float:
    """max sum n_i ln q_i over 5-bin distributions q with mean score `score`.

    The log-likelihood is concave in (q0, q1, q2), so coordinate ascent (each
    coordinate maximized by golden-section search over the interval that keeps
    every q_i positive) climbs to the maximum.
    """
    lam = min(score, 1.0 - score)  # a start inside: uniform mixed with a 0/1 law
    two_point_mean = (score - lam / 2.0) / (1.0 - lam)
    free = [lam / 5.0 + (1.0 - lam) * (1.0 - two_point_mean), lam / 5.0, lam / 5.0]
    best = _log_likelihood(counts, _distribution(free, score))
    assert best > -math.inf
    for _ in range(5000):
        before = best
        for j in range(3):
            def at(t: float, j: int = j) -> list[float]:
                f = list(free)
                f[j] = t
                return _distribution(f, score)

            # each q_i is affine in the coordinate: find where all stay positive
            lo, hi = 0.0, 1.0
            for x0, x1 in zip(at(0.0), at(1.0)):
                slope = x1 - x0
                if slope > 0:
                    lo = max(lo, -x0 / slope)
                elif slope < 0:
                    hi = min(hi, -x0 / slope)
            a, b = lo, hi
            c, d = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
            fc, fd = _log_likelihood(counts, at(c)), _log_likelihood(counts, at(d))
            for _ in range(60):
                if fc >= fd:
                    b, d, fd = d, c, fc
                    c = b - GOLDEN * (b - a)
                    fc = _log_likelihood(counts, at(c))
                else:
                    a, c, fc = c, d, fd
                    d = a + GOLDEN * (b - a)
                    fd = _log_likelihood(counts, at(d))
            t = 0.5 * (a + b)
            value = _log_likelihood(counts, at(t))
            if value > best:
                free[j], best = t, value
        if best - before < 1e-11:
            break
    return best


def brute_force_llr(penta: list[int], elo0: float, elo1: float) -> float:
    counts = [float(c) if c else 1e-3 for c in penta]  # fishtest's regularization
    return (brute_force_max_log_likelihood(counts, sprt.elo_to_score(elo1))
            - brute_force_max_log_likelihood(counts, sprt.elo_to_score(elo0)))


# This project's SPRT records, as the README gave them (pentanomial, bounds, the
# Gaussian LLR printed then) with the exact LLR (checked against the brute force
# above to 1e-6).
RECORDS = {
    "s19b": ([23, 55, 84, 82, 50], (0, 10), 3.02, 2.8736),
    "s19c": ([8, 29, 53, 51, 31], (0, 10), 2.98, 2.6845),
    "raz2": ([30, 69, 93, 35, 20], (0, 10), -2.97, -2.7483),
    "first net": ([0, 3, 22, 33, 43], (100, 150), 15.95, 9.5247),
}

# Published by fishtest in Stockfish commit messages (LLR rounded to 2 decimals),
# logistic-Elo bounds: (pentanomial, elo0, elo1, LLR, commit).
FISHTEST_LOGISTIC = [
    ([406, 8728, 41933, 8848, 493], -0.20, 1.10, 2.94, "6ad4f485d"),
    ([13, 1176, 17184, 1178, 21], 0.25, 1.25, -3.00, "508906165"),
    ([14, 533, 7138, 604, 11], -0.75, 0.25, 2.96, "045728a7d"),
    ([4, 149, 1191, 251, 5], 0.25, 1.75, 2.98, "3dca13a95"),
    ([21, 294, 819, 404, 46], -0.50, 1.50, 2.95, "3dca13a95"),
    ([66, 446, 912, 563, 109], -1.50, 0.50, 2.95, "c6ce612f0"),
    ([87, 1184, 4664, 1344, 93], -0.25, 1.25, 2.95, "1dbd2a1ad"),
]


class EloTest(unittest.TestCase):
    def test_final_match_of_the_search_reading(self):
        # The 1,000-game match: fishtest's figures for this pentanomial are
        # +75.88 and a 95% half-width of 14.32 (normal approximation).
        elo, err = sprt.elo_with_error([8, 62, 191, 185, 54])
        self.assertAlmostEqual(elo, 75.88, places=2)
        self.assertAlmostEqual(err, 14.32, places=2)

    def test_score_elo_round_trip(self):
        self.assertAlmostEqual(sprt.score_to_elo(0.75), 400 * math.log10(3), places=12)
        self.assertAlmostEqual(sprt.elo_to_score(sprt.score_to_elo(0.6123)), 0.6123, places=12)

    def test_trinomial_of_split_pairs_equals_pentanomial(self):
        # pairs whose games are independent (LL, WL, WW as 1:2:1): same error either way;
        # pairs all LL or WW (games as alike as can be) have the error of half as many games
        self.assertAlmostEqual(sprt.elo_with_error([25, 0, 50, 0, 25])[1],
                               sprt.wdl_elo_with_error(100, 0, 100)[1], places=9)
        self.assertAlmostEqual(sprt.elo_with_error([25, 0, 0, 0, 25])[1],
                               sprt.wdl_elo_with_error(25, 0, 25)[1], places=9)


class ExactLlrTest(unittest.TestCase):
    def test_constrained_estimate_has_the_mean_and_sums_to_one(self):
        for penta, (e0, e1), _, _ in RECORDS.values():
            for elo in (e0, e1):
                q = sprt.mle_with_mean(sprt.regularized(penta), sprt.elo_to_score(elo))
                self.assertAlmostEqual(sum(q), 1.0, places=12)
                self.assertAlmostEqual(sum(a * x for a, x in zip(sprt.BIN_SCORES, q)),
                                       sprt.elo_to_score(elo), places=12)

    def test_against_brute_force_maximization(self):
        for name, (penta, (e0, e1), _, _) in RECORDS.items():
            with self.subTest(name):
                self.assertAlmostEqual(sprt.sprt_llr(penta, e0, e1), brute_force_llr(penta, e0, e1),
                                       places=6)

    def test_fishtest_published_logistic_llrs(self):
        # 562 of the 564 such cases in Stockfish's history agree to the rounding; the
        # two that do not (January 2020, bounds {-1,3}) are off by 0.006 and 0.007.
        # The Gaussian shortcut misses 84 of the 564.
        for penta, e0, e1, published, commit in FISHTEST_LOGISTIC:
            with self.subTest(commit):
                self.assertLessEqual(abs(sprt.sprt_llr(penta, e0, e1) - published), 0.005 + 1e-9)

    def test_gaussian_shortcut_misses_fishtest(self):
        # The approximation used before is not what fishtest computes: 3.05 for a published 2.98.
        penta, e0, e1, published, _ = FISHTEST_LOGISTIC[3]
        self.assertGreater(sprt.sprt_llr_gaussian(penta, e0, e1) - published, 0.05)

    def test_old_records(self):
        lo, hi = sprt.sprt_bounds()
        for name, (penta, (e0, e1), printed, exact) in RECORDS.items():
            with self.subTest(name):
                # the pentanomial is the one that produced the printed figure ...
                self.assertAlmostEqual(sprt.sprt_llr_gaussian(penta, e0, e1), printed, delta=0.005)
                # ... and the exact LLR is smaller in size
                self.assertAlmostEqual(sprt.sprt_llr(penta, e0, e1), exact, delta=5e-5)
        # s19b, s19c and raz2 had not reached a bound; the first net had, far beyond it
        self.assertTrue(lo < sprt.sprt_llr(*RECORDS["s19b"][:1], 0, 10) < hi)
        self.assertTrue(lo < sprt.sprt_llr(*RECORDS["s19c"][:1], 0, 10) < hi)
        self.assertTrue(lo < sprt.sprt_llr(*RECORDS["raz2"][:1], 0, 10) < hi)
        self.assertEqual(sprt.sprt_state(sprt.sprt_llr([0, 3, 22, 33, 43], 100, 150)), "H1 accepted")

    def test_few_pairs_cannot_decide(self):
        # The Gaussian form put one pair won twice past any bound; the exact LLR
        # grows by a bounded step per pair.
        self.assertLess(sprt.sprt_llr([0, 0, 0, 0, 1], 0, 5), 0.02)
        self.assertGreater(sprt.sprt_llr_gaussian([0, 0, 0, 0, 5], 0, 5), 40)
        self.assertLess(sprt.sprt_llr([0, 0, 0, 0, 5], 0, 5), 0.1)

    def test_symmetry(self):
        penta = [30, 69, 93, 35, 20]
        self.assertAlmostEqual(sprt.sprt_llr(penta, 0, 10), -sprt.sprt_llr(penta[::-1], -10, 0), places=9)


class PairTallyTest(unittest.TestCase):
    @staticmethod
    def _pair_points(bin_: int) -> tuple[float, float]:
        return {0: (0.0, 0.0), 1: (0.0, 0.5), 2: (1.0, 0.0), 3: (0.5, 1.0), 4: (1.0, 1.0)}[bin_]

    def test_decision_frozen_at_the_crossing(self):
        tally = sprt.PairTally((0, 10))
        pair = 0
        decision = None
        # win pairs until the bound is crossed
        while decision is None:
            tally.add_game(pair, 1.0)
            decision = tally.add_game(pair, 1.0 if pair % 3 else 0.5)
            pair += 1
        self.assertEqual(decision["result"], "H1 accepted")
        self.assertGreaterEqual(decision["llr"], sprt.sprt_bounds()[1])
        # one pair less had not crossed
        before = list(decision["pentanomial"])
        last_bin = 4 if (pair - 1) % 3 else 3
        before[last_bin] -= 1
        self.assertLess(sprt.sprt_llr(before, 0, 10), sprt.sprt_bounds()[1])
        frozen = dict(decision)
        # games in flight finish: the totals move, the decision does not
        for p in range(pair, pair + 5):
            self.assertIsNone(tally.add_game(p, 0.0))
            self.assertIsNone(tally.add_game(p, 0.0))
        self.assertEqual(tally.decision, frozen)
        self.assertEqual(tally.decision["games"], 2 * pair)
        self.assertNotEqual(tally.llr(), frozen["llr"])
        self.assertEqual(sum(tally.penta), pair + 5)

    def test_pairs_with_an_opponent_forfeit_dropped(self):
        tally = sprt.PairTally()
        for p, bin_ in enumerate([0, 1, 2, 2, 3, 4, 4, 4]):
            a, b = self._pair_points(bin_)
            tally.add_game(p, a, opponent_forfeit=p >= 6)
            tally.add_game(p, b)
        self.assertEqual(tally.penta, [1, 1, 2, 1, 3])
        self.assertEqual(tally.penta_no_forfeit, [1, 1, 2, 1, 1])
        self.assertEqual(tally.opponent_forfeit_pairs, {6, 7})
        self.assertEqual(tally.elo()[:2], sprt.elo_with_error([1, 1, 2, 1, 3]))
        self.assertEqual(tally.elo_no_forfeit()[:2], sprt.elo_with_error([1, 1, 2, 1, 1]))
        self.assertLess(tally.elo_no_forfeit()[0], tally.elo()[0])
        self.assertEqual(tally.wdl_no_forfeit, [5, 2, 5])

    def test_forfeit_in_the_second_game_of_a_pair(self):
        tally = sprt.PairTally()
        tally.add_game(0, 0.5)
        tally.add_game(0, 1.0, opponent_forfeit=True)
        self.assertEqual(tally.penta, [0, 0, 0, 1, 0])
        self.assertEqual(tally.penta_no_forfeit, [0, 0, 0, 0, 0])


if __name__ == "__main__":
    unittest.main()
