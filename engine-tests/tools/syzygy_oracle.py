#!/usr/bin/env python3
"""Write the Syzygy oracle data of engine-tests/syzygy.rs: random legal
positions of the materials in engine-tests/syzygy/, each with its WDL and DTZ
as python-chess's own Syzygy prober reads them (an implementation independent
of shakmaty-syzygy, which Qilin uses).

Usage (from the repository root, after `make lab-venv`):
    engine-tests/.venv/bin/python engine-tests/tools/syzygy_oracle.py \
        > engine-tests/data/syzygy-oracle.txt

Each line: `<FEN>;<wdl>;<dtz>`, the FEN with halfmove clock 0, WDL from
-2 (loss) to 2 (win) for the side to move, DTZ in plies as python-chess
gives it. Positions whose probe needs a table that is not in the folder
(a promotion into a material left out) are skipped. The output depends only
on the seed.
"""

import os
import random
import sys

import chess
import chess.syzygy

SEED = 20_200
PER_MATERIAL = 60
MATERIALS = ["KRvK", "KQvK", "KPvK", "KBvK", "KNvK", "KRPvK", "KRvKP"]
FOLDER = os.path.join(os.path.dirname(__file__), "..", "syzygy")


def random_position(rng, material):
    white, black = material.split("v")
    while True:
        board = chess.Board(None)
        squares = rng.sample(chess.SQUARES, len(white) + len(black))
        ok = True
        for letter, color in [(c, chess.WHITE) for c in white] + [(c, chess.BLACK) for c in black]:
            square = squares.pop()
            piece = chess.Piece.from_symbol(letter if color == chess.WHITE else letter.lower())
            if piece.piece_type == chess.PAWN and chess.square_rank(square) in (0, 7):
                ok = False
            board.set_piece_at(square, piece)
        board.turn = rng.choice([chess.WHITE, chess.BLACK])
        if ok and board.is_valid():
            return board


def main():
    rng = random.Random(SEED)
    out = sys.stdout
    with chess.syzygy.open_tablebase(FOLDER) as tables:
        for material in MATERIALS:
            written = 0
            while written < PER_MATERIAL:
                board = random_position(rng, material)
                try:
                    wdl = tables.probe_wdl(board)
                    dtz = tables.probe_dtz(board)
                except chess.syzygy.MissingTableError:
                    continue
                out.write(f"{board.fen()};{wdl};{dtz}\n")
                written += 1


if __name__ == "__main__":
    main()
