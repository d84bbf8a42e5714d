//! Files read and modified, from tool calls: what a summary must always name.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::message::{Message, Part, ToolState};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileOps {
    pub read: BTreeSet<String>,
    pub modified: BTreeSet<String>,
}

impl FileOps {
    /// Files only read (a modified file is listed once, as modified).
    pub fn read_only(&self) -> Vec<String> {
        self.read.difference(&self.modified).cloned().collect()
    }

    pub fn merge(&mut self, read: impl IntoIterator<Item = String>, modified: impl IntoIterator<Item = String>) {
        self.read.extend(read);
        self.modified.extend(modified);
    }
}

const PATH_KEYS: &[&str] = &["path", "file_path", "filePath", "filename", "file", "notebook_path", "target_file"];

fn paths(input: &Value) -> Vec<String> {
    let mut out: Vec<String> = PATH_KEYS
        .iter()
        .filter_map(|k| input.get(k).and_then(Value::as_str))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    if let Some(list) = input.get("paths").and_then(Value::as_array) {
        out.extend(list.iter().filter_map(Value::as_str).map(str::to_string));
    }
    out
}

#[derive(PartialEq)]
enum Op {
    Read,
    Modify,
}

/// What a tool call does to the files it names, judged by the tool's name (and, for editor tools
/// with sub-commands such as SWE-agent's `str_replace_editor`, by `command`). Search and listing
/// tools name a root to search, not a file read.
fn op(tool: &str, input: &Value) -> Option<Op> {
    let t = tool.to_ascii_lowercase();
    if let Some(cmd) = input.get("command").and_then(Value::as_str) {
        if t.contains("editor") {
            return Some(if cmd == "view" { Op::Read } else { Op::Modify });
        }
    }
    const MODIFY: &[&str] = &["write", "edit", "patch", "create", "replace", "insert", "delete", "move", "rename"];
    const SEARCH: &[&str] = &["grep", "glob", "search", "list", "ls", "find"];
    const READ: &[&str] = &["read", "view", "cat", "open"];
    if MODIFY.iter().any(|w| t.contains(w)) {
        Some(Op::Modify)
    } else if SEARCH.iter().any(|w| t.contains(w)) {
        None
    } else if READ.iter().any(|w| t.contains(w)) {
        Some(Op::Read)
    } else {
        None
    }
}

/// Files a patch given as text names (Codex's `apply_patch` envelope, or a unified diff).
fn patch_paths(patch: &str) -> Vec<String> {
    const HEADERS: &[&str] = &["*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ", "+++ b/"];
    patch
        .lines()
        .filter_map(|l| HEADERS.iter().find_map(|h| l.strip_prefix(h)))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty() && p != "/dev/null")
        .collect()
}

/// Shell tools: the tool names agents give their command runner.
fn is_shell(tool: &str) -> bool {
    let t = tool.to_ascii_lowercase();
    ["bash", "shell", "terminal", "exec", "run_command", "execute_command", "cmd"].iter().any(|w| t.contains(w))
}

/// A word that names a file: a path with a directory or an extension, no flags, globs or variables.
fn file_word(w: &str) -> Option<&str> {
    let w = w.trim_matches(|c| c == '\'' || c == '"');
    let looks = (w.contains('/') || w.contains('.'))
        && !w.starts_with('-')
        && !w.ends_with('/')
        && !w.contains(['*', '?', '$', '`', '(', ')', '{', '}', '=', '<', '>', '|', ';', '&'])
        && w.chars().any(|c| c.is_alphanumeric());
    looks.then_some(w)
}

/// Files a shell command reads or writes, judged conservatively: `cat` / `head` / `tail` / `nl` /
/// `less` / `sed -n` read their file arguments; `sed -i`, `tee`, `touch` and `>` / `>>`
/// redirections write theirs. Anything else (searches, builds, scripts) names no file.
pub fn shell_file_ops(command: &str) -> (Vec<String>, Vec<String>) {
    let (mut read, mut modified) = (Vec::new(), Vec::new());
    for segment in command.split(['\n', ';', '|', '&']) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        for pair in words.windows(2) {
            if matches!(pair[0], ">" | ">>") {
                modified.extend(file_word(pair[1]).map(str::to_string));
            }
        }
        let Some((program, args)) = words.split_first() else { continue };
        let program = program.rsplit('/').next().unwrap_or(program);
        let files = || {
            args.iter()
                .take_while(|a| !matches!(**a, ">" | ">>" | "<" | "<<"))
                .filter_map(|a| file_word(a))
                .map(str::to_string)
        };
        match program {
            "cat" | "head" | "tail" | "nl" | "less" | "more" if !args.contains(&">") => read.extend(files()),
            "sed" if args.iter().any(|a| a.starts_with("-i")) => modified.extend(files()),
            "sed" => read.extend(files()),
            "tee" | "touch" => modified.extend(files()),
            _ => {}
        }
    }
    (read, modified)
}

