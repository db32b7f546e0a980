#!/usr/bin/env python3
"""Two match journals that played the same openings, compared pair by pair.

    python3 engine-tests/lab/paired.py NEW.jsonl OLD.jsonl

Two runs of `match.py` with the same seed, book and number of pairs give pair k
the same opening in both, each played once with each colour. When the tested
engine changed between them (another net, another search) and the opponent did
not, the difference of the two pair scores removes the openings' own share of the
variance: a paired comparison is sharper than setting the two runs' Elo figures
side by side. Only pairs complete in both journals count. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Optional

JOURNAL_FORMAT = "qilin-match-journal 1"
# The settings that decide which opening pair k plays; both journals must agree on them.
SAME_OPENINGS = ("seed", "openings_sha256", "pairs")
Z95 = 1.959963984540054


class JournalError(Exception):
    pass


def read_journal(path: str) -> tuple[dict, dict[int, float]]:
    """The run's settings and the tested engine's points in each complete pair (0 to 2)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line for line in f.read().split("\n") if line.strip()]
    except OSError as e:
        raise JournalError(f"{path}: {e.strerror}")
    try:
        head = json.loads(lines[0]) if lines else None
    except ValueError:
        head = None
    if not isinstance(head, dict) or head.get("format") != JOURNAL_FORMAT:
        raise JournalError(f"{path}: not a match journal ({JOURNAL_FORMAT})")
    points: dict[int, list[float]] = {}
    for number, line in enumerate(lines[1:], start=2):
        try:
            game = json.loads(line)["game"]
            pair = int(game["pair"])
            white = bool(game["tested_white"])
            result = game["result"]
        except (ValueError, KeyError, TypeError):
            if number == len(lines):  # the last line, cut short by a kill
                break
            raise JournalError(f"{path}: line {number} is not a game record")
        if result == "1/2-1/2":
            p = 0.5
        elif result in ("1-0", "0-1"):
            p = 1.0 if (result == "1-0") == white else 0.0
        else:
            raise JournalError(f"{path}: line {number}: result {result!r}")
        points.setdefault(pair, []).append(p)
    return head.get("settings", {}), {k: sum(v) for k, v in points.items() if len(v) == 2}


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
        new_settings, new = read_journal(args.new)
        old_settings, old = read_journal(args.old)
    except JournalError as e:
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
