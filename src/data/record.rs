//! The legacy training-data format: one 32-byte record per position, as
//! `qilin datagen` wrote it before whole games (`super::games`) replaced it;
//! files of it stay readable through `super::training`.
//!
//! | bytes  | field                                                              |
//! | ------ | ------------------------------------------------------------------ |
//! | 0..8   | occupancy, u64 little-endian, bit i = square i (a1 = 0, h8 = 63)     |
//! | 8..24  | 32 nibbles, one per occupied square in increasing square order,     |
//! |        | low nibble first: role 0 pawn, 1 knight, 2 bishop, 3 rook, 4 queen, |
//! |        | 5 king, 6 rook that still has its castling right; +8 for black      |
//! | 24     | bit 7: black to move; bits 0..6: en-passant square, 64 for none     |
//! | 25     | half-move clock (saturated at 255)                                  |
//! | 26..28 | full-move number, u16 little-endian                                 |
//! | 28..30 | search score, i16 little-endian, centipawns from White's view        |
//! | 30     | game result from White's view: 0 loss, 1 draw, 2 win               |
//! | 31     | reserved, 0                                                        |
//!
//! The en-passant square is written only when a capture there is legal.

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Piece, Position, Role,
    Setup, Square,
};
use std::num::NonZeroU32;

pub const RECORD_SIZE: usize = 32;
const CASTLING_ROOK: u8 = 6;
const NO_EP: u8 = 64;

/// One position of a self-play game with its score and the game's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub position: Chess,
    /// Centipawns from White's point of view.
    pub score: i16,
    /// From White's point of view: 0 loss, 1 draw, 2 win.
    pub result: u8,
}

impl Record {
    #[cfg(test)]
    pub fn encode(&self) -> [u8; RECORD_SIZE] {
        let mut out = [0u8; RECORD_SIZE];
        out[..POSITION_SIZE].copy_from_slice(&encode_position(&self.position));
        out[28..30].copy_from_slice(&self.score.to_le_bytes());
        out[30] = self.result;
        out
    }

    /// Reads a record; `None` when the bytes do not describe a legal position.
    pub fn decode(bytes: &[u8; RECORD_SIZE]) -> Option<Record> {
        let (position, rest) = bytes.split_first_chunk::<POSITION_SIZE>()?;
        let position = decode_position(position, CastlingMode::Chess960)?;
        let &[s0, s1, result, ..] = rest else {
            return None;
        };
        Some(Record {
            position,
            score: i16::from_le_bytes([s0, s1]),
            result: result.min(2),
        })
    }
}

/// Bytes 0..28 of the layout above: the position without score or result
/// (the game format starts each game with them).
pub(crate) const POSITION_SIZE: usize = 28;

pub(crate) fn encode_position(position: &Chess) -> [u8; POSITION_SIZE] {
    let setup = position.to_setup(EnPassantMode::Legal);
    let mut out = [0u8; POSITION_SIZE];
    let occupied = setup.board.occupied();
    out[0..8].copy_from_slice(&u64::from(occupied).to_le_bytes());
    // A legal position has at most 32 pieces; `take` keeps a board built by
    // hand with more from writing past the nibbles.
    for (i, sq) in occupied.into_iter().enumerate().take(32) {
        let Some(piece) = setup.board.piece_at(sq) else {
            continue;
        };
        let mut code = piece.role as u8 - 1;
        if piece.role == Role::Rook && setup.castling_rights.contains(sq) {
            code = CASTLING_ROOK;
        }
        if piece.color == Color::Black {
            code |= 8;
        }
        out[8 + i / 2] |= code << (4 * (i % 2));
    }
    let ep = setup.ep_square.map_or(NO_EP, |sq| sq as u8);
    out[24] = ep | if setup.turn == Color::Black { 0x80 } else { 0 };
    out[25] = setup.halfmoves.min(255) as u8;
    out[26..28]
        .copy_from_slice(&(setup.fullmoves.get().min(u32::from(u16::MAX)) as u16).to_le_bytes());
    out
}

/// `None` when the bytes do not describe a legal position in `mode` (bytes
/// come from files: anything may be there).
pub(crate) fn decode_position(bytes: &[u8; POSITION_SIZE], mode: CastlingMode) -> Option<Chess> {
    let (occ, rest) = bytes.split_first_chunk::<8>()?;
    let (nibbles, rest) = rest.split_first_chunk::<16>()?;
    let &[turn_ep, halfmoves, f0, f1] = rest else {
        return None;
    };
    let occupied = Bitboard(u64::from_le_bytes(*occ));
    if occupied.count() > 32 {
        return None;
    }
    let mut board = Board::empty();
    let mut castling_rights = Bitboard::EMPTY;
    for (i, sq) in occupied.into_iter().enumerate() {
        let code = (nibbles.get(i / 2)? >> (4 * (i % 2))) & 0xf;
        let color = if code & 8 != 0 {
            Color::Black
        } else {
            Color::White
        };
        let role = match code & 7 {
            CASTLING_ROOK => {
                castling_rights.add(sq);
                Role::Rook
            }
            r => Role::try_from(r + 1).ok()?,
        };
        board.set_piece_at(sq, Piece { color, role });
    }
    let ep = turn_ep & 0x7f;
    let setup = Setup {
        board,
        castling_rights,
        turn: if turn_ep & 0x80 != 0 {
            Color::Black
        } else {
            Color::White
        },
        ep_square: (ep != NO_EP).then(|| Square::try_from(ep).ok()).flatten(),
        halfmoves: u32::from(halfmoves),
        fullmoves: NonZeroU32::new(u32::from(u16::from_le_bytes([f0, f1])))
            .unwrap_or(NonZeroU32::MIN),
        ..Setup::empty()
    };
    Chess::from_setup(setup, mode).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn record(fen: &str, score: i16, result: u8) -> Record {
        let fen: Fen = fen.parse().expect("fen");
        Record {
            position: fen.into_position(CastlingMode::Standard).expect("legal"),
            score,
            result,
        }
    }

    #[test]
    fn records_round_trip() {
        for (fen, score, result) in [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                15,
                1,
            ),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w Kq - 3 17",
                -250,
                0,
            ),
            (
                "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
                40,
                2,
            ),
            ("8/8/8/8/8/4k3/8/4K2Q b - - 99 300", 3000, 2),
        ] {
            let r = record(fen, score, result);
            let bytes = r.encode();
            assert_eq!(Record::decode(&bytes), Some(r), "{fen}");
        }
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let r = record("4k3/8/8/8/8/8/8/R3K3 b Q - 7 42", -12, 0);
        let b = r.encode();
        // a1 rook with castling right (6), e1 white king (5), e8 black king (13).
        assert_eq!(
            u64::from_le_bytes(b[0..8].try_into().unwrap()),
            1 | 1 << 4 | 1 << 60
        );
        assert_eq!(&b[8..10], &[0x56, 0x0d]);
        assert_eq!(b[24], 0x80 | 64);
        assert_eq!(b[25], 7);
        assert_eq!(u16::from_le_bytes([b[26], b[27]]), 42);
        assert_eq!(i16::from_le_bytes([b[28], b[29]]), -12);
        assert_eq!(b[30], 0);
    }
}
