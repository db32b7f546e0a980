//! A GUI in miniature: starts the built engine and talks to it over pipes.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(20);

pub struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Engine {
    pub fn start() -> Engine {
        Engine::with_args(&[])
    }

    pub fn with_args(args: &[&str]) -> Engine {
        let mut command = Command::new(env!("CARGO_BIN_EXE_qilin"));
        command.args(args);
        Engine::from_command(command)
    }

    /// Starts `command` (which must run the engine, perhaps through a
    /// wrapper such as `sh -c 'ulimit …; exec …'`) with piped input and
    /// output; stderr is as `command` sets it (inherited by default).
    pub fn from_command(mut command: Command) -> Engine {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the engine");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Engine {
            child,
            stdin,
            lines,
        }
    }

    /// Sends raw bytes, exactly as given (no newline added).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to engine");
        stdin.flush().expect("flush");
    }

    /// Sends one line; an error (the engine has gone, its input is closed)
    /// comes back to the caller instead of a panic.
    pub fn try_send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("engine input already closed"))?;
        stdin.write_all(format!("{line}\n").as_bytes())?;
        stdin.flush()
    }

    pub fn send(&mut self, line: &str) {
        self.send_raw(format!("{line}\n").as_bytes());
    }

    /// The next line, or `None` after `timeout`.
    pub fn next_line(&mut self, timeout: Duration) -> Option<String> {
        self.lines.recv_timeout(timeout).ok()
    }

    /// The next line, `Err(Timeout)` after `timeout`, or `Err(Disconnected)`
    /// once the engine's output has closed and every line was read.
    pub fn recv(&mut self, timeout: Duration) -> Result<String, RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// Lines up to and including the first that satisfies `done`.
    pub fn read_until(&mut self, done: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + TIMEOUT;
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .next_line(left)
                .unwrap_or_else(|| panic!("engine went silent; so far: {out:#?}"));
            let stop = done(&line);
            out.push(line);
            if stop {
                return out;
            }
        }
    }

    /// Sends `line`, then `isready`, and returns what came before `readyok`.
    pub fn ask(&mut self, line: &str) -> Vec<String> {
        self.send(line);
        self.sync()
    }

    /// Sends `isready` and returns the lines before `readyok`.
    pub fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        let mut lines = self.read_until(|l| l == "readyok");
        lines.pop();
        lines
    }

    /// Sends `go …` and returns every line through `bestmove`.
    pub fn go(&mut self, params: &str) -> Vec<String> {
        self.send(format!("go {params}").trim_end());
        self.read_until(|l| l.starts_with("bestmove"))
    }

    /// `go perft 1` in the current position, as a set of UCI moves.
    pub fn legal_moves(&mut self) -> BTreeSet<String> {
        self.perft(1).0
    }

    /// The divide lines and total of `go perft depth`.
    pub fn perft(&mut self, depth: u32) -> (BTreeSet<String>, u64) {
        self.send(&format!("go perft {depth}"));
        let lines = self.read_until(|l| l.starts_with("Nodes searched:"));
        let total = lines
            .last()
            .and_then(|l| l.strip_prefix("Nodes searched: "))
            .and_then(|n| n.parse().ok())
            .expect("perft total");
        let moves = lines
            .iter()
            .filter_map(|l| l.split_once(": ").map(|(m, _)| m.to_string()))
            .filter(|m| m != "Nodes searched")
            .collect();
        (moves, total)
    }

    /// Closes stdin (end of input) without waiting.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// The engine's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin and waits for the engine to exit.
    pub fn close(mut self) -> ExitStatus {
        self.stdin = None;
        wait_exit(&mut self.child, Duration::from_secs(5))
    }

    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }
}

pub fn wait_exit(child: &mut Child, timeout: Duration) -> ExitStatus {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("engine did not exit within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A set of moves from a space-separated list.
pub fn moves(list: &str) -> BTreeSet<String> {
    list.split_whitespace().map(String::from).collect()
}

/// The `info string` lines among `lines`.
pub fn info_strings(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .map(String::as_str)
        .filter(|l| l.starts_with("info string"))
        .collect()
}

/// The keywords that may follow `info` (UCI).
pub const INFO_KEYWORDS: [&str; 17] = [
    "depth",
    "seldepth",
    "time",
    "nodes",
    "pv",
    "multipv",
    "score",
    "currmove",
    "currmovenumber",
    "hashfull",
    "nps",
    "tbhits",
    "sbhits",
    "cpuload",
    "string",
    "refutation",
    "currline",
];

/// Looks like a UCI move: `e2e4`, `e7e8q`.
pub fn is_move_text(t: &str) -> bool {
    let b = t.as_bytes();
    (b.len() == 4 || b.len() == 5)
        && (b'a'..=b'h').contains(&b[0])
        && (b'1'..=b'8').contains(&b[1])
        && (b'a'..=b'h').contains(&b[2])
        && (b'1'..=b'8').contains(&b[3])
        && (b.len() == 4 || b"nbrq".contains(&b[4]))
}

/// What is wrong with one output line, if anything, whatever command it
/// answers.
pub fn shape_fault(line: &str) -> Option<&'static str> {
    if line.contains('\r') {
        return Some("a carriage return in the line");
    }
    if line.contains("internal error") {
        return Some("an internal error");
    }
    if line.to_ascii_lowercase().contains("error") && !line.starts_with("info string ") {
        return Some("an error that is not an `info string` line");
    }
    let t: Vec<&str> = line.split(' ').collect();
    if line.starts_with("info") && !(t[0] == "info" && t.len() > 1 && INFO_KEYWORDS.contains(&t[1]))
    {
        return Some("`info` not followed by a UCI info keyword");
    }
    if line.starts_with("bestmove") {
        let best_ok = t.len() > 1 && (t[1] == "(none)" || is_move_text(t[1]));
        let rest_ok = t.len() == 2 || (t.len() == 4 && t[2] == "ponder" && is_move_text(t[3]));
        if t[0] != "bestmove" || !best_ok || !rest_ok {
            return Some("not `bestmove <move> [ponder <move>]`");
        }
    }
    None
}
