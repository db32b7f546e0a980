//! The front between the GUI and the engine: normalises a raw line, parses it
//! with vampirc-uci where that crate is reliable, and reads the fields it gets
//! wrong from the raw tokens itself.
//!
//! vampirc-uci's faults, each covered by a regression test:
//! - it panics on a `go` line with trailing whitespace and on `depth`, `mate`
//!   or `movestogo` above 255 (caught, never reached: values come from tokens);
//! - it drops `ponder` when time fields come with it;
//! - it drops every move after a double space, and cuts the move list at a bad
//!   token (`a7a8k` becomes `a7a8`), so `position` is read from the tokens;
//! - it takes `position startpos e2e4` as `startpos` and ignores trailing junk;
//! - it keeps `<empty>` literally and keeps trailing spaces in option values;
//! - it does not know `d`, `perft`, `go perft`, `bench`, `help`, FENs without
//!   counters or Shredder castling.

use std::panic::{AssertUnwindSafe, catch_unwind};
use vampirc_uci::UciMessage;

/// A command the engine executes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Uci,
    Debug(bool),
    IsReady,
    Register,
    UciNewGame,
    Position(PositionSpec),
    SetOption {
        name: String,
        value: Option<String>,
    },
    Go(GoParams),
    Stop,
    PonderHit,
    Quit,
    /// `d`: the board, its FEN and key, and the rule status.
    Display,
    /// `eval`: the static evaluation term by term.
    Eval,
    /// `perft N` and `go perft N`.
    Perft(u32),
    /// `bench [depth]`.
    Bench(Option<u32>),
    /// `genfens N seed S book <None|file>`: OpenBench's opening positions.
    Genfens(crate::genfens::Request),
    Help,
    /// Arena's protocol probe: nothing may be printed until `uci`.
    Xboard,
}

/// `position startpos|fen <FEN> [moves …]`: the moves are checked against the
/// position when the game is set up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PositionSpec {
    /// `None` for `startpos`.
    pub fen: Option<String>,
    pub moves: Vec<String>,
}

/// The fields of `go`. Times are in milliseconds; a negative clock reads as 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoParams {
    pub searchmoves: Vec<String>,
    pub ponder: bool,
    pub wtime: Option<u64>,
    pub btime: Option<u64>,
    pub winc: Option<u64>,
    pub binc: Option<u64>,
    pub movestogo: Option<u64>,
    pub depth: Option<u64>,
    pub nodes: Option<u64>,
    pub mate: Option<u64>,
    pub movetime: Option<u64>,
    pub infinite: bool,
    /// The line named a limit (a clock, a depth…), usable or not: a `go`
    /// that says nothing searches on, one whose limits were all unusable
    /// must still end (see `controller::search_limits`).
    pub names_limits: bool,
}

/// What one input line comes to: a command to execute (or none), and the
/// errors to report for what was rejected. A line that is executed in part
/// (a `go` with a malformed field) has both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub command: Option<Command>,
    pub errors: Vec<String>,
    /// The line as received, whitespace normalised (for `debug on`).
    pub line: String,
}

impl Parsed {
    /// A command that came from no input line (the end of input is `quit`).
    pub fn of(command: Command) -> Parsed {
        Parsed {
            command: Some(command),
            ..Parsed::default()
        }
    }

    fn ok(command: Command) -> Parsed {
        Parsed::of(command)
    }

    fn error(message: String) -> Parsed {
        Parsed {
            command: None,
            errors: vec![message],
            line: String::new(),
        }
    }
}

