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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// A pool of `threads` search workers, or why the system refused it.
fn thread_pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    crate::threads::pool("search", threads).map(Arc::new)
}

/// The table the next search uses: ready, or being made ready (built or
/// cleared) by a thread of its own, so that whoever sets `Hash`, `Clear
/// Hash` or `ucinewgame` never waits for gigabytes to be written. The next
/// search waits for it (the table it finds is the one asked for, empty);
/// a search stopped meanwhile does not.
#[derive(Clone)]
struct NextTable(Arc<Mutex<TableState>>);

struct TableState {
    ready: Option<Arc<TranspositionTable>>,
    preparing: Option<JoinHandle<Arc<TranspositionTable>>>,
}

type TableWork = Box<dyn FnOnce() -> Arc<TranspositionTable> + Send>;

impl NextTable {
    fn ready(table: TranspositionTable) -> NextTable {
        NextTable(Arc::new(Mutex::new(TableState {
            ready: Some(Arc::new(table)),
            preparing: None,
        })))
    }

    fn state(&self) -> MutexGuard<'_, TableState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A table that `work` makes on a thread of its own (on this thread
    /// when the system gives none).
    fn prepared_by(work: impl FnOnce() -> Arc<TranspositionTable> + Send + 'static) -> NextTable {
        // Handed over by a channel, so that it is still here to run if
        // the thread cannot be started.
        let (tx, rx) = crossbeam_channel::bounded::<TableWork>(1);
        let spawned = std::thread::Builder::new()
            .name("table".into())
            .spawn(move || {
                rx.recv()
                    .map_or_else(|_| Arc::new(TranspositionTable::minimal()), |w| w())
            });
        let work: TableWork = Box::new(work);
        let state = match spawned {
            Ok(handle) => {
                let _ = tx.send(work);
                TableState {
                    ready: None,
                    preparing: Some(handle),
                }
            }
            Err(_) => TableState {
                ready: Some(work()),
                preparing: None,
            },
        };
        NextTable(Arc::new(Mutex::new(state)))
    }

    /// The table once it is ready, or `None` if `stop` is raised first.
    fn wait(&self, stop: &AtomicBool) -> Option<Arc<TranspositionTable>> {
        loop {
            {
                let mut state = self.state();
                if let Some(handle) = state.preparing.take_if(|h| h.is_finished()) {
                    // A thread that failed leaves a working table all the same.
                    let table = handle
                        .join()
                        .unwrap_or_else(|_| Arc::new(TranspositionTable::minimal()));
                    state.ready = Some(table);
                }
                if state.preparing.is_none() {
                    return state.ready.clone();
                }
            }
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The table if it is ready now.
    fn now(&self) -> Option<Arc<TranspositionTable>> {
        self.wait(&AtomicBool::new(true))
    }
}

#[derive(Clone)]
pub struct Engine {
    pool: Arc<rayon::ThreadPool>,
    tt: NextTable,
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
    /// megabytes; `Err` says what the system refused (memory, threads).
    pub fn new(threads: usize, hash_mb: usize) -> Result<Engine, String> {
        let tt = TranspositionTable::new(hash_mb, threads)
            .ok_or_else(|| format!("not enough memory for Hash {hash_mb} MB"))?;
        Ok(Engine {
            pool: thread_pool(threads)?,
            tt: NextTable::ready(tt),
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

    /// A new pool of `threads` and fresh histories for it. On `Err` (the
    /// system refused the threads) the pool and histories stay.
    pub fn set_threads(&mut self, threads: usize) -> Result<(), String> {
        self.pool = thread_pool(threads)?;
        self.histories = Arc::new(HistoryTables::new(self.threads()));
        Ok(())
    }

    /// A new, empty table of `mb` megabytes for the next search; on `Err`
    /// (not enough memory) the old one stays. Only the memory is had here;
    /// it is written on a thread of its own, which also lets go of the old
    /// table (freeing gigabytes takes time too).
    pub fn set_hash(&mut self, mb: usize) -> Result<(), String> {
        let reserved = TranspositionTable::reserve(mb)
            .ok_or_else(|| format!("not enough memory for Hash {mb} MB"))?;
        let threads = self.threads();
        let old = std::mem::replace(
            &mut self.tt,
            NextTable::ready(TranspositionTable::minimal()),
        );
        self.tt = NextTable::prepared_by(move || {
            drop(old);
            Arc::new(reserved.fill(threads))
        });
        self.hash_mb = mb;
        Ok(())
    }

    /// Forgets everything learnt: an empty table and fresh histories. The
    /// table is emptied on a thread of its own; the next search waits for
    /// it. A search still running keeps its histories; it shares the
    /// table, whose slots are atomic, so the clearing only costs it some
    /// hits. A table still being made is empty already.
    pub fn clear(&mut self) {
        if let Some(table) = self.tt.now() {
            let threads = self.threads();
            self.tt = NextTable::prepared_by(move || {
                table.clear(threads);
                table
            });
        }
        self.histories = Arc::new(HistoryTables::new(self.threads()));
    }

    /// Waits until the table of the next search is ready, or `stop` is
    /// raised: for callers that time the search alone.
    pub fn wait_for_table(&self, stop: &AtomicBool) {
        let _ = self.tt.wait(stop);
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

    /// The search threads; `perft` shares its root moves over them too.
    pub fn pool(&self) -> &Arc<rayon::ThreadPool> {
        &self.pool
    }

    /// The table for a search, once it is ready; `None` when `stop` is
    /// raised before.
    pub(super) fn table(&self, stop: &AtomicBool) -> Option<Arc<TranspositionTable>> {
        self.tt.wait(stop)
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
