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
    Regex::new(r"(?i)\b(?:error|fail(?:ed|ure|s)?|panic(?:ked)?|exception|traceback|denied|not found|cannot|can't|undefined|fatal|assert|timed out|timeout|refused|violates|unexpected|invalid|unable|mismatch)").unwrap()
});

/// Lines that say what went wrong: an exception or error class with its message (`TypeError: x`,
/// `KeyError: 'id'`), a compiler's coded error (`error TS2345:`), `file:line: message` (go test,
/// compilers, linters), an assertion, and the lines runners mark as a failure's message (vitest's
/// `→ message`, pytest's `E   message`).
static SPECIFIC_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:^|[\s(\[])[\w$.]*(?:Error|Exception)(?::\s+\S|\s*$)",
        r"|(?i:\berror [a-z]{1,4}\d{2,5}:)",
        r"|^[\w./\\-]+\.\w{1,5}(?::\d+){1,2}:\s+\S",
        r"|^[\w./\\-]+\.\w{1,5}\(\d+,\d+\):\s+\S",
        r"|(?i:^assert(?:ion)?\b|\bassert(?:ion)?\b.*\bfailed\b)",
        r"|^(?:→|E {2,})\s*\S",
    ))
    .unwrap()
});

/// Lines that start with an error word and a colon (`error: ...`, `fatal: ...`, `error[E0425]: ...`):
/// what went wrong, unless the line is also one of [`REPORT_LINE`]'s.
static ERROR_PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:error|fatal(?: error)?|panic|failure|uncaught)(?:\[\w+\])?\s*:\s*\S").unwrap()
});

/// Lines that report a failure without saying what it was: a test runner's summaries, banners,
/// counts and test names, exit statuses, stack frames, build tools' wrappers around the error.
static REPORT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)^(?:test files|tests|test suites|snapshots|time|duration|ran|start at)\b\s*:?\s",
        r"|\(\d+ tests?\b|\b\d+ (?:passed|failed|failing|passing|skipped|errors?|pending)\b",
        r"|^(?:-{3} )?fail(?:ed|ures?|ing)?\b|^[=_⎯─-]{3,}|^test .* \.\.\. \w+$|^test result:",
        r"|\b(?:test failed|could not compile|command failed|to rerun|process completed with)\b",
        r"|^npm err!|\belifecycle\b|^make(?:\[\d+\])?: \*\*\*|\bexit(?:ed)?(?: with)?[ _](?:code|status)\b",
        r"|^at\s+\S|^❯\s|^file \x22.*\x22, line \d+|^traceback \(most recent call last\)|^note: run with",
    ))
    .unwrap()
});

/// A line that introduces the message on the next one (Rust's `thread 'x' panicked at file:line:`,
/// anyhow's `Caused by:`).
static HEADER_LINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\bpanicked at .*:$|^caused by:$").unwrap());

/// Each quoted failure is kept to this many characters.
pub const FAILURE_MAX_CHARS: usize = 300;

/// How precisely a line of a failure's output (a [`HEADER_LINE`] or not, after one or not) says
/// what went wrong: 3 for the message itself, 2 for another line with an error word, 1 for a report
/// line or a header with one, 0 for the rest.
fn precision(line: &str, header: bool, after_header: bool) -> u8 {
    if SPECIFIC_LINE.is_match(line) {
        return 3;
    }
    let failure = FAILURE_LINE.is_match(line);
    if header || REPORT_LINE.is_match(line) {
        return u8::from(failure);
    }
    if after_header || ERROR_PREFIX.is_match(line) {
        return 3;
    }
    if failure {
        2
    } else {
        0
    }
}