/// What a tool call does to files: `(true, paths)` modifies them, `(false, paths)` reads them.
pub fn file_op(tool: &str, input: &Value) -> Option<(bool, Vec<String>)> {
    let modifies = op(tool, input)? == Op::Modify;
    let mut out = paths(input);
    if modifies {
        let patch = input.as_str().or_else(|| input.get("input").and_then(Value::as_str));
        out.extend(patch.map(patch_paths).unwrap_or_default());
    }
    Some((modifies, out))
}

/// Adds the files named by the tool calls of `messages` that ran (completed, or errored after
/// starting) to `ops`.
pub fn track_files<'a>(messages: impl IntoIterator<Item = &'a Message>, ops: &mut FileOps) {
    for m in messages {
        let (read, modified) = message_files(m);
        ops.merge(read, modified);
    }
}

/// The files `m`'s tool calls that ran name: those read, those modified.
pub fn message_files(m: &Message) -> (Vec<String>, Vec<String>) {
    let (mut read, mut modified) = (Vec::new(), Vec::new());
    for p in &m.parts {
        let Part::Tool(t) = p else { continue };
        let (r, w) = call_files(&t.tool, &t.state);
        read.extend(r);
        modified.extend(w);
    }
    (read, modified)
}

/// The files one tool call names, once it ran: those read, those modified.
pub fn call_files(tool: &str, state: &ToolState) -> (Vec<String>, Vec<String>) {
    if matches!(state, ToolState::Pending { .. }) {
        return (Vec::new(), Vec::new());
    }
    match file_op(tool, state.input()) {
        Some((false, paths)) => (paths, Vec::new()),
        Some((true, paths)) => (Vec::new(), paths),
        // A shell command names files only when it ran through (a failed `cat` read nothing).
        None if matches!(state, ToolState::Completed { .. }) => {
            match state.input().get("command").and_then(Value::as_str).filter(|_| is_shell(tool)) {
                Some(cmd) => shell_file_ops(cmd),
                None => (Vec::new(), Vec::new()),
            }
        }
        None => (Vec::new(), Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_message;
    use serde_json::json;

    #[test]
    fn tracks_reads_and_edits_by_tool_kind() {
        let tool = |tool: &str, input: Value| json!({"type": "tool", "id": format!("{tool}{}", input), "callID": "c", "tool": tool, "state": {"status": "completed", "input": input, "output": ""}});
        let m = parse_message(json!({"id": "a", "role": "assistant", "parts": [
            tool("read", json!({"filePath": "src/a.rs"})),
            tool("Edit", json!({"file_path": "src/b.rs"})),
            tool("str_replace_editor", json!({"command": "view", "path": "c.py"})),
            tool("str_replace_editor", json!({"command": "str_replace", "path": "d.py"})),
            tool("read", json!({"path": "src/b.rs"})),
            tool("bash", json!({"command": "cat x"})),
            tool("Grep", json!({"pattern": "x", "path": "src"})),
            tool("Glob", json!({"pattern": "*.rs", "path": "lib"})),
            tool("apply_patch", json!("*** Begin Patch\n*** Update File: e.rs\n@@\n-a\n+b\n*** Add File: f.rs\n+x\n*** End Patch")),
            tool("ReadFile", json!({"path": "g.py"})),
            tool("StrReplaceFile", json!({"path": "h.py", "edit": {}}))
        ]}))
        .unwrap();
        let mut ops = FileOps::default();
        track_files([&m], &mut ops);
        assert_eq!(ops.read_only(), ["c.py", "g.py", "src/a.rs"]);
        assert_eq!(ops.modified.iter().collect::<Vec<_>>(), ["d.py", "e.rs", "f.rs", "h.py", "src/b.rs"]);
    }

    #[test]
    fn shell_commands_name_the_files_they_read_and_write() {
        let cases = [
            ("sed -n '572,650p' /testbed/django/db/models.py", vec!["/testbed/django/db/models.py"], vec![]),
            ("cat src/a.rs | head -20", vec!["src/a.rs"], vec![]),
            (
                "cd /testbed && sed -i 's/a/b/' django/x.py && nl -ba django/x.py",
                vec!["django/x.py"],
                vec!["django/x.py"],
            ),
            ("cat > reproduce.py << 'EOF'\nprint(1)\nEOF", vec![], vec!["reproduce.py"]),
            ("echo hi >> notes.md; tee out.log < in.txt", vec![], vec!["notes.md", "out.log"]),
            ("grep -rn foo src/ | head", vec![], vec![]),
            ("find /testbed -name '*.py' | xargs grep -l x", vec![], vec![]),
            ("python reproduce.py 2>&1", vec![], vec![]),
            ("cat $FILE *.rs", vec![], vec![]),
        ];
        for (cmd, read, modified) in cases {
            let (r, m) = shell_file_ops(cmd);
            assert_eq!(
                (r, m),
                (read.iter().map(|s| s.to_string()).collect(), modified.iter().map(|s| s.to_string()).collect()),
                "{cmd}"
            );
        }
    }
}
