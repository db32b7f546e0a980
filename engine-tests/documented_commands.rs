//! The documents show commands that work: every `qilin …` command in a
//! shell block of README.md and docs/*.md names a subcommand the binary has
//! and only options that subcommand's `--help` lists, and the UCI session of
//! docs/uci.md is what the engine answers, line by line.
//!
//! Subcommands documented before they land are named, one a line, in
//! `engine-tests/documented_commands_pending.txt`; their commands are
//! skipped until the name is removed from that file.

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, then docs/*.md in name order.
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root().join("README.md"));
    docs
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines of the fenced blocks whose language is a shell, each command
/// joined across `\` continuations, prompts (`$ `) and comments removed.
fn shell_lines(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_shell = false;
    let mut in_other = false;
    let mut pending = String::new();
    for line in markdown.lines() {
        let trimmed = line.trim();
        if let Some(lang) = trimmed.strip_prefix("```") {
            if in_shell || in_other {
                in_shell = false;
                in_other = false;
            } else if matches!(lang.trim(), "sh" | "bash" | "shell" | "console") {
                in_shell = true;
            } else {
                in_other = true;
            }
            continue;
        }
        if !in_shell {
            continue;
        }
        let text = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
        match text.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(text);
                out.push(std::mem::take(&mut pending));
            }
        }
    }
    out
}

/// Words as the shell splits them (quotes kept together, not expanded
/// further), with `#` comments dropped and the separators `;`, `&&`, `||`,
/// `|` as words of their own.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if word.is_empty() => break,
            (None, ' ' | '\t') => out.extend((!word.is_empty()).then(|| std::mem::take(&mut word))),
            (None, ';' | '|' | '&') => {
                out.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                out.push(c.to_string());
            }
            (None, c) => word.push(c),
        }
    }
    out.extend((!word.is_empty()).then_some(word));
    out
}

/// `qilin`, `./qilin`, `target/release/qilin`…, but not `BASE=/path/to/qilin`.
fn is_qilin(word: &str) -> bool {
    !word.contains('=')
        && (word == "qilin" || word.ends_with("/qilin") || word.ends_with("qilin.exe"))
}

/// The arguments of each `qilin` run in a command line: a `qilin` word
/// that is not the value of an option (`--engine ./qilin`), up to the next
/// separator or redirection.
fn invocations(line: &str) -> Vec<Vec<String>> {
    let words = words(line);
    let mut out = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let previous = i.checked_sub(1).and_then(|p| words.get(p));
        let is_value = previous.is_some_and(|p| p.starts_with('-') && !p.contains('='));
        if !is_qilin(word) || is_value {
            continue;
        }
        let args: Vec<String> = words
            .iter()
            .skip(i + 1)
            .take_while(|w| !matches!(w.as_str(), ";" | "|" | "&") && !w.starts_with(['>', '<']))
            .filter(|w| !w.starts_with("2>"))
            .cloned()
            .collect();
        out.push(args);
    }
    out
}

/// `qilin [SUBCOMMAND] --help`, once per subcommand.
struct Helps(BTreeMap<Option<String>, Result<String, String>>);

impl Helps {
    fn get(&mut self, subcommand: Option<&str>) -> &Result<String, String> {
        self.0
            .entry(subcommand.map(str::to_string))
            .or_insert_with(|| {
                let mut command = Command::new(env!("CARGO_BIN_EXE_qilin"));
                command.args(subcommand).arg("--help");
                let out = command.output().expect("run qilin");
                if out.status.success() {
                    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
                } else {
                    Err(String::from_utf8_lossy(&out.stderr).into_owned())
                }
            })
    }
}

/// Whether `--help` lists the option (`--name` or `-n`).
fn lists(help: &str, option: &str) -> bool {
    help.lines().any(|line| {
        line.trim_start()
            .split([' ', ',', '=', '['])
            .any(|word| word == option)
    })
}

/// What is wrong with one documented run of qilin, if anything.
fn check(args: &[String], pending: &BTreeSet<String>, helps: &mut Helps) -> Option<String> {
    let subcommand = args.first().filter(|a| !a.starts_with('-'));
    if subcommand.is_some_and(|s| pending.contains(s)) {
        return None;
    }
    let help = match helps.get(subcommand.map(String::as_str)) {
        Ok(help) => help.clone(),
        Err(error) => return Some(format!("no such subcommand: {}", error.trim())),
    };
    let options = args.iter().filter(|a| a.starts_with('-') && a.len() > 1);
    let unknown: Vec<&str> = options
        .map(|a| a.split('=').next().unwrap_or(a))
        .filter(|option| !lists(&help, option))
        .collect();
    (!unknown.is_empty()).then(|| format!("--help does not list {}", unknown.join(", ")))
}

fn pending() -> BTreeSet<String> {
    read(&root().join("engine-tests/documented_commands_pending.txt"))
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Every faulty command of the markdown text, named with its line.
fn faults(markdown: &str, pending: &BTreeSet<String>, helps: &mut Helps) -> Vec<String> {
    let mut out = Vec::new();
    for line in shell_lines(markdown) {
        for args in invocations(&line) {
            if let Some(fault) = check(&args, pending, helps) {
                out.push(format!("`{line}`: qilin {}: {fault}", args.join(" ")));
            }
        }
    }
    out
}

#[test]
fn every_documented_command_parses() {
    let pending = pending();
    let mut helps = Helps(BTreeMap::new());
    let mut checked = 0;
    let mut all_faults = Vec::new();
    for path in documents() {
        let text = read(&path);
        checked += shell_lines(&text)
            .iter()
            .map(|l| invocations(l).len())
            .sum::<usize>();
        for fault in faults(&text, &pending, &mut helps) {
            all_faults.push(format!("{}: {fault}", path.display()));
        }
    }
    assert!(all_faults.is_empty(), "{}", all_faults.join("\n"));
    // The documents show a dozen or more commands; none found means the
    // extraction is broken, not that every command is right.
    assert!(checked >= 10, "only {checked} qilin commands found");
}

/// The checker itself: removed options, removed subcommands and a mistyped
/// option are caught; wrappers, prompts and continuations are read through;
/// `./qilin` as an option's value is not a command.
#[test]
fn the_checker_finds_what_is_wrong() {
    let pending: BTreeSet<String> = ["annotate".to_string()].into();
    let mut helps = Helps(BTreeMap::new());
    let text = "```sh\n\
        $ qilin bench --no-net\n\
        nice -n 19 ./qilin tune --data x\n\
        ./qilin analyse --fen startpos \\\n    --depht 3   # a typo\n\
        qilin annotate game.pgn --anything\n\
        python3 match.py --engine ./qilin --no-such-thing\n\
        ./qilin perft 3 && ./qilin bench 5 | tail -1\n\
        make sprt BASE=/path/to/qilin TC=10+0.1\n\
        ```\n\
        ```\n\
        qilin --not-a-shell-block\n\
        ```\n";
    let faults = faults(text, &pending, &mut helps);
    assert_eq!(faults.len(), 3, "{faults:#?}");
    assert!(faults[0].ends_with("qilin bench --no-net: --help does not list --no-net"));
    assert!(faults[1].contains("qilin tune --data x: no such subcommand"));
    assert!(faults[2].ends_with("--help does not list --depht"));
}

/// The lines of the session in docs/uci.md: what is sent (`> `) and what
/// comes back, in order.
fn session() -> Vec<String> {
    let text = read(&root().join("docs/uci.md"));
    let start = text
        .find("## A short session")
        .expect("docs/uci.md: A short session");
    let block = text
        .get(start..)
        .and_then(|t| t.split("```").nth(1))
        .expect("the session's code block");
    block
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// `nps` and `time` depend on the machine, and `id name` on the commit
/// built (`Qilin 0.2.0 (abc1234)`, written `(<commit>)` in the docs);
/// everything else must match.
fn without_timing(line: &str) -> String {
    if let Some(name) = line.strip_prefix("id name ")
        && let Some((version, _)) = name.split_once(" (")
    {
        return format!("id name {version} (<commit>)");
    }
    let mut words = Vec::new();
    let mut timing = false;
    for word in line.split(' ') {
        words.push(if timing { "_" } else { word });
        timing = matches!(word, "nps" | "time");
    }
    words.join(" ")
}

#[test]
#[cfg_attr(
    feature = "tune",
    ignore = "a tune build lists every search parameter as an option"
)]
fn the_documented_session_is_what_the_engine_says() {
    let session = session();
    let mut engine = Engine::start();
    let mut said = Vec::new();
    for line in &session {
        let Some(input) = line.strip_prefix("> ") else {
            continue;
        };
        said.push(line.clone());
        match input.split(' ').next() {
            Some("uci") => {
                engine.send(input);
                said.extend(engine.read_until(|l| l == "uciok"));
            }
            Some("isready") => {
                engine.send(input);
                said.extend(engine.read_until(|l| l == "readyok"));
            }
            Some("go") => {
                engine.send(input);
                said.extend(engine.read_until(|l| l.starts_with("bestmove")));
            }
            Some("quit") => {
                engine.send(input);
                while let Ok(l) = engine.recv(TIMEOUT) {
                    said.push(l);
                }
            }
            _ => said.extend(engine.ask(input)),
        }
    }
    let documented: Vec<String> = session.iter().map(|l| without_timing(l)).collect();
    let said: Vec<String> = said.iter().map(|l| without_timing(l)).collect();
    let first_difference = said
        .iter()
        .zip(&documented)
        .position(|(s, d)| s != d)
        .unwrap_or(said.len().min(documented.len()));
    assert_eq!(
        said.get(first_difference..),
        documented.get(first_difference..),
        "docs/uci.md's session differs from the engine from line {} of the session on",
        first_difference + 1
    );
}
