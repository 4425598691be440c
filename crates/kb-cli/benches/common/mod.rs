//! What the benchmarks `startup` and `vault` share: facts about the machine and the work
//! tree for their tables, a process's CPU time, words made from numbers, and a log's tail.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// CPU time (user and system) process `pid` used so far, from `/proc` (clock ticks of
/// 10 ms).
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// A word of letters only, different for each `n`.
pub fn letters(mut n: usize) -> String {
    let mut out = String::new();
    loop {
        out.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
        if n == 0 {
            return out;
        }
    }
}

/// The 1-minute load average (other work on the machine skews the figures).
pub fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// The machine the figures were taken on: its cores and CPU model.
pub fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{} cores, {cpu}", std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `git` facts about the work tree: the commit and whether product code had changes.
pub fn source_state(workspace: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(workspace)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "--short", "HEAD"]) else { return "an unknown commit".into() };
    let dirty = git(&["status", "--porcelain", "--untracked-files=no", "--", "crates", "Cargo.toml"])
        .is_some_and(|s| !s.is_empty());
    if dirty { format!("{head} plus uncommitted changes in the work tree") } else { head }
}

/// The last lines of a log.
pub fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}
