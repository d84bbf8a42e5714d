//! Shell commands: what program a command runs (to group repeats), whether its output says it
//! failed, and the line of a failure that identifies it.

use std::sync::LazyLock;

use regex::Regex;

use super::prefilter::contains_ignore_case;
use serde::{Deserialize, Serialize};

/// Commands run with the same program, counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CommandGroup {
    /// The program (`cargo test`, `grep`): the first word, with the subcommand for tools that have them.
    pub program: String,
    pub count: u32,
    /// The newest command of the group, as run.
    pub last: String,
}

/// Programs whose first argument is a subcommand worth telling apart.
const WITH_SUBCOMMAND: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "go", "docker", "kubectl", "npx", "uv", "pip", "make", "gh", "bun", "deno",
    "python", "python3", "node",
];

/// The program a shell command runs: leading `cd … &&`, environment assignments and `sudo` skipped.
pub fn program(command: &str) -> String {
    let last_segment =
        command.split("&&").map(str::trim).find(|s| !s.starts_with("cd ") && !s.is_empty()).unwrap_or(command.trim());
    let mut words = last_segment
        .split_whitespace()
        .filter(|w| !w.contains('=') || w.starts_with('-'))
        .skip_while(|w| *w == "sudo" || *w == "env" || *w == "time");
    let Some(first) = words.next() else { return String::new() };
    let name = first.rsplit('/').next().unwrap_or(first);
    match words.next() {
        Some(sub) if WITH_SUBCOMMAND.contains(&name) && !sub.starts_with('-') => format!("{name} {sub}"),
        _ => name.to_string(),
    }
}

/// Groups commands (each given with its [`program`]) by program, in order of their newest run.
pub fn group<'a>(commands: impl DoubleEndedIterator<Item = (&'a str, &'a str)>) -> Vec<CommandGroup> {
    // Newest first: a program's first sight is its newest run.
    let mut at: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
    let mut groups: Vec<CommandGroup> = Vec::new();
    for (p, c) in commands.rev() {
        match at.get(p) {
            Some(&k) => groups[k].count += 1,
            None => {
                at.insert(p, groups.len());
                groups.push(CommandGroup { program: p.to_string(), count: 1, last: c.to_string() });
            }
        }
    }
    groups.reverse();
    groups
}

static EXIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:exit(?:ed)?(?: with)?[ _](?:code|status)|exit_code|returncode|process exited with code)\s*[:=]?\s*(-?\d+)|returned non-zero exit status (\d+)").unwrap()
});

/// The non-zero exit code a completed tool's output reports, if any (a failing command recorded
/// as completed is an error too).
pub fn failed_exit_code(output: &str) -> Option<i64> {
    // The status line is at the end of the output (or the start, for some agents).
    // Every match holds `exit` or `returncode`, in any case (no other letter folds to theirs).
    let probe = |s: &str| {
        let b = s.as_bytes();
        if !contains_ignore_case(b, b"exit") && !contains_ignore_case(b, b"returncode") {
            return None;
        }
        EXIT.captures_iter(s).filter_map(|c| c.get(1).or(c.get(2)).and_then(|m| m.as_str().parse::<i64>().ok())).last()
    };
    let n = output.len();
    let tail_from = (0..=n.saturating_sub(400)).rev().find(|&i| output.is_char_boundary(i)).unwrap_or(0);
    let head_to = (400.min(n)..=n).find(|&i| output.is_char_boundary(i)).unwrap_or(n);
    probe(&output[tail_from..]).or_else(|| probe(&output[..head_to])).filter(|&c| c != 0)
}

static FAILURE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:error|fail(?:ed|ure|s)?|panic(?:ked)?|exception|traceback|denied|not found|cannot|can't|undefined|fatal|assert)").unwrap()
});

/// Each quoted failure is kept to this many characters.
pub const FAILURE_MAX_CHARS: usize = 300;

/// The line of a failure's output that identifies it (the first that reads like an error, else the
/// first non-empty one), within `FAILURE_MAX_CHARS`.
pub fn identifying_line(text: &str) -> String {
    let lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let line = lines.clone().find(|l| FAILURE_LINE.is_match(l)).or_else(|| lines.clone().next()).unwrap_or("");
    if line.chars().count() <= FAILURE_MAX_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(FAILURE_MAX_CHARS - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_and_groups() {
        assert_eq!(program("cd /repo && RUST_LOG=1 cargo test -p core"), "cargo test");
        assert_eq!(program("/usr/bin/grep -rn foo src"), "grep");
        assert_eq!(program("sudo apt-get install x"), "apt-get");
        let cmds: Vec<String> = ["grep a", "cargo test", "grep b", "grep c"].iter().map(|s| s.to_string()).collect();
        let programs: Vec<String> = cmds.iter().map(|c| program(c)).collect();
        let g = group(programs.iter().map(String::as_str).zip(cmds.iter().map(String::as_str)));
        assert_eq!(g.len(), 2);
        assert_eq!((g[1].program.as_str(), g[1].count, g[1].last.as_str()), ("grep", 3, "grep c"));
    }

    #[test]
    fn exit_codes_and_failure_lines() {
        assert_eq!(failed_exit_code("ok\nExit code: 1"), Some(1));
        assert_eq!(failed_exit_code("Process exited with code 2"), Some(2));
        assert_eq!(failed_exit_code("done\n[exit code: 0]"), None);
        assert_eq!(failed_exit_code("all good"), None);
        assert_eq!(failed_exit_code("subprocess.CalledProcessError: returned non-zero exit status 3."), Some(3));
        assert_eq!(
            identifying_line("\n  running 3 tests\nerror[E0425]: cannot find value `x`\n  --> a.rs"),
            "error[E0425]: cannot find value `x`"
        );
        assert_eq!(identifying_line("weird\nthings"), "weird");
        assert!(identifying_line(&format!("error {}", "x".repeat(1000))).chars().count() == FAILURE_MAX_CHARS);
    }
}