/// Collapses every run of whitespace or control characters (tabs, `\r`, NUL…)
/// into one space and trims the ends.
pub fn normalise(line: &str) -> String {
    line.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses one line a GUI or a person sent.
pub fn parse(line: &str) -> Parsed {
    let normalised = normalise(line);
    let mut parsed = parse_normalised(&normalised);
    parsed.line = normalised;
    parsed
}

fn parse_normalised(normalised: &str) -> Parsed {
    let tokens: Vec<&str> = normalised.split(' ').filter(|t| !t.is_empty()).collect();
    let Some(first) = tokens.first() else {
        return Parsed::default();
    };
    let keyword = first.to_ascii_lowercase();
    let args = &tokens[1..];
    match keyword.as_str() {
        "uci" | "isready" | "ucinewgame" | "stop" | "ponderhit" | "quit" | "register" => {
            simple(&keyword)
        }
        "debug" => match args.first().map(|a| a.to_ascii_lowercase()).as_deref() {
            Some("on") => Parsed::ok(Command::Debug(true)),
            Some("off") => Parsed::ok(Command::Debug(false)),
            _ => Parsed::error(format!("debug expects on or off: {normalised}")),
        },
        "setoption" => parse_setoption(args),
        "position" => parse_position(args),
        "go" => parse_go(args),
        "d" => Parsed::ok(Command::Display),
        "eval" => Parsed::ok(Command::Eval),
        "perft" => parse_perft(args),
        "bench" => match args.first() {
            None => Parsed::ok(Command::Bench(None)),
            Some(t) => match parse_number(t, "bench depth", 1, 64) {
                Ok(d) => Parsed::ok(Command::Bench(Some(d as u32))),
                Err(e) => Parsed::error(e),
            },
        },
        "genfens" => parse_genfens(args),
        "help" => Parsed::ok(Command::Help),
        // Arena's auto-detection sends `xboard` first.
        "xboard" => Parsed::ok(Command::Xboard),
        _ => Parsed::error(format!("unknown command: {normalised}")),
    }
}

/// Commands without arguments go through vampirc-uci, which knows them
/// well; anything after the keyword is ignored, as Stockfish does.
fn simple(keyword: &str) -> Parsed {
    let command = match library_parse(keyword) {
        Some(UciMessage::Uci) => Command::Uci,
        Some(UciMessage::IsReady) => Command::IsReady,
        Some(UciMessage::UciNewGame) => Command::UciNewGame,
        Some(UciMessage::Stop) => Command::Stop,
        Some(UciMessage::PonderHit) => Command::PonderHit,
        Some(UciMessage::Quit) => Command::Quit,
        Some(UciMessage::Register { .. }) => Command::Register,
        // `register` alone is not valid UCI; it is harmless to accept.
        _ if keyword == "register" => Command::Register,
        _ => return Parsed::error(format!("unknown command: {keyword}")),
    };
    Parsed::ok(command)
}

/// vampirc-uci on one normalised line, with its panics caught.
fn library_parse(line: &str) -> Option<UciMessage> {
    match catch_unwind(AssertUnwindSafe(|| vampirc_uci::parse_one(line))) {
        Ok(UciMessage::Unknown(..)) | Err(_) => None,
        Ok(message) => Some(message),
    }
}

fn parse_setoption(args: &[&str]) -> Parsed {
    if !args.first().is_some_and(|t| t.eq_ignore_ascii_case("name")) {
        return Parsed::error("setoption expects: setoption name <name> [value <value>]".into());
    }
    let rest = &args[1..];
    let value_at = rest.iter().position(|t| t.eq_ignore_ascii_case("value"));
    let (name_tokens, value) = match value_at {
        Some(i) => {
            let value = rest[i + 1..].join(" ");
            let value = if value == "<empty>" {
                String::new()
            } else {
                value
            };
            (&rest[..i], Some(value))
        }
        None => (rest, None),
    };
    if name_tokens.is_empty() {
        return Parsed::error("setoption without an option name".into());
    }
    Parsed::ok(Command::SetOption {
        name: name_tokens.join(" "),
        value,
    })
}

fn parse_position(args: &[&str]) -> Parsed {
    let moves_at = args.iter().position(|t| t.eq_ignore_ascii_case("moves"));
    let (setup, moves) = match moves_at {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let fen = match setup.split_first() {
        Some((kind, rest)) if kind.eq_ignore_ascii_case("startpos") => {
            if let Some(extra) = rest.first() {
                return Parsed::error(format!(
                    "unexpected '{extra}' after startpos (expected moves)"
                ));
            }
            None
        }
        Some((kind, rest)) if kind.eq_ignore_ascii_case("fen") => {
            if rest.is_empty() {
                return Parsed::error("position fen without a FEN".into());
            }
            Some(rest.join(" "))
        }
        Some((kind, _)) => {
            return Parsed::error(format!("position expects startpos or fen, not '{kind}'"));
        }
        None => return Parsed::error("position expects startpos or fen".into()),
    };
    Parsed::ok(Command::Position(PositionSpec {
        fen,
        // Upper-case promotion letters (`e7e8Q`) are common.
        moves: moves.iter().map(|m| m.to_ascii_lowercase()).collect(),
    }))
}

fn parse_perft(args: &[&str]) -> Parsed {
    match args {
        [depth] => match parse_number(depth, "perft depth", 1, 64) {
            Ok(d) => Parsed::ok(Command::Perft(d as u32)),
            Err(e) => Parsed::error(e),
        },
        _ => Parsed::error("perft expects one depth: perft <depth>".into()),
    }
}

/// Reads an unsigned number in `min..=max`, naming `what` when it cannot.
/// The most positions one `genfens` may ask for.
pub const MAX_GENFENS: u64 = 1_000_000;

/// `genfens N seed S book <None|file> [extra…]`, as OpenBench's client sends
/// it; the extra words a test may add are reported and ignored.
fn parse_genfens(args: &[&str]) -> Parsed {
    const USAGE: &str = "genfens expects: genfens <N> seed <S> book <None|file>";
    let [count, seed_word, seed, book_word, book, extra @ ..] = args else {
        return Parsed::error(USAGE.into());
    };
    if !seed_word.eq_ignore_ascii_case("seed") || !book_word.eq_ignore_ascii_case("book") {
        return Parsed::error(USAGE.into());
    }
    let count = match parse_number(count, "genfens count", 1, MAX_GENFENS) {
        Ok(n) => n,
        Err(e) => return Parsed::error(e),
    };
    let seed = match parse_number(seed, "genfens seed", 0, u64::MAX) {
        Ok(n) => n,
        Err(e) => return Parsed::error(e),
    };
    let book = (!book.eq_ignore_ascii_case("none")).then(|| book.to_string());
    let mut parsed = Parsed::ok(Command::Genfens(crate::genfens::Request {
        count,
        seed,
        book,
    }));
    if !extra.is_empty() {
        parsed.errors.push(format!(
            "genfens: ignored extra arguments: {}",
            extra.join(" ")
        ));
    }
    parsed
}

fn parse_number(token: &str, what: &str, min: u64, max: u64) -> Result<u64, String> {
    match token.parse::<u64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        Ok(v) => Err(format!("{what} out of range {min}..{max}: {v}")),
        Err(_) => Err(format!("malformed number for {what}: {token}")),
    }
}

const GO_KEYWORDS: [&str; 13] = [
    "searchmoves",
    "ponder",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
    "perft",
];

/// `go`: every field in any order. A malformed or unknown field is reported
/// and skipped, and the rest of the line is still executed, since a `go`
/// that produced no `bestmove` would lose the game on time.
fn parse_go(args: &[&str]) -> Parsed {
    let lower: Vec<String> = args.iter().map(|t| t.to_ascii_lowercase()).collect();
    if lower.first().map(String::as_str) == Some("perft") {
        return parse_perft(&args[1..]);
    }
    let mut go = GoParams::default();
    let mut errors = Vec::new();
    let mut i = 0;
    while i < lower.len() {
        let key = lower[i].as_str();
        i += 1;
        match key {
            "ponder" => go.ponder = true,
            "infinite" => go.infinite = true,
            "searchmoves" => {
                while i < lower.len() && !GO_KEYWORDS.contains(&lower[i].as_str()) {
                    go.searchmoves.push(lower[i].clone());
                    i += 1;
                }
            }
            "wtime" | "btime" | "winc" | "binc" | "movestogo" | "depth" | "nodes" | "mate"
            | "movetime" => {
                go.names_limits = true;
                let Some(raw) = args.get(i) else {
                    errors.push(format!("go {key} without a value"));
                    continue;
                };
                i += 1;
                let Some(value) = go_number(key, raw) else {
                    errors.push(format!("malformed number for go {key}: {raw}"));
                    continue;
                };
                let slot = match key {
                    "wtime" => &mut go.wtime,
                    "btime" => &mut go.btime,
                    "winc" => &mut go.winc,
                    "binc" => &mut go.binc,
                    "movestogo" => &mut go.movestogo,
                    "depth" => &mut go.depth,
                    "nodes" => &mut go.nodes,
                    "mate" => &mut go.mate,
                    _ => &mut go.movetime,
                };
                *slot = Some(value);
            }
            _ => errors.push(format!("unknown go parameter: {}", args[i - 1])),
        }
    }
    if go.movestogo == Some(0) {
        go.movestogo = None;
    }
    Parsed {
        command: Some(Command::Go(go)),
        errors,
        line: String::new(),
    }
}

/// The value of a numeric `go` field. Clocks may run negative in some GUIs:
/// that is no time left. A number beyond 64 bits is malformed (no GUI means
/// a clock of 585 million years), and `mate 0` asks for nothing: both are
/// refused, and the `go` thinks as if the field were not there.
fn go_number(key: &str, raw: &str) -> Option<u64> {
    let is_time = key.ends_with("time") || key.ends_with("inc");
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let negative = raw.starts_with('-');
    if negative {
        // Only a clock may be negative.
        return is_time.then_some(0);
    }
    let value = raw.parse::<u64>().ok()?;
    if key == "mate" && value == 0 {
        return None;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What vampirc-uci makes of a line, for the fault tests: `None` when
    /// it panics or does not know the line.
    fn library_view(line: &str) -> Option<String> {
        library_parse(&normalise(line)).map(|m| format!("{m:?}"))
    }

    fn go(line: &str) -> GoParams {
        match parse(line).command {
            Some(Command::Go(g)) => g,
            other => panic!("not a go: {other:?}"),
        }
    }

    fn position(line: &str) -> PositionSpec {
        match parse(line).command {
            Some(Command::Position(p)) => p,
            other => panic!("not a position: {other:?}"),
        }
    }

    #[test]
    fn normalises_whitespace() {
        assert_eq!(normalise("  go\tdepth  5 \r"), "go depth 5");
    }

    #[test]
    fn trailing_whitespace_after_go_does_not_panic() {
        // vampirc-uci panics on the raw line; the panic is caught.
        assert_eq!(library_parse("go depth 5 "), None);
        assert!(library_parse("go depth 5").is_some());
        assert_eq!(go("go depth 5 ").depth, Some(5));
        assert_eq!(go("go "), GoParams::default());
    }

    #[test]
    fn ponder_with_time_fields_is_kept() {
        assert!(go("go ponder wtime 1000 btime 1000").ponder);
        assert!(go("go wtime 1000 btime 1000 ponder").ponder);
    }

    #[test]
    fn depth_mate_movestogo_above_255() {
        let g = go("go depth 300 mate 1000 movestogo 256");
        assert_eq!(
            (g.depth, g.mate, g.movestogo),
            (Some(300), Some(1000), Some(256))
        );
    }

    #[test]
    fn library_faults_are_real() {
        // Each fault the front works around, shown on vampirc-uci itself.
        assert_eq!(library_parse("go depth 300"), None); // panics
        let ponder = library_view("go ponder wtime 1000 btime 1000").unwrap_or_default();
        assert!(!ponder.contains("Ponder"), "{ponder}");
        let moves = library_parse("position startpos moves  e2e4 e7e5");
        assert!(
            matches!(moves, Some(UciMessage::Position { ref moves, .. }) if moves.is_empty()),
            "{moves:?}"
        );
    }

    #[test]
    fn nodes_with_many_digits() {
        assert_eq!(go("go nodes 1234567890123").nodes, Some(1_234_567_890_123));
    }

    #[test]
    fn double_space_keeps_moves() {
        let p = position("position startpos moves  e2e4  e7e5");
        assert_eq!(p.moves, vec!["e2e4", "e7e5"]);
    }

    #[test]
    fn bad_move_token_is_kept_for_the_game_to_reject() {
        let p = position("position fen 8/P7/8/8/8/8/8/k6K w - - 0 1 moves a7a8k");
        assert_eq!(p.moves, vec!["a7a8k"]);
    }

    #[test]
    fn startpos_without_moves_keyword_is_rejected() {
        let p = parse("position startpos e2e4");
        assert!(p.command.is_none());
        assert_eq!(p.errors.len(), 1);
    }

    #[test]
    fn setoption_values() {
        let cases = [
            ("setoption name Hash value 64", "Hash", Some("64")),
            (
                "setoption name Move Overhead value 100 ",
                "Move Overhead",
                Some("100"),
            ),
            ("setoption name SyzygyPath", "SyzygyPath", None),
            ("setoption name Path value <empty>", "Path", Some("")),
            ("setoption name Path value", "Path", Some("")),
            ("SETOPTION NAME a b VALUE c  d", "a b", Some("c d")),
        ];
        for (line, name, value) in cases {
            assert_eq!(
                parse(line).command,
                Some(Command::SetOption {
                    name: name.into(),
                    value: value.map(String::from)
                }),
                "{line}"
            );
        }
    }

    #[test]
    fn junk_after_keyword_is_an_unknown_command() {
        assert_eq!(
            parse("isreadyxyz").errors,
            vec!["unknown command: isreadyxyz"]
        );
    }

    #[test]
    fn go_fields_in_any_order_with_searchmoves() {
        let g = go("GO searchmoves e2e4 d2d4 wtime 100 btime 200 winc 0 binc 0 movestogo 0");
        assert_eq!(g.searchmoves, vec!["e2e4", "d2d4"]);
        assert_eq!(
            (g.wtime, g.btime, g.winc, g.movestogo),
            (Some(100), Some(200), Some(0), None)
        );
    }

    #[test]
    fn malformed_go_field_is_reported_and_skipped() {
        let p = parse("go depth x movetime 100");
        assert_eq!(p.errors, vec!["malformed number for go depth: x"]);
        match p.command {
            Some(Command::Go(g)) => assert_eq!((g.depth, g.movetime), (None, Some(100))),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn go_perft() {
        assert_eq!(parse("go perft 3").command, Some(Command::Perft(3)));
        assert_eq!(parse("perft 3").command, Some(Command::Perft(3)));
        assert!(parse("perft x").command.is_none());
    }

    #[test]
    fn genfens_as_openbench_sends_it() {
        use crate::genfens::Request;
        let request = |line: &str| match parse(line) {
            Parsed {
                command: Some(Command::Genfens(r)),
                errors,
                ..
            } => (r, errors),
            other => panic!("not a genfens: {other:?}"),
        };
        // OpenBench's format string ends in a space when it has no extra.
        let (r, errors) = request("genfens 64 seed 3735928559 book None ");
        assert_eq!(
            r,
            Request {
                count: 64,
                seed: 3_735_928_559,
                book: None
            }
        );
        assert!(errors.is_empty());
        let (r, errors) = request("genfens 2 seed 0 book Books/UHO_4060_v2.epd extra words");
        assert_eq!(r.book.as_deref(), Some("Books/UHO_4060_v2.epd"));
        assert_eq!(errors, ["genfens: ignored extra arguments: extra words"]);
        for bad in [
            "genfens",
            "genfens 10 seed 1",
            "genfens 0 seed 1 book None",
            "genfens 10 seed -1 book None",
            "genfens 10 sed 1 book None",
            "genfens x seed 1 book None",
        ] {
            let parsed = parse(bad);
            assert_eq!(parsed.command, None, "{bad}");
            assert_eq!(parsed.errors.len(), 1, "{bad}");
        }
    }
}
