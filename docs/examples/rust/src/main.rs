//! rusty: a Morris Arena bot in Rust that knows no rules.
//!
//! Its bot.yaml says `legal_moves: true`, so just before each `go` the referee sends
//! `legalmoves <m1> <m2> ...` listing every legal turn (captures included, e.g. d6xa1).
//! The bot remembers the first move of the last such line and plays it on `go`.
//! Built by the referee from bot.yaml's `build:` line (cargo build --release).
use std::io::{self, BufRead, Write};

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut send = |line: &str| {
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap(); // the referee waits for each line: flush it
    };
    let mut first_move = String::new();
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        let mut words = line.split_whitespace();
        match words.next() {
            Some("morris") => {
                send("id name rusty");
                send("id author Morris Arena examples");
                send("morrisok");
            }
            Some("isready") => send("readyok"),
            Some("legalmoves") => first_move = words.next().unwrap_or("").to_string(),
            Some("go") => send(&format!("bestmove {first_move}")),
            Some("quit") => break,
            _ => {} // newgame, position, setoption, gameover: nothing to do here
        }
    }
}
