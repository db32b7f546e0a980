"""Reads a QILINNN1 net (NNUE-SPEC version 1) independently of the Rust code,
with python-chess: checks the header, the length and the FNV-1a checksum, then
prints the integer eval_cp (side to move's view) of each FEN by the spec's
formula, as an oracle for the engine's and the trainer's forward passes.

    engine-tests/.venv/bin/python engine-tests/tools/nnue_eval.py NET.nnue FEN...
"""
import struct, sys
import chess

def fnv(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h

def wrap16(x): return (x + 2**15) % 2**16 - 2**15
def wrap32(x): return (x + 2**31) % 2**32 - 2**31

data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'QILINNN1'
ver, inp, n, qa, qb, scale = struct.unpack_from('<6I', data, 8)
assert (ver, inp, qa, qb, scale) == (1, 768, 255, 64, 400), (ver, inp, qa, qb, scale)
assert len(data) == 32 + 2*768*n + 2*n + 4*n + 4 + 8, len(data)
off = 32
w1 = struct.unpack_from('<%dh' % (768*n), data, off); off += 2*768*n
b1 = struct.unpack_from('<%dh' % n, data, off); off += 2*n
w2 = struct.unpack_from('<%dh' % (2*n), data, off); off += 4*n
(b2,) = struct.unpack_from('<i', data, off); off += 4
(sumv,) = struct.unpack_from('<Q', data, off)
assert fnv(data[:off]) == sumv, 'checksum'
assert max(abs(x) for x in w2) <= 127
print(f'N={n} ok: length, header, checksum; max|W1|={max(abs(x) for x in w1)} max|W2|={max(abs(x) for x in w2)} B2={b2}')

def feats(board, c):
    out = []
    for sq, p in board.piece_map().items():
        s = sq if c == chess.WHITE else sq ^ 56
        side = 0 if p.color == c else 1
        out.append(side*384 + (p.piece_type-1)*64 + s)
    return out

def acc(fs):
    a = list(b1)
    for f in fs:
        for j in range(n):
            a[j] = wrap16(a[j] + w1[f*n + j])
    return a

def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q

def eval_cp(fen):
    board = chess.Board(fen)
    us, them = board.turn, not board.turn
    s = 0
    for a, off2 in ((acc(feats(board, us)), 0), (acc(feats(board, them)), n)):
        for j in range(n):
            c = min(max(a[j], 0), qa)
            s = wrap32(s + wrap32(c*c*w2[off2+j]))
    out = trunc_div(s, qa) + b2
    return trunc_div(out*scale, qa*qb)

for fen in sys.argv[2:]:
    print(f'{eval_cp(fen):6d}  {fen}')
