#!/usr/bin/env python3
"""Endgame start positions for matches that judge Qilin's known-endgame rules.

The rules in `src/endgames` (KPK by bitbase, KBNK's mating corner, a lone king
driven to the edge) sit on top of whichever evaluation is in play. Whether they
still gain on top of a net is a question for a match, and a match from opening
positions almost never reaches these endings. This script writes positions that
start in them: random legal placements that a Syzygy tablebase says the side
with the material wins (so a game measures conversion within the fifty-move
rule), with the winning side to move or not, half of them with colours swapped.

    python3 endgames.py --syzygy TB --per-kind 100 --seed 1 > endgames.epd

Deterministic for a seed. Needs python-chess (engine-tests/lab/requirements.txt)
and the tablebase files of the chosen kinds (KPvK, KBNvK, KRvK, KQvK).
"""

import argparse
import random
import sys

import chess
import chess.syzygy

# The strong side's pieces besides its king, for each kind of ending.
KINDS = {
    "KPK": [chess.PAWN],
    "KBNK": [chess.BISHOP, chess.KNIGHT],
    "KRK": [chess.ROOK],
    "KQK": [chess.QUEEN],
}


def random_position(rng: random.Random, pieces: list[int], strong: chess.Color) -> chess.Board | None:
    """One random placement, or None when it is not a legal, quiet start."""
    board = chess.Board(None)
    squares = rng.sample(range(64), 2 + len(pieces))
    board.set_piece_at(squares[0], chess.Piece(chess.KING, strong))
    board.set_piece_at(squares[1], chess.Piece(chess.KING, not strong))
    for sq, kind in zip(squares[2:], pieces):
        if kind == chess.PAWN and chess.square_rank(sq) in (0, 7):
            return None
        board.set_piece_at(sq, chess.Piece(kind, strong))
    board.turn = rng.choice([chess.WHITE, chess.BLACK])
    if not board.is_valid() or board.is_check() or board.is_game_over():
        return None
    # A lone king that can take a piece at once is a different ending.
    if any(board.is_capture(m) for m in board.legal_moves) and board.turn != strong:
        return None
    return board


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--syzygy", required=True, help="folder with the Syzygy WDL files")
    p.add_argument("--per-kind", type=int, default=100, help="positions of each kind (default 100)")
    p.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    rng = random.Random(args.seed)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        p.error(f"unknown kinds: {', '.join(unknown)}")
    with chess.syzygy.open_tablebase(args.syzygy) as tb:
        for kind in kinds:
            made, tries = 0, 0
            while made < args.per_kind:
                tries += 1
                if tries > 1000 * args.per_kind:
                    print(f"{kind}: only {made} positions after {tries} tries", file=sys.stderr)
                    return 1
                strong = chess.WHITE if made % 2 == 0 else chess.BLACK
                board = random_position(rng, KINDS[kind], strong)
                if board is None:
                    continue
                wdl = tb.probe_wdl(board)
                # WDL is for the side to move: the strong side must win outright.
                wins = wdl == 2 if board.turn == strong else wdl == -2
                if not wins:
                    continue
                print(f"{board.epd()} c0 \"{kind}\";")
                made += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
