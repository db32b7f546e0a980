"""Statistics of the strength lab: Elo from game pairs and the pentanomial SPRT.

Standard library only, so that `python3 -m unittest` checks it anywhere (the
match runner itself needs python-chess). docs/testing-statistics.md gives the
method and the sources; test_match_stats.py holds it to fishtest's numbers.

Conventions (those of fishtest and fastchess):
- a game pair is the same opening played twice, colours swapped; its outcome is
  one of five bins, the pentanomial [LL, LD, DD+WL, WD, WW], i.e. 0 .. 4
  half-points, a per-game score of 0, 1/4, 1/2, 3/4, 1;
- Elo is logistic Elo: score s <-> -400 log10(1/s - 1);
- the SPRT is the generalized SPRT of fishtest's `LLR_logistic`: the
  log-likelihood ratio of the pentanomial counts between the most likely
  5-bin distribution whose mean score is L(elo1) and the most likely one whose
  mean score is L(elo0) (each a constrained maximum-likelihood estimate), with
  empty bins counted as 1e-3 pair so that every bin is possible.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

SPRT_ALPHA = 0.05
SPRT_BETA = 0.05
Z95 = 1.959963984540054
# fishtest's regularization: an empty bin counts as this many pairs, so that
# both constrained estimates give every bin a positive probability.
EMPTY_BIN = 1e-3
# The per-game score of each pentanomial bin.
BIN_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def score_to_elo(s: float) -> float:
    """Logistic Elo difference for an expected score s in [0, 1].

    >>> score_to_elo(0.5)
    0.0
    >>> round(score_to_elo(0.75), 1)
    190.8
    >>> score_to_elo(1.0), score_to_elo(0.0)
    (inf, -inf)
    """
    if s <= 0.0:
        return -math.inf
    if s >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0) + 0.0  # + 0.0: no negative zero


def elo_to_score(elo: float) -> float:
    """Expected score for a logistic Elo difference.

    >>> elo_to_score(0)
    0.5
    >>> round(elo_to_score(5), 6)
    0.507195
    """
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def pair_stats(penta: Sequence[float]) -> tuple[float, float, float]:
    """Mean per-game score, variance of a pair's per-game score, and the pair count.

    >>> pair_stats([0, 0, 10, 0, 0])
    (0.5, 0.0, 10)
    >>> pair_stats([1, 0, 0, 0, 1])
    (0.5, 0.25, 2)
    """
    n = sum(penta)
    if n == 0:
        return 0.5, 0.0, 0
    mean = sum(a * c for a, c in zip(BIN_SCORES, penta)) / n
    var = sum(c * (a - mean) ** 2 for a, c in zip(BIN_SCORES, penta)) / n
    return mean, var, n


def elo_with_error(penta: Sequence[int]) -> tuple[float, float]:
    """Elo and its 95% half-width from pentanomial counts (delta method).

    se(score) = sqrt(var_pair / N_pairs); half-width = 1.96 se dElo/ds,
    dElo/ds = 400 / (ln 10 s (1 - s)). An empty or one-sided result has an
    infinite error.

    >>> elo_with_error([0, 0, 10, 0, 0])
    (0.0, 0.0)
    """
    mean, var, n = pair_stats(penta)
    if n == 0:
        return 0.0, math.inf
    elo = score_to_elo(mean)
    if not 0.0 < mean < 1.0:
        return elo, math.inf
    se = math.sqrt(var / n)
    return elo, Z95 * se * 400.0 / (math.log(10.0) * mean * (1.0 - mean))


def wdl_elo_with_error(w: int, d: int, l: int) -> tuple[float, float]:
    """Elo and its 95% half-width from single games (used when no pair is complete).

    >>> e, err = wdl_elo_with_error(30, 40, 30); (round(e, 2), round(err, 2))
    (0.0, 52.75)
    """
    n = w + d + l
    if n == 0:
        return 0.0, math.inf
    s = (w + 0.5 * d) / n
    elo = score_to_elo(s)
    if not 0.0 < s < 1.0:
        return elo, math.inf
    var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + l * s**2) / n
    se = math.sqrt(var / n)
    return elo, Z95 * se * 400.0 / (math.log(10.0) * s * (1.0 - s))


def sprt_bounds(alpha: float = SPRT_ALPHA, beta: float = SPRT_BETA) -> tuple[float, float]:
    """Wald's bounds on the log-likelihood ratio: (ln(beta/(1-alpha)), ln((1-beta)/alpha)).

    >>> tuple(round(b, 3) for b in sprt_bounds())
    (-2.944, 2.944)
    """
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def regularized(penta: Sequence[float]) -> list[float]:
    """The counts with each empty bin set to EMPTY_BIN."""
    return [float(c) if c > 0 else EMPTY_BIN for c in penta]


def mle_with_mean(penta: Sequence[float], score: float) -> list[float]:
    """The 5-bin distribution of largest likelihood for `penta` whose mean score is `score`.

    Maximizing sum_i n_i ln q_i under sum_i q_i = 1 and sum_i q_i a_i = score
    (a_i the bin scores) with Lagrange multipliers gives
    q_i = p_i / (1 + x (a_i - score)), p_i = n_i / N, where x is the root of
    g(x) = sum_i p_i (a_i - score) / (1 + x (a_i - score)) in the interval on
    which every denominator is positive. g falls from +inf to -inf there, so
    bisection finds the root to the last bit.
    `penta` must have no empty bin (see `regularized`) and 0 < score < 1.
    """
    n = sum(penta)
    p = [c / n for c in penta]
    d = [a - score for a in BIN_SCORES]
    lo, hi = -1.0 / max(d), -1.0 / min(d)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        g = sum(pi * di / (1.0 + mid * di) for pi, di in zip(p, d))
        if g > 0.0:
            lo = mid
        else:
            hi = mid
    x = 0.5 * (lo + hi)
    q = [pi / (1.0 + x * di) for pi, di in zip(p, d)]
    total = sum(q)  # 1 up to rounding; renormalized so the logarithms below are exact
    return [qi / total for qi in q]


def sprt_llr(penta: Sequence[float], elo0: float, elo1: float) -> float:
    """Exact pentanomial GSPRT log-likelihood ratio for logistic Elo bounds [elo0, elo1].

    LLR = sum_i n_i ln(q1_i / q0_i), q0 and q1 the constrained maximum-likelihood
    distributions with mean score L(elo0) and L(elo1) (fishtest's LLR_logistic).

    >>> sprt_llr([0, 0, 0, 0, 0], 0, 5)
    0.0
    >>> round(sprt_llr([8, 29, 53, 51, 31], 0, 10), 2)
    2.68
    """
    if sum(penta) == 0:
        return 0.0
    counts = regularized(penta)
    q0 = mle_with_mean(counts, elo_to_score(elo0))
    q1 = mle_with_mean(counts, elo_to_score(elo1))
    return sum(c * math.log(b / a) for c, a, b in zip(counts, q0, q1))


def sprt_llr_gaussian(penta: Sequence[float], elo0: float, elo1: float) -> float:
    """The Gaussian approximation this runner used before: kept only to re-read old records.

    LLR ~ N (s1 - s0) (2 x - s0 - s1) / (2 var), x the mean score and var the
    variance of a pair's score (fishtest's LLR_alt2). Close to the exact LLR near
    the bounds' middle, it overstates |LLR| when the observed score is far from
    [s0, s1] (few pairs, large Elo differences).
    """
    if sum(penta) == 0:
        return 0.0
    counts = regularized(penta)
    mean, var, n = pair_stats(counts)
    if var <= 0.0:
        return 0.0
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


def sprt_state(llr: float, alpha: float = SPRT_ALPHA, beta: float = SPRT_BETA) -> Optional[str]:
    """'H1 accepted' at or above the upper bound, 'H0 accepted' at or below the lower, else None."""
    lo, hi = sprt_bounds(alpha, beta)
    if llr >= hi:
        return "H1 accepted"
    if llr <= lo:
        return "H0 accepted"
    return None


def _elo_or_wdl(penta: Sequence[int], wdl: Sequence[int]) -> tuple[float, float, str]:
    """Elo, half-width and basis: pairs when any is complete, else games; NaN when there is no game."""
    if not sum(penta) and not sum(wdl):
        return math.nan, math.inf, "no game"
    if sum(penta):
        return (*elo_with_error(penta), "pentanomial")
    return (*wdl_elo_with_error(*wdl), "trinomial (no complete pair)")


class PairTally:
    """Game results folded into pairs, the SPRT decided the moment a pair crosses a bound.

    Each finished game is added with its pair number, the tested engine's points
    and whether the opponent lost it by a failure (time forfeit, illegal move,
    crash, stall). The tally keeps
    - `penta`: the pentanomial of all complete pairs (what the SPRT and Elo use);
    - `penta_no_forfeit`: the pentanomial without the pairs in which the opponent
      forfeited a game, so that an opponent that flags cannot pass its losses on
      the clock off as playing strength (whole pairs are dropped, which keeps the
      pairing's cancellation of the opening);
    - `decision`: the state when the LLR first reached a bound, frozen: games,
      pairs, W/D/L, pentanomial, LLR. Games still running then are counted in
      the totals but cannot change the decision.
    """

    def __init__(self, sprt: Optional[Sequence[float]] = None,
                 alpha: float = SPRT_ALPHA, beta: float = SPRT_BETA):
        self.sprt = (float(sprt[0]), float(sprt[1])) if sprt else None
        self.alpha, self.beta = alpha, beta
        self.penta = [0, 0, 0, 0, 0]
        self.penta_no_forfeit = [0, 0, 0, 0, 0]
        self.wdl = [0, 0, 0]  # tested engine's wins, draws, losses
        self.wdl_no_forfeit = [0, 0, 0]  # over the games of pairs without an opponent forfeit
        self.games = 0
        self.opponent_forfeit_pairs: set[int] = set()
        self.decision: Optional[dict] = None
        self._open: dict[int, list[float]] = {}
        self._open_forfeit: dict[int, bool] = {}

    def add_game(self, pair: int, points: float, opponent_forfeit: bool = False) -> Optional[dict]:
        """Count a game; return the decision if this game's pair just crossed a bound."""
        self.games += 1
        self.wdl[0 if points == 1.0 else 1 if points == 0.5 else 2] += 1
        pts = self._open.setdefault(pair, [])
        pts.append(points)
        forfeit = self._open_forfeit.get(pair, False) or opponent_forfeit
        self._open_forfeit[pair] = forfeit
        if forfeit:
            self.opponent_forfeit_pairs.add(pair)
        if len(pts) < 2:
            return None
        del self._open[pair]
        del self._open_forfeit[pair]
        bin_ = int(round(2 * sum(pts)))
        self.penta[bin_] += 1
        if not forfeit:
            self.penta_no_forfeit[bin_] += 1
            for p in pts:
                self.wdl_no_forfeit[0 if p == 1.0 else 1 if p == 0.5 else 2] += 1
        if self.sprt is None or self.decision is not None:
            return None
        llr = self.llr()
        result = sprt_state(llr, self.alpha, self.beta)
        if result is None:
            return None
        elo, err, _ = _elo_or_wdl(self.penta, self.wdl)
        self.decision = {"result": result, "games": self.games, "pairs": sum(self.penta),
                         "wins": self.wdl[0], "draws": self.wdl[1], "losses": self.wdl[2],
                         "pentanomial": list(self.penta), "llr": llr, "elo": elo, "elo_error_95": err}
        return self.decision

    def llr(self) -> float:
        if self.sprt is None:
            return 0.0
        return sprt_llr(self.penta, *self.sprt)

    def elo(self) -> tuple[float, float, str]:
        """Elo, 95% half-width and basis over all games."""
        return _elo_or_wdl(self.penta, self.wdl)

    def elo_no_forfeit(self) -> tuple[float, float, str]:
        """The same without the pairs in which the opponent forfeited a game."""
        wdl = self.wdl_no_forfeit if sum(self.penta_no_forfeit) else self._wdl_open_no_forfeit()
        return _elo_or_wdl(self.penta_no_forfeit, wdl)

    def _wdl_open_no_forfeit(self) -> list[int]:
        out = [0, 0, 0]
        for pair, pts in self._open.items():
            if not self._open_forfeit.get(pair, False):
                for p in pts:
                    out[0 if p == 1.0 else 1 if p == 0.5 else 2] += 1
        return out
