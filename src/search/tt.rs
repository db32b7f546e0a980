//! The transposition table shared by every search thread: buckets of four
//! slots, one cache line each; a slot is two atomics, the packed data and the
//! key xor the data, so a torn write (two threads storing at once) fails the
//! key check instead of returning another position's data.

use crate::score::TB_WIN_BOUND;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Upper = 1,
    Lower = 2,
    Exact = 3,
}

/// What a probe returns. `mv` is a move encoding ([`encode_move`]) that the
/// caller must find among the legal moves before using it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtEntry {
    pub mv: u16,
    pub score: i32,
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
    /// The node was on a principal variation when it was stored (or at a
    /// store before, at the same position).
    pub pv: bool,
}

impl TtEntry {
    /// The stored score, when its bound settles the node at `ply` for the
    /// window (alpha, beta).
    pub fn cutoff(&self, ply: usize, alpha: i32, beta: i32) -> Option<i32> {
        let score = score_from_tt(self.score, ply);
        let settles = match self.bound {
            Bound::Exact => true,
            Bound::Lower => score >= beta,
            Bound::Upper => score <= alpha,
        };
        settles.then_some(score)
    }
}

#[derive(Default)]
struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

#[derive(Default)]
#[repr(align(64))]
struct Bucket([Slot; 4]);

pub struct TranspositionTable {
    buckets: Box<[Bucket]>,
    age: AtomicU8,
}

/// A move as 16 bits: from, to, promotion role. Castling is king to rook
/// square (shakmaty's `to` for castling), so the encoding is unambiguous in
/// both castling modes. 0 means no move.
pub fn encode_move(m: shakmaty::Move) -> u16 {
    let to = m.to() as u16;
    let from = m.from().map_or(to, |f| f as u16);
    let promo = m.promotion().map_or(0, |r| r as u16);
    from | to << 6 | promo << 12
}

/// The move of `moves` with this encoding; 0 finds none. A TT move is never
/// trusted before it is found among the moves of its position.
pub fn find_encoded(moves: &[shakmaty::Move], encoded: u16) -> Option<shakmaty::Move> {
    if encoded == 0 {
        return None;
    }
    // The target square first: it rules out most moves for less.
    let to = encoded >> 6 & 63;
    moves
        .iter()
        .copied()
        .find(|&m| m.to() as u16 == to && encode_move(m) == encoded)
}

/// Mate and tablebase scores (which count plies from the root) are stored
/// relative to the node, so that an entry is right wherever in the tree
/// the position comes again.
pub fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= TB_WIN_BOUND {
        score + ply as i32
    } else if score <= -TB_WIN_BOUND {
        score - ply as i32
    } else {
        score
    }
}

pub fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= TB_WIN_BOUND {
        score - ply as i32
    } else if score <= -TB_WIN_BOUND {
        score + ply as i32
    } else {
        score
    }
}

// Depth takes 7 bits (a search never goes past MAX_PLY = 128 plies) and the
// PV flag the eighth bit of its byte.
const _: () = assert!(crate::score::MAX_PLY <= 128);

fn pack(mv: u16, score: i32, eval: i32, depth: i32, bound: Bound, pv: bool, age: u8) -> u64 {
    (mv as u64)
        | ((score as i16 as u16 as u64) << 16)
        | ((eval as i16 as u16 as u64) << 32)
        | ((depth.clamp(0, 127) as u64) << 48)
        | ((pv as u64) << 55)
        | ((bound as u64) << 56)
        | (((age & 0x3f) as u64) << 58)
}

fn unpack(data: u64) -> (TtEntry, u8) {
    let bound = match (data >> 56) & 3 {
        1 => Bound::Upper,
        2 => Bound::Lower,
        _ => Bound::Exact,
    };
    (
        TtEntry {
            mv: data as u16,
            score: (data >> 16) as u16 as i16 as i32,
            eval: (data >> 32) as u16 as i16 as i32,
            depth: ((data >> 48) & 0x7f) as i32,
            bound,
            pv: (data >> 55) & 1 == 1,
        },
        ((data >> 58) & 0x3f) as u8,
    )
}

