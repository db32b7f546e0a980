//! Training data.
//!
//! Two formats: the legacy one, a 32-byte record per filtered position
//! (`record`), and whole self-play games (`games`), a start position then a
//! move and a score per ply — a tenth of the bytes raw, a quarter packed,
//! and nothing is thrown away at generation time, so filters can change
//! without new games.
//! `training` reads positions out of either for a trainer; `chunks` writes
//! games into numbered, compressed chunk files that a run cut short can
//! resume.

mod chunks;
mod games;
mod record;
mod stats;
#[cfg(test)]
mod testutil;
mod training;

pub use chunks::{ChunkWriter, read_chunk, training_files};
pub use games::{GameReader, GameRecord, GameWriter, Ply};
pub use record::{RECORD_SIZE, Record};
pub use stats::{RunStats, run_stats};
pub use training::{Filter, LegacyReader, TrainingPosition, TrainingReader, open_training};
