//! The command line: every tool answers `--help`, a wrong option is one
//! clear error with exit code 2, and the README's command table says what
//! `--help` says (it is checked here, row by row).

use std::process::{Command, Output};

fn qilin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .output()
        .expect("run qilin")
}

fn stdout(args: &[&str]) -> String {
    let out = qilin(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The tools `qilin --help` lists, with their one-line descriptions.
fn tools() -> Vec<(String, String)> {
    let help = stdout(&["--help"]);
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            let (name, about) = l.trim().split_once(' ')?;
            (name != "help").then(|| (name.to_string(), about.trim().to_string()))
        })
        .collect()
}

/// The README row for a tool, as its `--help` gives it.
fn row(tool: &str, about: &str) -> String {
    let help = stdout(&[tool, "--help"]);
    let usage = help
        .lines()
        .find_map(|l| l.strip_prefix("Usage: "))
        .unwrap_or_else(|| panic!("no usage line in {tool} --help"));
    let options: Vec<String> = help
        .lines()
        .filter_map(|l| {
            // `  -V, --version …` or `      --threads <THREADS> …`
            let l = l.trim_start();
            let short = !l.starts_with("--") && l.starts_with('-') && l.get(2..4) == Some(", ");
            let l = if short {
                l.get(4..).unwrap_or_default()
            } else {
                l
            };
            let name: String = l
                .strip_prefix("--")?
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (name != "help").then(|| format!("`--{name}`"))
        })
        .collect();
    let options = if options.is_empty() {
        "none".to_string()
    } else {
        options.join(", ")
    };
    format!("| `{usage}` | {about} | {options} |")
}

#[test]
fn the_readme_table_is_what_help_says() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let tools = tools();
    let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "perft",
            "bench",
            "analyse",
            "eval",
            "datagen",
            "train",
            "play",
            "annotate",
            "data-stats"
        ]
    );
    for (tool, about) in &tools {
        let row = row(tool, about);
        assert!(
            readme.lines().any(|l| l == row),
            "README.md lacks the row\n{row}"
        );
    }
}

#[test]
fn every_tool_answers_help_and_wrong_options_exit_2() {
    for (tool, _) in tools() {
        let help = stdout(&[&tool, "--help"]);
        assert!(help.contains("Usage: qilin "), "{tool}: {help}");
        let out = qilin(&[&tool, "--no-such-option"]);
        assert_eq!(out.status.code(), Some(2), "{tool}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: unexpected argument '--no-such-option'"),
            "{tool}: {err}"
        );
        assert_eq!(err.matches("error:").count(), 1, "{tool}: {err}");
    }
    // A value the tool refuses after parsing: the same wording and code.
    let out = qilin(&["eval", "8/8/8/x"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: invalid fen '8/8/8/x'"), "{err}");
    assert!(err.contains("Usage: qilin eval"), "{err}");
    assert_eq!(stdout(&["--version"]).trim(), qilin::NAME);
}

/// `analyse` given an illegal move says what UCI says: the error, then the
/// rule the move breaks, in the same words.
#[test]
fn analyse_explains_an_illegal_move() {
    let out = qilin(&["analyse", "--moves", "e2e4", "e7e5", "e4e5", "--depth", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "error: illegal move 'e4e5' at ply 3; position set up to ply 2\n\
             reason: The white pawn on e4 cannot move to e5: the black pawn on e5 stands there, \
             and a pawn captures only diagonally, never straight ahead.\n"
        ),
        "{err}"
    );
    assert!(err.contains("Usage: qilin analyse"), "{err}");
    assert_eq!(err.matches("error:").count(), 1, "{err}");
}

/// `qilin --version` and the UCI `id name` name the version and the commit
/// built (`build.rs`): a short hash, or `unknown` outside a git checkout.
#[test]
fn the_version_carries_the_commit() {
    let version = stdout(&["--version"]);
    let version = version.trim();
    let commit = version
        .strip_prefix(concat!("Qilin ", env!("CARGO_PKG_VERSION"), " ("))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{version}"));
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{version}"
    );
    let uci = stdout(&["uci", "quit"]);
    assert_eq!(
        uci.lines().next(),
        Some(format!("id name {version}").as_str())
    );
}

/// The FENs of `info string genfens <FEN>` lines, each checked to be a legal
/// position with all six fields (OpenBench's client splits off the move
/// counters).
fn genfens(args: &[&str]) -> Vec<String> {
    let out = stdout(args);
    out.lines()
        .filter_map(|l| l.strip_prefix("info string genfens "))
        .map(|fen| {
            assert_eq!(fen.split(' ').count(), 6, "{fen}");
            let setup: shakmaty::fen::Fen = fen.parse().unwrap_or_else(|e| panic!("{fen}: {e}"));
            let pos: shakmaty::Chess = setup
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap_or_else(|e| panic!("{fen}: {e}"));
            assert!(!shakmaty::Position::legal_moves(&pos).is_empty(), "{fen}");
            fen.to_string()
        })
        .collect()
}

