"""Reads a PGN with python-chess and prints, per game, what a GUI would see:
the errors python-chess met, the moves of the main line, how many moves
carry an evaluation ([%eval]), and each move that has NAGs, as
`ply SAN $n`. Used by engine-tests/annotate.rs where the lab venv exists.

    engine-tests/.venv/bin/python engine-tests/tools/pgn_readback.py FILE.pgn
"""

import sys

import chess.pgn


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        while True:
            game = chess.pgn.read_game(f)
            if game is None:
                break
            nodes = list(game.mainline())
            evals = sum(1 for n in nodes if n.eval() is not None)
            print(f"game errors={len(game.errors)} moves={len(nodes)} evals={evals}")
            for ply, node in enumerate(nodes, start=1):
                if node.nags:
                    nags = " ".join(f"${n}" for n in sorted(node.nags))
                    print(f"{ply} {node.san()} {nags}")


if __name__ == "__main__":
    main(sys.argv[1])