/// A pool for zeroing a table, apart from the search's pool so that a search
/// in progress never delays it; `None` when the system gives no threads
/// (the calling thread then does the work alone).
fn housekeeping_pool(threads: usize) -> Option<rayon::ThreadPool> {
    let build = |n| crate::threads::pool("table", n);
    build(threads.clamp(1, 64)).or_else(|_| build(1)).ok()
}

/// The memory the process can still take (the machine's and its
/// container's, `super::memory`), where it is known: an allocation beyond
/// it would succeed and its pages fail later.
fn available_mb() -> Option<usize> {
    super::memory::available_bytes().map(|bytes| (bytes >> 20) as usize)
}

/// The memory of a table, had but not yet written: having it is quick (the
/// system only maps it), writing it takes about a second per gigabyte, so
/// that part can go to a thread of its own ([`Reserved::fill`]).
pub struct Reserved {
    buckets: Vec<Bucket>,
    count: usize,
}

impl Reserved {
    /// The table, every slot empty, written by `threads` threads.
    pub fn fill(mut self, threads: usize) -> TranspositionTable {
        let count = self.count;
        match housekeeping_pool(threads) {
            Some(pool) => pool.install(|| {
                (0..count)
                    .into_par_iter()
                    .map(|_| Bucket::default())
                    .collect_into_vec(&mut self.buckets)
            }),
            None => self.buckets.extend((0..count).map(|_| Bucket::default())),
        }
        TranspositionTable {
            buckets: self.buckets.into_boxed_slice(),
            age: AtomicU8::new(0),
        }
    }
}

impl TranspositionTable {
    /// A table of `mb` megabytes, zeroed by `threads` threads. `None` when
    /// the memory cannot be had.
    pub fn new(mb: usize, threads: usize) -> Option<TranspositionTable> {
        Some(TranspositionTable::reserve(mb)?.fill(threads))
    }

    /// The memory of a table of `mb` megabytes, to be filled; `None` when
    /// it cannot be had.
    pub fn reserve(mb: usize) -> Option<Reserved> {
        if available_mb().is_some_and(|free| mb > free * 9 / 10) {
            return None;
        }
        let count = ((mb << 20) / std::mem::size_of::<Bucket>()).max(1);
        let mut buckets: Vec<Bucket> = Vec::new();
        buckets.try_reserve_exact(count).ok()?;
        Some(Reserved { buckets, count })
    }

    /// A table of one bucket: what a search uses when it is stopped before
    /// its real table is ready (it then only plays a legal move).
    pub fn minimal() -> TranspositionTable {
        TranspositionTable {
            buckets: Box::new([Bucket::default()]),
            age: AtomicU8::new(0),
        }
    }

    /// Empties every slot, with `threads` threads of its own: never the
    /// search's pool, which may be busy searching.
    pub fn clear(&self, threads: usize) {
        let zero = |b: &Bucket| {
            for s in &b.0 {
                s.check.store(0, Ordering::Relaxed);
                s.data.store(0, Ordering::Relaxed);
            }
        };
        match housekeeping_pool(threads) {
            Some(pool) => pool.install(|| self.buckets.par_iter().for_each(zero)),
            None => self.buckets.iter().for_each(zero),
        }
        self.age.store(0, Ordering::Relaxed);
    }

    /// Called once per `go`: entries of older searches become cheap to replace.
    pub fn new_search(&self) {
        self.age.fetch_add(1, Ordering::Relaxed);
    }

    fn bucket(&self, key: u64) -> &Bucket {
        let index = ((key as u128 * self.buckets.len() as u128) >> 64) as usize;
        &self.buckets[index]
    }