/// Exactly as OpenBench's client runs it: `./engine "genfens N seed S book
/// <None|Books/…> <extra>" "quit"` (with no extra, the line ends in a space),
/// after `setoption name EvalFile value …` for a private net.
#[test]
fn genfens_as_openbench_runs_it() {
    let first = genfens(&["genfens 10 seed 1 book None ", "quit"]);
    assert_eq!(first.len(), 10, "{first:?}");
    assert_eq!(genfens(&["genfens 10 seed 1 book None ", "quit"]), first);
    let other = genfens(&["genfens 10 seed 2 book None ", "quit"]);
    assert_eq!(other.len(), 10);
    assert_ne!(other, first);
    // From the start position: 8 or 9 random plies, so move 5.
    assert!(first.iter().all(|f| f.ends_with(" 5")), "{first:?}");
    // The same net given as a file: the same positions.
    let net = concat!(env!("CARGO_MANIFEST_DIR"), "/nets/qilin-net-1.nnue");
    let with_net = format!("setoption name EvalFile value {net}");
    assert_eq!(
        genfens(&[&with_net, "genfens 10 seed 1 book None ", "quit"]),
        first
    );
    // Without `quit` the end of the arguments ends the engine, all the same.
    assert_eq!(genfens(&["genfens 3 seed 1 book None"]), first[..3]);
}

#[test]
fn genfens_from_a_book() {
    let book = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/engine-tests/books/8moves_2000.epd"
    );
    let line = format!("genfens 4 seed 9 book {book} ");
    let fens = genfens(&[&line, "quit"]);
    assert_eq!(fens.len(), 4, "{fens:?}");
    assert_eq!(genfens(&[&line, "quit"]), fens);
    // The book's positions are after move 8; a few random plies follow.
    let book_text = std::fs::read_to_string(book).expect("the book");
    let placements: Vec<&str> = book_text
        .lines()
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert!(
        fens.iter()
            .all(|f| !placements.contains(&f.split(' ').next().unwrap_or("")))
    );
    // A missing book: one error line, no position, and the engine still ends.
    let out = stdout(&["genfens 2 seed 1 book /no/such/book.epd", "quit"]);
    assert_eq!(
        out.trim(),
        "info string error: genfens: /no/such/book.epd: No such file or directory (os error 2)"
    );
}

/// Arguments are UCI lines only when they are not a subcommand: `qilin
/// bench 1` stays the tool, and a mistyped tool stays a usage error.
#[test]
fn arguments_as_uci_lines_and_tools_stay_apart() {
    let bench = stdout(&["bench", "1"]);
    let last = bench.lines().last().unwrap_or_default();
    let words: Vec<&str> = last.split(' ').collect();
    assert!(
        matches!(words[..], [n, "nodes", s, "nps"] if n.parse::<u64>().is_ok() && s.parse::<u64>().is_ok()),
        "{last}"
    );
    assert_eq!(
        stdout(&["bench 1"])
            .lines()
            .last()
            .map(|l| l.split(' ').next()),
        Some(Some(words[0]))
    );
    assert_eq!(qilin(&["perf"]).status.code(), Some(2));
    let out = stdout(&["position startpos moves e2e4", "go depth 2"]);
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("bestmove ")),
        "{out}"
    );
    // A search that waits for `stop` is stopped at the end of the lines.
    let out = stdout(&["go infinite"]);
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("bestmove ")),
        "{out}"
    );
}

/// A short game piped into `qilin play --ascii`: Qilin (White) can only
/// move its king between g1 and h1, the player (Black) shuffles between a8
/// and b8. The output shows the board, an illegal move explained in the
/// words of `rules_explain`, the offer to claim, the claim, and the saved
/// game.
#[test]
fn play_takes_a_game_from_standard_input() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("qilin-play-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let pgn = dir.join("game.pgn");
    let script = format!(
        "Rd2\nKb8\nKa8\nKb8\nclaim\nclaim Ka8\npgn {}\nquit\n",
        pgn.display()
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args([
            "play", "--ascii", "--color", "black", "--nodes", "1000", "--fen",
        ])
        .args("k7/8/8/8/8/8/3nr3/6K1 w - - 0 1".split(' '))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start qilin play");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("write the script");
    let out = child.wait_with_output().expect("qilin play ends");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let expected = [
        // The board from Black's side, Qilin's first move in brackets.
        "     h  g  f  e  d  c  b  a ",
        "  1 [K][.] .  .  .  .  .  .  1",
        "Qilin played Kh1.",
        // In rules_explain's words, as the UCI loop gives them.
        "Illegal move 'Rd2':",
        "  The black rook on e2 cannot go to d2: the black knight on d2 stands there, and a \
         piece can never capture a piece of its own colour.",
        "You played Kb8.",
        "You may claim a draw by threefold repetition with your move Ka8: type claim and the \
         move (claim Ka8) before you play it.",
        "No draw can be claimed: the position has stood 2 times (a claim needs 3), and 3 \
         moves by each side have passed without a capture or a pawn move (a claim needs 50).",
        "You played Ka8.",
        "Game over: Draw claimed by Black under threefold repetition. Result 1/2-1/2.",
        &format!("Game saved to {}.", pgn.display()),
        "Goodbye.",
    ];
    let mut rest = text.as_ref();
    for line in expected {
        let at = rest
            .find(line)
            .unwrap_or_else(|| panic!("no line {line:?} in order in\n{text}"));
        rest = &rest[at + line.len()..];
    }
    let saved = std::fs::read_to_string(&pgn).expect("the saved game");
    assert!(
        saved.contains("[FEN \"k7/8/8/8/8/8/3nr3/6K1 w - - 0 1\"]"),
        "{saved}"
    );
    assert!(
        saved.contains("1. Kh1 Kb8 2. Kg1 Ka8 3. Kh1 Kb8 4. Kg1 Ka8"),
        "{saved}"
    );
    assert!(saved.trim_end().ends_with("1/2-1/2"), "{saved}");
    let _ = std::fs::remove_dir_all(&dir);
}
