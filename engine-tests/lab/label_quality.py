#!/usr/bin/env python3
"""How good are datagen's labels at each node budget? A measured trade-off for `--nodes`.

Samples positions from a PGN of Qilin games (side to move not in check, ply >= 16, no mate
scores), scores each with `go nodes N` for every budget N and once with a reference budget
(default 32x the largest), each search from a cleared hash (`ucinewgame`), and prints per budget:
the mean time per search, the mean absolute difference from the reference score (centipawns,
scores clamped to +-2000), and the mean squared difference in win-probability space,
sigmoid(K * score) with K = 0.0053 by default (the scale fitted to self-play results), which is what a
network trained on these labels sees; then, position by position, how much that squared
difference changes against the `--baseline` budget (a paired difference: the same positions,
so its error bar is far narrower than the two means' bars). Not a test: a measurement for the
data README.

    engine-tests/.venv/bin/python engine-tests/lab/label_quality.py --engine ./qilin \
        --pgn games.pgn --positions 400 --budgets 1000,2500,5000,10000,20000
"""

import argparse
import math
import random
import statistics
import time

import chess
import chess.engine
import chess.pgn


def sample_positions(pgn_path: str, count: int, seed: int) -> list[chess.Board]:
    boards = []
    with open(pgn_path, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                board.push(move)
                if ply >= 16 and not board.is_check() and not board.is_game_over():
                    boards.append(board.copy(stack=False))
    random.Random(seed).shuffle(boards)
    return boards[:count]


def score_cp(info: dict) -> int | None:
    s = info["score"].relative
    if s.is_mate():
        return None
    return max(-2000, min(2000, s.score()))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", required=True)
    p.add_argument("--pgn", required=True)
    p.add_argument("--positions", type=int, default=400)
    p.add_argument("--budgets", default="1000,2500,5000,10000,20000")
    p.add_argument("--reference", type=int, help="reference nodes (default 32x the largest budget)")
    p.add_argument("--k", type=float, default=0.0053)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--baseline", type=int, default=5000, help="budget the others are compared with")
    a = p.parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    if a.baseline not in budgets:
        p.error("--baseline must be one of --budgets")
    reference = a.reference or 32 * max(budgets)
    boards = sample_positions(a.pgn, a.positions, a.seed)
    sig = lambda cp: 1.0 / (1.0 + math.exp(-a.k * cp))
    rows = {n: ([], [], []) for n in budgets}
    used = 0
    with chess.engine.SimpleEngine.popen_uci(a.engine) as eng:
        eng.configure({"Threads": 1, "Hash": 16})
        for board in boards:
            scores = {}
            for n in budgets + [reference]:
                t0 = time.perf_counter()
                info = eng.analyse(board, chess.engine.Limit(nodes=n), game=object())
                scores[n] = (score_cp(info), time.perf_counter() - t0)
            ref = scores[reference][0]
            if ref is None or any(scores[n][0] is None for n in budgets):
                continue
            used += 1
            for n in budgets:
                s, t = scores[n]
                rows[n][0].append(t)
                rows[n][1].append(abs(s - ref))
                rows[n][2].append((sig(s) - sig(ref)) ** 2)
    print(f"{used} positions, reference {reference} nodes, K {a.k}")
    print(f"{'nodes':>8} {'ms/search':>10} {'|d| cp':>8} {'sq. err (1e-3)':>15} {'+- (1e-3)':>10}")
    for n in budgets:
        t, d, e = rows[n]
        se = statistics.stdev(e) / math.sqrt(len(e)) if len(e) > 1 else float("nan")
        print(f"{n:>8} {1000 * statistics.mean(t):>10.2f} {statistics.mean(d):>8.1f} "
              f"{1000 * statistics.mean(e):>15.3f} {1000 * 1.96 * se:>10.3f}")
    print(f"squared error against {a.baseline} nodes, position by position (1e-3, 95%):")
    base = rows[a.baseline][2]
    for n in budgets:
        if n == a.baseline:
            continue
        diff = [x - y for x, y in zip(rows[n][2], base)]
        half = 1.96 * statistics.stdev(diff) / math.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        print(f"{n:>8} {1000 * statistics.mean(diff):>+10.3f} +- {1000 * half:.3f}")


if __name__ == "__main__":
    main()
