//! The crate's modules form layers (docs/doctor.md, "How doctor is built"): read from the
//! sources, each module uses only modules of lower layers or its own children's, no modules
//! use each other in a circle, the methods do not use one another, and none of them asks
//! whether a plan re-keys (the plan's key source, `keys`, answers for it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level modules, bottom up: each may use only the ones before it.
const LAYERS: [&str; 15] = [
    "error",
    "failpoints",
    "options",
    "catalog",
    "db",
    "audit",
    "rekey",
    "schema",
    "plan",
    "merges",
    "keys",
    "survey",
    "throttle",
    "methods",
    "report",
];

/// The methods: none uses another (the one seam, `methods::in_place`, is their parent's).
const METHODS: [&str; 4] = ["methods::offline", "methods::online", "methods::script", "methods::swap"];

/// The `.rs` files under `src`, and their text.
fn source_files() -> Vec<(std::path::PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                out.push((path, text));
            }
        }
    }
    out
}

fn sources() -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for (path, text) in source_files() {
        let rel = path.strip_prefix(&root).expect("under src").with_extension("");
        let mut name = rel.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "::");
        if let Some(parent) = name.strip_suffix("::mod") {
            name = parent.to_string();
        }
        // Unit tests may reach anywhere; comments are no use.
        let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
        let code: String =
            text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
        out.insert(if name == "lib" { String::new() } else { name }, code);
    }
    out
}

/// `a::{b, c::{d}}` as the paths it names.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else { return vec![tree] };
    let base = tree[..open].trim_end_matches("::").to_string();
    let inner = &tree[open + 1..tree.len() - 1];
    let (mut depth, mut cur, mut parts) = (0, String::new(), Vec::new());
    for ch in inner.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    parts.push(cur);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(&p))
        .map(|p| if base.is_empty() { p } else { format!("{base}::{p}") })
        .collect()
}

/// Each module and the modules (of this crate) it uses.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = sources();
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let resolve = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len()).rev().map(|i| parts[..i].join("::")).find(|c| modules.contains(c))
    };
    let mut out = BTreeMap::new();
    for (m, code) in &files {
        let parent = m.rsplit_once("::").map_or("", |(p, _)| p);
        let absolute = |p: &str| -> String {
            let p = p.trim_matches(':');
            if let Some(rest) = p.strip_prefix("crate::") {
                rest.to_string()
            } else if let Some(rest) = p.strip_prefix("super::") {
                if parent.is_empty() { rest.to_string() } else { format!("{parent}::{rest}") }
            } else if let Some(rest) = p.strip_prefix("self::") {
                format!("{m}::{rest}")
            } else if m.is_empty() {
                p.to_string()
            } else {
                format!("{m}::{p}")
            }
        };
        let mut paths = Vec::new();
        for stmt in code.split(';') {
            if let Some(at) = stmt.find("use ") {
                let before = &stmt[..at];
                if before.trim().is_empty() || before.trim_end().ends_with("pub") || before.trim_end().ends_with(')') {
                    paths.extend(expand(&stmt[at + 4..]));
                }
            }
        }
        // Paths written in the code: `crate::x::y`, `super::x`, `child::f`.
        let bytes: Vec<char> = code.chars().collect();
        let mut i = 0;
        while i < bytes.len() {
            let starts = (i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_' || bytes[i - 1] == ':'))
                && (bytes[i].is_ascii_lowercase());
            if starts {
                let mut j = i;
                while j < bytes.len() && (bytes[j].is_alphanumeric() || bytes[j] == '_' || bytes[j] == ':') {
                    j += 1;
                }
                let word: String = bytes[i..j].iter().collect();
                if word.contains("::") {
                    paths.push(word);
                }
                i = j;
            } else {
                i += 1;
            }
        }
        let mut uses = BTreeSet::new();
        for p in paths {
            let first = p.split("::").next().unwrap_or_default();
            if ["std", "core", "alloc", "combkey", "serde", "serde_json", "sqlx", "tokio", "futures"].contains(&first) {
                continue;
            }
            if let Some(t) = resolve(&absolute(&p))
                && t != *m
                && !t.is_empty()
            {
                uses.insert(t);
            }
        }
        out.insert(m.clone(), uses);
    }
    out
}