/// The line of a failure's output that identifies it, as a user would quote it: the first that
/// says what went wrong (the exception or assertion message, not the runner's summary of it),
/// else the first other line with an error word, else the first non-empty one; the runners'
/// markers (`→`, `E`) left off, within `FAILURE_MAX_CHARS`.
pub fn identifying_line(text: &str) -> String {
    let mut best: Option<(&str, u8)> = None;
    let mut after_header = false;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let header = HEADER_LINE.is_match(line);
        let p = precision(line, header, after_header);
        after_header = header;
        if best.is_none_or(|(_, b)| p > b) {
            best = Some((line, p));
            if p == 3 {
                break;
            }
        }
    }
    let line = best.map_or("", |(l, _)| l);
    let line = line.strip_prefix('→').or_else(|| line.strip_prefix("E  ")).map_or(line, str::trim_start);
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

    #[test]
    fn the_line_that_says_what_went_wrong_not_the_runners_summary() {
        let vitest = " RUN  v2.1.8 /home/dev/api\n\n ✓ test/routes/health.test.ts (3 tests) 12ms\n ❯ test/routes/users.test.ts (15 tests | 1 failed) 412ms\n   × POST /users > rejects a duplicate email 38ms\n     → duplicate key value violates unique constraint \"users_email_key\"\n\n⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯\n\n FAIL  test/routes/users.test.ts > POST /users\nerror: duplicate key value violates unique constraint \"users_email_key\"\n ❯ Parser.parseErrorMessage node_modules/pg-protocol/src/parser.ts:369:69\n\n Test Files  1 failed | 1 passed (2)\n      Tests  1 failed | 17 passed (18)\nExit code: 1";
        assert_eq!(identifying_line(vitest), "duplicate key value violates unique constraint \"users_email_key\"");
        let go = "=== RUN   TestUpstreamDial\n    proxy_test.go:88: dial tcp 10.20.0.14:8443: i/o timeout\n--- FAIL: TestUpstreamDial (30.00s)\nFAIL\nFAIL\tgithub.com/acme/edge-proxy/internal/upstream\t30.214s\nExit code: 1";
        assert_eq!(identifying_line(go), "proxy_test.go:88: dial tcp 10.20.0.14:8443: i/o timeout");
        let pytest = "collected 42 items\n\ntests/test_ingest.py ........F.....   [ 33%]\n\n=================================== FAILURES ===================================\n___________ test_dedupe ___________\n\n>       assert dedupe(frame).height == 1204\nE       AssertionError: assert 1187 == 1204\n\ntests/test_ingest.py:57: AssertionError\n===== short test summary info =====\nFAILED tests/test_ingest.py::test_dedupe - AssertionError: assert 1187 == 1204\n===== 1 failed, 41 passed in 3.12s =====";
        assert_eq!(identifying_line(pytest), "AssertionError: assert 1187 == 1204");
        let cargo = "running 48 tests\ntest sync::tests::resumes_after_restart ... FAILED\n\nfailures:\n\n---- sync::tests::resumes_after_restart stdout ----\nthread 'sync::tests::resumes_after_restart' panicked at src/sync/resume.rs:214:9:\ncalled `Option::unwrap()` on a `None` value\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\ntest result: FAILED. 47 passed; 1 failed\n\nerror: test failed, to rerun pass `--lib`";
        assert_eq!(identifying_line(cargo), "called `Option::unwrap()` on a `None` value");
        let traceback = "Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    main()\nKeyError: 'event_id'";
        assert_eq!(identifying_line(traceback), "KeyError: 'event_id'");
        let npm = "> api@1.0.0 build\n> tsc\n\nsrc/a.ts(12,7): error TS2345: Argument of type 'Row' is not assignable\nnpm ERR! code ELIFECYCLE\nnpm ERR! errno 2";
        assert_eq!(identifying_line(npm), "src/a.ts(12,7): error TS2345: Argument of type 'Row' is not assignable");
        // Only report lines: the first with an error word.
        assert_eq!(identifying_line("ok 1\n--- FAIL: TestX (0.01s)\nFAIL"), "--- FAIL: TestX (0.01s)");
    }
}
