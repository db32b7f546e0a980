//! The one way the engine builds a rayon thread pool: the search's, the
//! table clearing's, `perft`'s and the trainer's all get the same stack and
//! threads named after their work (`qilin-search-3`), which is what a
//! debugger, `top -H` or a panic message shows.

/// The stack of a pool thread, sized for the search, the deepest user. The
/// deepest recursion is MAX_PLY (128) plies of `search` and `qsearch`;
/// measured in release builds (the address of a local at each node against
/// the root's, docs/controller.md): at most 10.8 KB a ply, 1.4 MB for 128
/// plies. 8 MB leaves more than five times that; debug builds, whose frames
/// are several times larger, get 32 MB. (64 MB a thread reserved 16 GB of
/// address space for 256 threads and ended the engine under a 4 GB limit.)
const STACK_SIZE: usize = if cfg!(debug_assertions) {
    32 << 20
} else {
    8 << 20
};

/// A pool of `threads` threads for `work` (a short word: "search",
/// "perft"…), or why the system refused it.
pub fn pool(work: &'static str, threads: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(STACK_SIZE)
        .thread_name(move |i| format!("qilin-{work}-{i}"))
        .build()
        .map_err(|e| format!("cannot start {threads} {work} threads ({e})"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn threads_are_named_after_their_work() {
        let pool = super::pool("test", 2).expect("two threads");
        assert_eq!(pool.current_num_threads(), 2);
        let name = pool.install(|| std::thread::current().name().map(String::from));
        assert!(
            name.as_deref()
                .is_some_and(|n| n.starts_with("qilin-test-")),
            "{name:?}"
        );
    }
}
