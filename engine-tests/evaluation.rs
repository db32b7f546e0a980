//! Black-box tests of the evaluation's tools: the `eval` command, `EvalFile`,
//! `qilin datagen` and `qilin train`.

mod common;
use common::*;
use qilin::data::{Filter, open_training, read_chunk, training_files};
use shakmaty::Position;
use std::path::Path;
use std::process::Command;

fn qilin(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .output()
        .expect("run qilin")
}

/// What `qilin` wrote to its standard output, line by line.
fn stdout_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect()
}

/// `go <params>` in the position the engine holds: its search lines, after
/// checking that the `bestmove` is one of the position's legal moves.
fn go_to_a_legal_move(e: &mut Engine, params: &str, context: &str) -> Vec<String> {
    let legal = e.legal_moves();
    let lines = e.go(params);
    let best = lines
        .last()
        .and_then(|l| l.split_whitespace().nth(1))
        .expect("bestmove");
    assert!(legal.contains(best), "{context}{best} not in {legal:?}");
    lines
}

/// A scratch folder for one test, removed when the test ends.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("qilin-eval-test-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }
    fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const ITALIAN: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";

/// The default evaluation is the net built in; `eval` says so, over UCI
/// and on the command line alike.
#[test]
fn the_embedded_net_is_the_default_evaluation() {
    let mut e = Engine::start();
    e.send(&format!("position fen {ITALIAN}"));
    let lines = e.ask("eval");
    assert!(
        lines[0].starts_with("net: (768 -> 256) x 2 -> 8"),
        "{lines:?}"
    );
    let cli = qilin(&["eval", ITALIAN]);
    let cli = stdout_lines(&cli);
    assert_eq!(lines, cli);
    e.close();
}

/// A known endgame is scored by its rule, not by the net; `eval` says so,
/// over UCI and on the command line alike, and notes a check.
#[test]
fn eval_reports_known_endgames_and_check() {
    let mut e = Engine::start();
    // KPK, drawn: the bitbase decides, whatever the net says.
    let kpk = "k7/8/1K6/P7/8/8/8/8 w - - 0 1";
    e.send(&format!("position fen {kpk}"));
    let lines = e.ask("eval");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("known endgame: 0 cp for White (the net's score does not apply)"),
        "{lines:?}"
    );
    let cli = qilin(&["eval", kpk]);
    let cli = stdout_lines(&cli);
    assert_eq!(lines, cli);
    e.send("position startpos moves e2e4 f7f6 d2d4 g7g5 d1h5");
    let lines = e.ask("eval");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("(in check: the search does not use the static evaluation here)")
    );
    e.close();
}

#[test]
fn datagen_writes_whole_games_reproducibly_and_resumes() {
    let scratch = Scratch::new("datagen");
    let (a, b) = (scratch.file("a"), scratch.file("b"));
    let run = |out: &str, games: &str| {
        let run = qilin(&[
            "datagen",
            "--out",
            out,
            "--games",
            games,
            "--chunk-games",
            "2",
            "--nodes",
            "400",
            "--threads",
            "1",
            "--seed",
            "7",
        ]);
        let err = String::from_utf8_lossy(&run.stderr).into_owned();
        assert!(run.status.success(), "{err}");
        err
    };
    for out in [&a, &b] {
        let err = run(out, "3");
        assert!(err.contains("games 3 "), "{err}");
    }
    let files = |dir: &str| training_files(Path::new(dir)).expect("chunks");
    let (files_a, files_b) = (files(&a), files(&b));
    assert_eq!(files_a.len(), 2, "3 games in chunks of 2: {files_a:?}");
    for (fa, fb) in files_a.iter().zip(&files_b) {
        assert_eq!(
            std::fs::read(fa).expect("a"),
            std::fs::read(fb).expect("b"),
            "one thread and one seed must give the same games"
        );
    }
    let mut games = 0;
    for file in &files_a {
        for game in read_chunk(file).expect("chunk") {
            let game = game.expect("whole game");
            assert!(game.result <= 2);
            assert!(!game.plies.is_empty());
            // Moves are stored as indices into the legal moves: each read is legal.
            let mut pos = game.start.clone();
            for ply in &game.plies {
                assert!(pos.is_legal(ply.played));
                pos.play_unchecked(ply.played);
            }
            games += 1;
        }
    }
    assert_eq!(games, 3);
    let quiet = open_training(&files_a[0], Filter::quiet(30_000)).expect("open");
    let mut kept = 0;
    for p in quiet {
        let p = p.expect("position");
        assert!(!p.position.is_check(), "{:?}", p.position);
        assert!(i32::from(p.score).abs() < 30_000);
        kept += 1;
    }
    assert!(kept > 0);
    // The same command again finds the run complete; a larger --games
    // carries on from the next game in a new chunk.
    let err = run(&a, "3");
    assert!(err.contains("resuming after game 3"), "{err}");
    assert_eq!(files(&a).len(), 2);
    run(&a, "4");
    assert_eq!(files(&a).len(), 3);
}