    /// Asks the CPU to start loading `key`'s bucket, so that the probe a
    /// few hundred instructions later finds it in cache: the probe's cache
    /// miss was the largest single cost of a node (perf: about a sixth of
    /// the search's cycles stalled on it).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let bucket: *const Bucket = self.bucket(key);
            // SAFETY: a prefetch is a hint: it never faults, reads nothing
            // into the program and writes nothing, whatever the address;
            // this one is a live bucket's anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bucket.cast::<i8>()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    pub fn probe(&self, key: u64) -> Option<TtEntry> {
        self.bucket(key).0.iter().find_map(|s| {
            let data = s.data.load(Ordering::Relaxed);
            (data != 0 && s.check.load(Ordering::Relaxed) ^ data == key).then(|| unpack(data).0)
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &self,
        key: u64,
        mv: u16,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
        pv: bool,
    ) {
        let age = self.age.load(Ordering::Relaxed) & 0x3f;
        let bucket = self.bucket(key);
        let mut victim = &bucket.0[0];
        let mut worst = i32::MAX;
        for slot in &bucket.0 {
            let data = slot.data.load(Ordering::Relaxed);
            if data == 0 {
                victim = slot;
                break;
            }
            let (old, old_age) = unpack(data);
            if slot.check.load(Ordering::Relaxed) ^ data == key {
                // Same position: keep a deeper entry of this search unless
                // the new one is exact, and keep its move if we have none.
                if bound != Bound::Exact && old.depth > depth + 3 && old_age == age {
                    return;
                }
                let mv = if mv == 0 { old.mv } else { mv };
                let data = pack(mv, score, eval, depth, bound, pv, age);
                slot.data.store(data, Ordering::Relaxed);
                slot.check.store(key ^ data, Ordering::Relaxed);
                return;
            }
            let stale = i32::from(age.wrapping_sub(old_age) & 0x3f);
            let value = old.depth - 8 * stale;
            if value < worst {
                worst = value;
                victim = slot;
            }
        }
        let data = pack(mv, score, eval, depth, bound, pv, age);
        victim.data.store(data, Ordering::Relaxed);
        victim.check.store(key ^ data, Ordering::Relaxed);
    }

    /// Permille of the first thousand slots used by the current search.
    pub fn hashfull(&self) -> u32 {
        let age = self.age.load(Ordering::Relaxed) & 0x3f;
        let used = self
            .buckets
            .iter()
            .take(250)
            .flat_map(|b| b.0.iter())
            .filter(|s| {
                let data = s.data.load(Ordering::Relaxed);
                data != 0 && unpack(data).1 == age
            })
            .count();
        let slots = (self.buckets.len().min(250) * 4) as u32;
        used as u32 * 1000 / slots.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::{MATE, TB_WIN};

    #[test]
    fn store_and_probe_round_trip() {
        let tt = TranspositionTable::new(1, 1).expect("tt");
        tt.store(0xdead_beef, 1234, -250, 17, 9, Bound::Lower, true);
        assert_eq!(
            tt.probe(0xdead_beef),
            Some(TtEntry {
                mv: 1234,
                score: -250,
                eval: 17,
                depth: 9,
                bound: Bound::Lower,
                pv: true,
            })
        );
        assert_eq!(tt.probe(0xdead_bef0), None);
    }

    #[test]
    fn the_pv_flag_and_the_deepest_depth_keep_apart() {
        let tt = TranspositionTable::new(1, 1).expect("tt");
        tt.store(7, 1, -1, -1, 127, Bound::Upper, false);
        let e = tt.probe(7).expect("stored");
        assert_eq!((e.depth, e.pv, e.bound), (127, false, Bound::Upper));
        tt.store(8, 1, 1, 1, 0, Bound::Exact, true);
        let e = tt.probe(8).expect("stored");
        assert_eq!((e.depth, e.pv, e.bound), (0, true, Bound::Exact));
    }

    #[test]
    fn mate_scores_are_relative_to_the_node() {
        // Mate in 5 plies from the root, stored at ply 3: 2 plies from there.
        let root_score = MATE - 5;
        let stored = score_to_tt(root_score, 3);
        assert_eq!(stored, MATE - 2);
        // Found again at ply 7 it is mate 9 plies from the root.
        assert_eq!(score_from_tt(stored, 7), MATE - 9);
        assert_eq!(score_from_tt(score_to_tt(-(MATE - 6), 2), 4), -(MATE - 8));
        assert_eq!(score_from_tt(score_to_tt(123, 5), 9), 123);
        // Tablebase wins count plies from the root too.
        let tb_win = TB_WIN;
        assert_eq!(score_to_tt(tb_win - 4, 4), tb_win);
        assert_eq!(
            score_from_tt(score_to_tt(-(tb_win - 4), 4), 6),
            -(tb_win - 6)
        );
    }

    #[test]
    fn clear_empties_the_table() {
        let tt = TranspositionTable::new(1, 2).expect("tt");
        tt.store(42, 1, 2, 3, 4, Bound::Exact, false);
        tt.clear(2);
        assert_eq!(tt.probe(42), None);
        assert_eq!(tt.hashfull(), 0);
    }
}
