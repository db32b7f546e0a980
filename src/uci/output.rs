//! The one writer of engine output: each line is written whole and flushed
//! under a lock, so lines from the controller and the search never interleave.

use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub struct Output {
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl Output {
    pub fn stdout() -> Output {
        Output::new(Box::new(std::io::stdout()))
    }

    pub fn new(sink: Box<dyn Write + Send>) -> Output {
        Output {
            sink: Arc::new(Mutex::new(sink)),
        }
    }

    /// Writes one line. A closed stdout (the GUI went away) is not an error
    /// worth dying for: the engine will see end of input and quit.
    pub fn line(&self, text: &str) {
        let mut sink = match self.sink.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut buf = Vec::with_capacity(text.len() + 1);
        buf.extend_from_slice(text.as_bytes());
        buf.push(b'\n');
        let _ = sink.write_all(&buf).and_then(|()| sink.flush());
    }

    pub fn info_string(&self, text: &str) {
        self.line(&format!("info string {text}"));
    }

    pub fn error(&self, text: &str) {
        self.line(&format!("info string error: {text}"));
    }
}