#[test]
fn datagen_and_train_reject_bad_arguments() {
    let run = qilin(&["datagen", "--games", "1"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--out <DIR>"));
    let run = qilin(&[
        "train",
        "--data",
        "/nonexistent/qilin.bin",
        "--dir",
        "/nonexistent/out",
    ]);
    assert_eq!(run.status.code(), Some(1));
    let run = qilin(&["train", "--lambda", "2", "--data", "x", "--dir", "y"]);
    assert_eq!(run.status.code(), Some(2));
    // The hand-written evaluation and its tuner are gone.
    let run = qilin(&["tune", "--data", "x"]);
    assert_eq!(run.status.code(), Some(2));
    let run = qilin(&["eval", "--no-net"]);
    assert_eq!(run.status.code(), Some(2));
}

/// Self-play data to a net the engine evaluates with: `datagen`, then
/// `train` writes a net of the width asked for, which `eval --net` reads.
#[test]
fn train_fits_a_net_that_eval_reads() {
    let scratch = Scratch::new("train");
    let (data, dir, out) = (
        scratch.file("run"),
        scratch.file("fit"),
        scratch.file("best.nnue"),
    );
    let run = qilin(&[
        "datagen", "--out", &data, "--games", "2", "--nodes", "300", "--seed", "9",
    ]);
    assert!(run.status.success());
    let run = qilin(&[
        "train",
        "--data",
        &data,
        "--dir",
        &dir,
        "--out",
        &out,
        "--hidden",
        "16",
        "--epochs",
        "2",
        "--batch",
        "64",
        "--validation",
        "0.2",
        "--threads",
        "1",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let cli = qilin(&["eval", "--net", &out, ITALIAN]);
    assert!(cli.status.success());
    let text = String::from_utf8_lossy(&cli.stdout);
    assert!(text.starts_with("net: (768 -> 16) x 2 -> 1"), "{text}");
}

/// A random net of 64 neurons written to `path` (the search's behaviour
/// with it is a search's, not a player's).
fn write_random_net(path: &str) -> Vec<u8> {
    let bytes = qilin::nnue::Network::random(5, 64).to_bytes();
    std::fs::write(path, &bytes).expect("write the net");
    bytes
}

/// `EvalFile` makes the search use a net: it still answers legal moves,
/// in standard chess and Chess960, with en passant and promotions about;
/// `eval` shows the net's score, the same as `qilin eval --net`.
#[test]
fn a_net_set_by_evalfile_searches_and_evaluates() {
    let scratch = Scratch::new("evalfile");
    let net = scratch.file("random.nnue");
    write_random_net(&net);
    let mut e = Engine::start();
    let lines = e.ask(&format!("setoption name EvalFile value {net}"));
    assert_eq!(
        lines,
        [format!("info string evaluation: net {net} (64 hidden)")]
    );
    let positions = [
        ("startpos", false),
        // En passant (e5xd6) and a promotion (b7b8) at hand.
        ("fen 4k3/1P6/8/3pP3/8/8/8/4K3 w - d6 0 2", false),
        // Chess960: castling king-takes-rook.
        ("fen rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1", true),
    ];
    for (position, chess960) in positions {
        e.send(&format!("setoption name UCI_Chess960 value {chess960}"));
        e.send(&format!("position {position}"));
        let lines = go_to_a_legal_move(&mut e, "depth 6", &format!("{position}: "));
        assert!(
            lines.iter().all(|l| !l.contains("error")),
            "{position}: {lines:?}"
        );
    }
    e.send("setoption name UCI_Chess960 value false");
    e.send(&format!("position fen {ITALIAN}"));
    let lines = e.ask("eval");
    assert!(
        lines[0].starts_with("net: (768 -> 64) x 2 -> 1"),
        "{lines:?}"
    );
    let cli = qilin(&["eval", "--net", &net, ITALIAN]);
    assert!(cli.status.success());
    let cli = stdout_lines(&cli);
    assert_eq!(lines, cli);
    // `<empty>` goes back to the default evaluation, the embedded net.
    let lines = e.ask("setoption name EvalFile value <empty>");
    assert_eq!(
        lines,
        ["info string evaluation: embedded net (256 hidden, 8 output buckets, mirrored)"]
    );
    assert!(e.ask("eval")[0].starts_with("net: (768 -> 256)"));
    e.close();
}

/// A net of 8 output buckets (a version-2 file) loads by `EvalFile`,
/// searches, and `eval` names the bucket of the position: the Italian
/// game's 32 pieces take the last.
#[test]
fn a_net_with_output_buckets_searches_and_evaluates() {
    let scratch = Scratch::new("evalfile-buckets");
    let net = scratch.file("bucketed.nnue");
    let bytes = qilin::nnue::Network::random_bucketed(5, 64, 8).to_bytes();
    std::fs::write(&net, &bytes).expect("write the net");
    let mut e = Engine::start();
    let lines = e.ask(&format!("setoption name EvalFile value {net}"));
    assert_eq!(
        lines,
        [format!(
            "info string evaluation: net {net} (64 hidden, 8 output buckets)"
        )]
    );
    e.send("position fen 4k3/1P6/8/3pP3/8/8/8/4K3 w - d6 0 2");
    go_to_a_legal_move(&mut e, "depth 6", "");
    e.send(&format!("position fen {ITALIAN}"));
    let lines = e.ask("eval");
    assert!(
        lines[0].starts_with("net: (768 -> 64) x 2 -> 8"),
        "{lines:?}"
    );
    assert!(lines[1].contains("from bucket 8 of 8"), "{lines:?}");
    let cli = qilin(&["eval", "--net", &net, ITALIAN]);
    let cli = stdout_lines(&cli);
    assert_eq!(lines, cli);
    e.close();
}

/// A net whose kings choose its inputs (version 3: 4 king buckets with
/// mirroring) loads, names its shape, searches to a legal move and says
/// which bucket each king reads; `eval` and `qilin eval --net` agree.
#[test]
fn a_net_with_king_buckets_searches_and_evaluates() {
    use qilin::nnue::format::Kings;
    let scratch = Scratch::new("evalfile-kings");
    let net = scratch.file("kings.nnue");
    let kings = Kings::preset(4, true).expect("a preset");
    let bytes = qilin::nnue::Network::random_shaped(5, 64, 8, kings).to_bytes();
    std::fs::write(&net, &bytes).expect("write the net");
    let mut e = Engine::start();
    let lines = e.ask(&format!("setoption name EvalFile value {net}"));
    assert_eq!(
        lines,
        [format!(
            "info string evaluation: net {net} (64 hidden, 8 output buckets, 4 king buckets, mirrored)"
        )]
    );
    // King moves across the d/e files and between ranks change the views.
    e.send("position fen 8/3k4/8/8/8/8/3PK3/8 w - - 0 1");
    go_to_a_legal_move(&mut e, "depth 8", "");
    // White's king on c1: flipped to f1, bucket 1; Black's on g8 (g1 from
    // its side): bucket 2.
    let fen = "6k1/5ppp/8/8/8/8/5PPP/2K5 w - - 0 1";
    e.send(&format!("position fen {fen}"));
    let lines = e.ask("eval");
    assert!(
        lines[0].starts_with("net: (3072 -> 64) x 2 -> 8"),
        "{lines:?}"
    );
    assert_eq!(
        lines[1],
        "net inputs: White's king in bucket 1 of 4, the board flipped a-h; Black's king in bucket 2 of 4"
    );
    let cli = qilin(&["eval", "--net", &net, fen]);
    let cli = stdout_lines(&cli);
    assert_eq!(lines, cli);
    e.close();
}

/// A damaged or missing net file is one error line; the engine keeps the
/// evaluation it had and still plays.
#[test]
fn a_damaged_net_file_is_refused_with_one_error() {
    let scratch = Scratch::new("evalfile-damaged");
    let (good, damaged, short) = (
        scratch.file("good.nnue"),
        scratch.file("damaged.nnue"),
        scratch.file("short.nnue"),
    );
    let mut bytes = write_random_net(&good);
    bytes[5000] ^= 1;
    std::fs::write(&damaged, &bytes).expect("write");
    std::fs::write(&short, &bytes[..1000]).expect("write");
    let mut e = Engine::start();
    let lines = e.ask(&format!("setoption name EvalFile value {damaged}"));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with(&format!(
            "info string error: EvalFile '{damaged}': net file damaged: checksum "
        )) && lines[0]
            .ends_with("; keeping the embedded net (256 hidden, 8 output buckets, mirrored)"),
        "{lines:?}"
    );
    assert!(e.ask("eval")[0].starts_with("net: (768 -> 256)"));
    e.ask(&format!("setoption name EvalFile value {good}"));
    let lines = e.ask(&format!("setoption name EvalFile value {short}"));
    assert_eq!(
        lines,
        [format!(
            "info string error: EvalFile '{short}': net file truncated: 1000 bytes, \
             the header's shape needs {}; keeping the net {good} (64 hidden)",
            bytes.len()
        )]
    );
    let missing = scratch.file("missing.nnue");
    let lines = e.ask(&format!("setoption name EvalFile value {missing}"));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("cannot read the net")
            && lines[0].ends_with(&format!("keeping the net {good} (64 hidden)")),
        "{lines:?}"
    );
    assert!(e.ask("eval")[0].starts_with("net: "));
    let lines = e.go("depth 3");
    assert!(lines.last().is_some_and(|l| l.starts_with("bestmove ")));
    e.close();
    // On the command line: a usage error, exit code 2.
    for tool in [&["eval"][..], &["bench", "1"], &["analyse", "--depth", "1"]] {
        let mut args = tool.to_vec();
        args.extend(["--net", &damaged]);
        let out = qilin(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: --net: net file damaged: checksum "),
            "{err}"
        );
    }
}

/// What cannot be a net is refused from its metadata, at once and unread,
/// with one error line, and the net in use stays: a FIFO (opening one
/// blocks until a writer comes, and the engine hung for good, deaf to
/// `quit`), a device (`/dev/zero` was read until memory ran out), a file
/// far longer than any net (a 2 GiB one was read whole before its header
/// was looked at), a folder.
#[cfg(target_os = "linux")]
#[test]
fn what_cannot_be_a_net_is_refused_unread() {
    use std::time::{Duration, Instant};
    let scratch = Scratch::new("evalfile-kinds");
    let good = scratch.file("good.nnue");
    write_random_net(&good);
    let fifo = scratch.file("fifo.nnue");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    // Sparse: no disk space, no time to write.
    let huge = scratch.file("huge.nnue");
    let file = std::fs::File::create(&huge).expect("create");
    file.set_len(2 << 30).expect("set_len");
    drop(file);
    let folder = scratch.file("");
    let folder = folder.trim_end_matches('/');
    let largest = qilin::nnue::network::MAX_FILE_LEN;
    let mut e = Engine::start();
    assert_eq!(
        e.ask(&format!("setoption name EvalFile value {good}"))
            .len(),
        1
    );
    let keeping = format!("keeping the net {good} (64 hidden)");
    for (path, reason) in [
        (
            fifo.as_str(),
            format!("cannot read the net: {fifo}: not a regular file but a FIFO"),
        ),
        (
            "/dev/zero",
            "cannot read the net: /dev/zero: not a regular file but a character device".into(),
        ),
        (
            huge.as_str(),
            format!(
                "not a Qilin net: 2147483648 bytes, longer than the largest net \
                 ({largest} bytes, 4096 hidden)"
            ),
        ),
        (
            folder,
            format!("cannot read the net: {folder}: not a regular file but a folder"),
        ),
    ] {
        let sent = Instant::now();
        let lines = e.ask(&format!("setoption name EvalFile value {path}"));
        assert_eq!(
            lines,
            [format!(
                "info string error: EvalFile '{path}': {reason}; {keeping}"
            )]
        );
        assert!(
            sent.elapsed() < Duration::from_secs(1),
            "{path}: {:?}",
            sent.elapsed()
        );
    }
    assert!(e.ask("eval")[0].starts_with("net: (768 -> 64)"));
    let lines = e.go("depth 2");
    assert!(lines.last().is_some_and(|l| l.starts_with("bestmove ")));
    e.close();
}
