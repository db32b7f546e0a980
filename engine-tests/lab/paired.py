#!/usr/bin/env python3
"""Two match journals that played the same openings, compared pair by pair.

    python3 engine-tests/lab/paired.py NEW.jsonl OLD.jsonl

Two runs of `match.py` with the same seed, book and number of pairs give pair k
the same opening in both, each played once with each colour. When the tested
engine changed between them (another net, another search) and the opponent did
not, the difference of the two pair scores removes the openings' own share of the
variance: a paired comparison is sharper than setting the two runs' Elo figures
side by side. Only pairs complete in both journals count. Standard library only
(match.py's journal reader, which needs no python-chess).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import match  # noqa: E402  (its journal reader; python-chess is not needed for it)
from sprt import Z95  # noqa: E402

# The settings that decide which opening pair k plays; both journals must agree on them.
SAME_OPENINGS = ("seed", "openings_sha256", "pairs")


def pair_points(path: str) -> tuple[dict, dict[int, float]]:
    """A journal's settings and the tested engine's points in each complete pair (0 to 2)."""
    settings, games, _ = match.read_journal(path)
    points: dict[int, list[float]] = {}
    for g, _ in games:
        points.setdefault(g.pair, []).append(g.tested_points())
    return settings, {k: sum(v) for k, v in points.items() if len(v) == 2}


def compare(new: dict[int, float], old: dict[int, float]) -> Optional[dict]:
    """Mean pair-score difference new - old over the common pairs, with its 95% error."""
    common = sorted(set(new) & set(old))
    n = len(common)
    if n < 2:
        return None
    diffs = [new[k] - old[k] for k in common]
    mean = sum(diffs) / n
    variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    error = Z95 * math.sqrt(variance / n)
    return {
        "pairs": n,
        "new_score": sum(new[k] for k in common) / (2 * n),
        "old_score": sum(old[k] for k in common) / (2 * n),
        "pair_difference": mean,
        "pair_error": error,
        # A pair is two games: per game, both halve.
        "game_difference": mean / 2,
        "game_error": error / 2,
    }


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("new", help="journal of the changed engine")
    parser.add_argument("old", help="journal of the engine before the change, same seed and book")
    args = parser.parse_args(argv)
    try:
        new_settings, new = pair_points(args.new)
        old_settings, old = pair_points(args.old)
    except OSError as e:
        print(f"error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    except match.UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    differ = [k for k in SAME_OPENINGS if new_settings.get(k) != old_settings.get(k)]
    if differ:
        print("error: the journals played other openings: "
              + "; ".join(f"{k} {new_settings.get(k)!r} and {old_settings.get(k)!r}" for k in differ),
              file=sys.stderr)
        return 2
    r = compare(new, old)
    if r is None:
        print("error: fewer than 2 pairs complete in both journals", file=sys.stderr)
        return 2
    print(f"{r['pairs']} pairs in both; score {r['new_score']:.1%} (new) and {r['old_score']:.1%} (old)")
    print(f"difference: {r['game_difference']:+.3f} ± {r['game_error']:.3f} points a game "
          f"({r['pair_difference']:+.3f} ± {r['pair_error']:.3f} a pair; 95%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
