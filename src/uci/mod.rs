//! The UCI side: reading lines, parsing them, options and output.

pub mod options;
pub mod output;
pub mod parse;

use crate::engine::Engine;
use output::Output;
use parse::{Command, parse};
use std::io::BufRead;

/// Runs the protocol on stdin/stdout until `quit` or the end of input. This
/// thread only reads and parses; the controller executes on its own thread.
pub fn run() {
    let out = Output::stdout();
    let (tx, rx) = crossbeam_channel::unbounded();
    let controller = std::thread::spawn(move || Engine::new(rx, out).run());
    let stdin = std::io::stdin();
    let mut reader = stdin.lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        // Bytes, not a String: a line that is not UTF-8 must not end the loop.
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        let parsed = parse(&line);
        let is_quit = parsed.command == Some(Command::Quit);
        if tx.send(parsed).is_err() || is_quit {
            break;
        }
    }
    drop(tx);
    let _ = controller.join();
}
