#!/usr/bin/env python3
"""Where the engine under test loses: a reading of a match.py PGN.

match.py writes each move's comment as `{ +0.31/14 0.645s }` (the mover's score in pawns, or
`+M5`/`-M5`, then the depth and the time). For the engine whose name contains `--engine`
(default "Qilin"), this finds in each lost game the move from which the engine's own score
stayed at or below -1.5 pawns to the end, and sorts the losses by
  - phase there: knights, bishops, rooks and queens on the board (both sides):
    8 or more "middlegame", 4-7 "late middlegame", 3 or fewer "endgame";
  - how the score got there: "sudden" when the engine's best score over its 3 moves before was
    -0.5 or better (it did not see it coming), "gradual" otherwise.
Scores of exactly 0.00 (repetition lines) and depth-1 scores (forced moves, answered at once)
are ignored. It also lists the games the engine did not win after a score of +2.0 or more.
`-v` prints the sudden losses move by move, both sides' scores and the engine's FEN.

    engine-tests/.venv/bin/python engine-tests/lab/losses.py games.pgn [-v]

The comment parser:
>>> parse_score("+0.31/14 0.645s")
(0.31, 14)
>>> parse_score("-M5/31 0.240s")
(-100.0, 31)
>>> parse_score("book") is None
True
"""

import argparse
import collections
import re
import sys

try:
    import chess
    import chess.pgn
except ImportError:  # pragma: no cover - only hit outside the lab venv
    chess = None

SCORE = re.compile(r"([+-]?)(M?)(\d+(?:\.\d+)?)/(\d+)")
LOST, SUDDEN_FROM, WON = -1.5, -0.5, 2.0


def parse_score(comment):
    """(score in pawns for the mover, depth); a mate counts as 100 pawns."""
    m = SCORE.match(comment.strip())
    if not m:
        return None
    value = 100.0 if m.group(2) else float(m.group(3))
    return (-value if m.group(1) == "-" else value), int(m.group(4))


def phase(board):
    pieces = sum(1 for p in board.piece_map().values() if p.piece_type not in (chess.PAWN, chess.KING))
    return "middlegame" if pieces >= 8 else "late middlegame" if pieces >= 4 else "endgame"


def read(path, name):
    """Per game: (engine's points, reason, [(ply, mover is engine, score, depth, san, fen, comment)])."""
    games = []
    with open(path) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            white = name in game.headers.get("White", "")
            if not white and name not in game.headers.get("Black", ""):
                continue
            points = {"1-0": 1.0, "0-1": 0.0}.get(game.headers.get("Result"), 0.5)
            if not white and points != 0.5:
                points = 1.0 - points
            board, moves = game.board(), []
            for ply, node in enumerate(game.mainline()):
                ours = (board.turn == chess.WHITE) == white
                parsed = parse_score(node.comment)
                score, depth = parsed if parsed else (None, 0)
                moves.append((ply, ours, score, depth, board.san(node.move), board.fen(), node.comment.strip()))
                board.push(node.move)
            games.append((points, game.headers.get("Reason", "?"), game.headers.get("Round", "?"), moves))
    return games


def collapse(moves):
    """Index (into the engine's scored moves) from which its score stays lost, and those moves."""
    ours = [m for m in moves if m[1] and m[2] is not None and m[2] != 0.0 and m[3] > 1]
    for i in range(len(ours)):
        if all(m[2] <= LOST for m in ours[i:]):
            return i, ours
    return None, ours


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pgn")
    ap.add_argument("--engine", default="Qilin", help="a substring of the engine's PGN name")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if chess is None:
        sys.exit("error: python-chess is missing; run `make lab-venv` and use engine-tests/.venv/bin/python")
    games = read(args.pgn, args.engine)
    kinds, sudden, missed = collections.Counter(), [], collections.Counter()
    for points, reason, rnd, moves in games:
        if points < 1 and any(m[1] and m[2] is not None and m[2] >= WON for m in moves):
            missed[("lost" if points == 0 else "drawn", reason)] += 1
        if points != 0:
            continue
        i, ours = collapse(moves)
        if i is None:
            kinds[("no lasting collapse", "")] += 1
            continue
        before = [m[2] for m in ours[max(0, i - 3):i]]
        how = "sudden" if before and max(before) >= SUDDEN_FROM else "gradual"
        where = phase(chess.Board(ours[i][5]))
        kinds[(where, how)] += 1
        if how == "sudden":
            first = ours[max(0, i - 3)][0]
            sudden.append((rnd, where, [m for m in moves if first - 1 <= m[0] <= ours[i][0]]))
    losses = sum(1 for g in games if g[0] == 0)
    print(f"{len(games)} games, {losses} lost")
    for (where, how), n in kinds.most_common():
        print(f"  {n:4d}  {where} {how}".rstrip())
    print(f"not won after a score of +{WON:.1f} or more: {sum(missed.values())}")
    for (result, reason), n in missed.most_common():
        print(f"  {n:4d}  {result} ({reason})")
    if args.verbose:
        for rnd, where, moves in sudden:
            print(f"round {rnd} ({where}):")
            for _, ours, _, _, san, fen, comment in moves:
                print(f"  {'us  ' if ours else 'them'} {san:8s} {comment:24s} {fen if ours else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
