//! The search facade: the thread pool, the transposition table and the
//! move-ordering histories, and the one way to run a search on them. It is
//! cheap to clone (shared handles): a search running on one clone keeps its
//! pool and tables while the owner resizes, clears or replaces them, so no
//! setting ever waits for a search to end.

use super::history::HistoryTables;
use super::report::{Listener, SearchResult};
use super::tablebase::{Tablebases, TbConfig};
use super::tt::TranspositionTable;
use super::{SearchRequest, Signals};
use crate::nnue::{self, NetError, Network};
use std::sync::Arc;

/// Search threads recurse deeply over copied positions and move lists.
const STACK_SIZE: usize = 64 << 20;

/// A pool of `threads` workers; one that cannot be built (the system refused
/// threads) falls back to the smallest pool rayon can make.
pub fn thread_pool(threads: usize) -> Arc<rayon::ThreadPool> {
    let build = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .stack_size(STACK_SIZE)
            .build()
    };
    let pool = build(threads).or_else(|_| build(1)).unwrap_or_else(|e| {
        eprintln!("cannot start any thread: {e}");
        std::process::exit(1)
    });
    Arc::new(pool)
}

#[derive(Clone)]
pub struct Engine {
    pool: Arc<rayon::ThreadPool>,
    tt: Arc<TranspositionTable>,
    /// The size `tt` was made with.
    hash_mb: usize,
    histories: Arc<HistoryTables>,
    /// Syzygy tables; `None` when no `SyzygyPath` gave any.
    tablebases: Option<Arc<Tablebases>>,
    tb_config: TbConfig,
    /// The net the search evaluates with, shared read-only by the workers.
    net: Arc<Network>,
}

/// What setting a `SyzygyPath` found, for the caller to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyzygyLoad {
    /// Materials with a WDL table and with a DTZ table.
    pub wdl_tables: usize,
    pub dtz_tables: usize,
    /// The most pieces of any table (0 with none).
    pub max_pieces: usize,
    /// Folders that could not be read and damaged files, one sentence each.
    pub problems: Vec<String>,
}

impl Engine {
    /// An engine with `threads` search threads and a table of `hash_mb`
    /// megabytes; `None` when the memory cannot be had.
    pub fn new(threads: usize, hash_mb: usize) -> Option<Engine> {
        let tt = TranspositionTable::new(hash_mb, threads)?;
        Some(Engine {
            pool: thread_pool(threads),
            tt: Arc::new(tt),
            hash_mb,
            histories: Arc::new(HistoryTables::new(threads)),
            tablebases: None,
            tb_config: TbConfig::default(),
            net: nnue::embedded(),
        })
    }

    /// Uses the Syzygy tables of the folders in `paths` (see
    /// [`Tablebases::load`]) from the next search on; an empty path
    /// switches probing off. A running search keeps the tables it has.
    pub fn set_syzygy_path(&mut self, paths: &str) -> SyzygyLoad {
        let loaded = Tablebases::load(paths);
        let (wdl_tables, dtz_tables) = loaded.tables.as_ref().map_or((0, 0), |t| t.counts());
        let max_pieces = loaded.tables.as_ref().map_or(0, |t| t.max_pieces());
        self.tablebases = loaded.tables.map(Arc::new);
        SyzygyLoad {
            wdl_tables,
            dtz_tables,
            max_pieces,
            problems: loaded.problems,
        }
    }

    /// How the next searches use the tables.
    pub fn set_tb_config(&mut self, config: TbConfig) {
        self.tb_config = config;
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    pub fn hash_mb(&self) -> usize {
        self.hash_mb
    }

    /// A new pool of `threads` and fresh histories for it.
    pub fn set_threads(&mut self, threads: usize) {
        self.pool = thread_pool(threads);
        self.histories = Arc::new(HistoryTables::new(self.threads()));
    }

    /// A new, empty table of `mb` megabytes; on `Err` (not enough memory)
    /// the old one stays.
    pub fn set_hash(&mut self, mb: usize) -> Result<(), String> {
        let tt = TranspositionTable::new(mb, self.threads())
            .ok_or_else(|| format!("not enough memory for Hash {mb} MB"))?;
        self.tt = Arc::new(tt);
        self.hash_mb = mb;
        Ok(())
    }

    /// Forgets everything learnt: an empty table and fresh histories. A
    /// search still running keeps its histories; it shares the table, whose
    /// slots are atomic, so the clearing only costs it some hits.
    pub fn clear(&mut self) {
        self.tt.clear(self.threads());
        self.histories = Arc::new(HistoryTables::new(self.threads()));
    }

    /// The net the search uses.
    pub fn net(&self) -> &Arc<Network> {
        &self.net
    }

    /// Searches with `net` from the next search on; a search already
    /// running keeps the net it started with. The tables are cleared when
    /// the net changes: the TT keeps static evals.
    pub fn set_net(&mut self, net: Arc<Network>) {
        let same = Arc::ptr_eq(&self.net, &net) || self.net == net;
        self.net = net;
        if !same {
            self.clear();
        }
    }

    /// Evaluates with the net of the file at `path`, or with the embedded
    /// net for an empty path (`nnue::resolve`). On `Err` (a file that cannot
    /// be read or is not a valid net) the net stays.
    pub fn load_net(&mut self, path: &str) -> Result<(), NetError> {
        self.set_net(nnue::resolve(path)?);
        Ok(())
    }

    /// Searches until the limits are met or `signals.stop` is raised,
    /// telling `listener` how it goes.
    pub fn search(
        &self,
        request: &SearchRequest,
        listener: &dyn Listener,
        signals: &Signals,
    ) -> SearchResult {
        super::run(self, request, listener, signals)
    }

    pub(super) fn pool(&self) -> &Arc<rayon::ThreadPool> {
        &self.pool
    }

    pub(super) fn tt(&self) -> &Arc<TranspositionTable> {
        &self.tt
    }

    pub(super) fn histories(&self) -> &Arc<HistoryTables> {
        &self.histories
    }

    pub(super) fn tablebases(&self) -> Option<&Arc<Tablebases>> {
        self.tablebases.as_ref()
    }

    pub(super) fn tb_config(&self) -> &TbConfig {
        &self.tb_config
    }
}