fn top(m: &str) -> &str {
    m.split("::").next().unwrap_or(m)
}

#[test]
fn the_modules_use_each_other_in_no_circle() {
    let g = graph();
    assert!(g.len() > 20, "the sources were read: {:?}", g.keys().collect::<Vec<_>>());
    // Depth-first search for a back edge.
    fn visit<'a>(
        m: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(m, 1);
        stack.push(m);
        for n in g.get(m).into_iter().flatten() {
            match state.get(n.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|s| *s == n).unwrap_or(0);
                    return Some(stack[from..].iter().map(|s| s.to_string()).chain([n.clone()]).collect());
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(n, g, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(m, 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if !state.contains_key(m.as_str()) {
            let circle = visit(m, &g, &mut state, &mut Vec::new());
            assert!(
                circle.is_none(),
                "modules that use each other in a circle: {}",
                circle.unwrap_or_default().join(" -> ")
            );
        }
    }
}

#[test]
fn each_module_uses_only_lower_layers() {
    let g = graph();
    let tops: BTreeSet<&str> = g.keys().filter(|m| !m.is_empty()).map(|m| top(m)).collect();
    assert_eq!(tops, LAYERS.into_iter().collect(), "LAYERS names every top-level module");
    let layer = |m: &str| LAYERS.iter().position(|l| *l == top(m)).expect("a layer");
    let mut wrong = Vec::new();
    for (m, uses) in g.iter().filter(|(m, _)| !m.is_empty()) {
        for u in uses {
            if top(u) != top(m) && layer(u) > layer(m) {
                wrong.push(format!("{m} uses {u}"));
            }
        }
    }
    assert!(wrong.is_empty(), "uses of a higher layer: {wrong:?}");
}

#[test]
fn the_methods_do_not_use_one_another_or_ask_about_a_re_key() {
    let g = graph();
    let of = |m: &str| METHODS.iter().find(|x| m == **x || m.starts_with(&format!("{x}::"))).copied();
    let mut wrong = Vec::new();
    for (m, uses) in &g {
        let Some(mine) = of(m) else { continue };
        for u in uses {
            if of(u).is_some_and(|theirs| theirs != mine) {
                wrong.push(format!("{m} uses {u}"));
            }
            if u == "rekey" {
                wrong.push(format!("{m} uses the re-key's own module"));
            }
        }
    }
    for (m, code) in sources() {
        if m.starts_with("methods") && code.contains("rekey") {
            wrong.push(format!("{m} names rekey"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:?}");
}

/// No message runs of spaces a user would read mid-sentence (a string literal continued onto
/// the next line without its `\`: "... run                  that command again").
#[test]
fn no_message_has_a_run_of_spaces_mid_sentence() {
    let files = source_files();
    let mut found = Vec::new();
    for (path, text) in &files {
        for (n, line) in text.lines().enumerate() {
            // Within a string literal: after the line's first quote.
            let Some((_, rest)) = line.split_once('"') else { continue };
            // The report's lines align their values in a column on purpose ("  rows      ...").
            if rest.starts_with("  ") {
                continue;
            }
            let b = rest.as_bytes();
            // A word (or its punctuation), three spaces or more, a word.
            let run = (1..b.len()).any(|i| {
                let spaces = b[i..].iter().take_while(|c| **c == b' ').count();
                let (before, after) = (b[i - 1], b.get(i + spaces).copied().unwrap_or(b'"'));
                spaces >= 3
                    && (before.is_ascii_alphanumeric() || b",.;:)".contains(&before))
                    && (after.is_ascii_lowercase() || after == b'(')
            });
            if run {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(files.len() > 20, "the sources were read");
    assert!(found.is_empty(), "runs of spaces in messages:\n{}", found.join("\n"));
}
