//! The layering of docs/ARCHITECTURE.md, checked against the source: every `crate::` and
//! `super::` path in src/ (unit-test modules left out) is read as an import of the file it
//! names, and
//!
//! - no top-level module imports one of a higher layer, except the exceptions named here
//!   (each explained in ARCHITECTURE.md);
//! - no files import each other in a loop, a folder's `mod.rs` and its own files included:
//!   only the folders of [`MOD_LOOPS`] still hold one, and none of them may grow;
//! - inside src/workload/, the core (`common/`) imports nothing of the formats, no format
//!   imports another format, only `definition.rs` and `any.rs` name them all, and no file
//!   imports the folder's face (`mod.rs`), an import through a re-export counting as one of
//!   the item's own file;
//! - no command (a file or folder of src/commands/) imports another; what two share lives in
//!   `settings/`, `terminal/` or `exit.rs`;
//! - no file of src/ has more than [`MAX_LINES`] lines before its unit-test module, and one
//!   of more than [`WHY_LINES`] says why it is one file.
//!
//! Reading paths as text can miss an import written in an unusual way (a macro, a glob
//! through a re-export); it cannot invent one, so what it reports is real. Each rule has a
//! test that plants a violation and sees it caught.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers from the top: a module may import its own layer's modules or lower ones.
const LAYERS: &[&[&str]] = &[
    // Test data for the unit tests, compiled only with them.
    &["lib"],
    &["commands", "cli"],
    &["live"],
    &["report"],
    &["compare"],
    &["sweep"],
    &["capacity"],
    &["fleet"],
    &["run"],
    &["figures"],
    &["results"],
    &["maintenance"],
    &["sla"],
    &["engine"],
    &["metrics"],
    &["workload", "cluster"],
    &["client"],
    &[
        "catalogue",
        "units",
        "limits",
        "cpus",
        "output_dir",
        "stats",
        "stop",
        "format",
        "lanes",
        "vectors",
        "validation",
    ],
    &["usage"],
];

/// Imports that run up a layer on purpose, (from, to): none today.
const EXCEPTIONS: &[(&str, &str)] = &[];

/// Modules of one layer that must not import each other all the same: the command line's
/// definitions know nothing of the commands that use them.
const NEVER: &[(&str, &str)] = &[
    ("cli", "commands"),
    ("workload", "cluster"),
    ("cluster", "workload"),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every .rs file under src/, by its path relative to src/.
fn files() -> BTreeMap<String, String> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&src(), &src(), &mut out);
    out
}

/// The module path of a file: `run/mod.rs` → [run], `run/stop.rs` → [run, stop], `lib.rs` → [].
fn module_of(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".rs").unwrap();
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") || parts == ["lib"] {
        parts.pop();
    }
    parts
}

/// The line where a file's unit tests begin: the first `#[cfg(test)]` at the start of a line
/// that opens a module written in the file (`mod tests {`, of any visibility). A
/// `#[cfg(test)]` on anything else (a helper for the tests, a `mod tests;` declaration) is
/// code like the rest.
fn test_module_line(text: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    (0..lines.len()).find(|&i| {
        lines[i].trim_end() == "#[cfg(test)]"
            && lines[i + 1..]
                .iter()
                .find(|l| !l.trim().is_empty() && !l.starts_with("#["))
                .is_some_and(|l| opens_a_module(l))
    })
}

/// Whether a line opens an inline module: `mod x {`, `pub(super) mod x {`...
fn opens_a_module(line: &str) -> bool {
    let rest = line
        .strip_prefix("pub ")
        .or_else(|| line.strip_prefix("pub(crate) "))
        .or_else(|| line.strip_prefix("pub(super) "))
        .unwrap_or(line);
    rest.strip_prefix("mod ")
        .is_some_and(|r| r.trim_end().ends_with('{'))
}

/// The code of a file without its unit-test module and comments.
fn code_of(text: &str) -> String {
    let end = test_module_line(text).unwrap_or(usize::MAX);
    text.lines()
        .take(end)
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every module path the code names: `crate::a::b`, `super::c`, and the items of `use
/// crate::a::{b, c::d}` groups, as absolute paths.
fn named_paths(code: &str, module: &[String], is_mod_file: bool) -> Vec<Vec<String>> {
    // `super` of a file a/b.rs is a; of a/mod.rs it is a's parent.
    let parent: Vec<String> = if is_mod_file || module.is_empty() {
        module[..module.len().saturating_sub(1)].to_vec()
    } else {
        module[..module.len() - 1].to_vec()
    };
    // A mod.rs or lib.rs names its own submodules without a prefix.
    let own: Vec<String> = if is_mod_file {
        module.to_vec()
    } else {
        Vec::new()
    };
    let children: Vec<String> = if is_mod_file {
        code.lines()
            .filter_map(|line| {
                let line = line.trim();
                let rest = line.strip_prefix("pub ").unwrap_or(line);
                let rest = rest.strip_prefix("pub(crate) ").unwrap_or(rest);
                rest.strip_prefix("mod ")?
                    .strip_suffix(';')
                    .map(str::to_string)
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut paths = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        let boundary = i == 0
            || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_' || bytes[i - 1] == ':');
        let child = children.iter().find(|c| {
            let name: Vec<char> = c.chars().chain("::".chars()).collect();
            bytes[i..].starts_with(&name)
        });
        let (base, skip) = if boundary && rest.starts_with("crate::") {
            (Vec::new(), 7)
        } else if boundary && rest.starts_with("super::") {
            (parent.clone(), 7)
        } else if boundary && rest.starts_with("self::") {
            (own.clone(), 6)
        } else if boundary && child.is_some() {
            // A submodule this file declares, named from here: `matrix::resume`.
            (own.clone(), 0)
        } else {
            i += 1;
            continue;
        };
        i += skip;
        i = read_tree(&bytes, i, base, &mut paths);
    }
    paths
}

/// Reads `a::b::{c, d::e}` from `at`, pushing each path it ends in; returns where it ended.
/// A group may also come at once, as after `super::` in `use super::{b, c}`.
fn read_tree(
    chars: &[char],
    mut at: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        if chars.get(at) == Some(&'{') {
            at += 1;
            loop {
                while chars
                    .get(at)
                    .is_some_and(|c| c.is_whitespace() || *c == ',')
                {
                    at += 1;
                }
                if chars.get(at).is_none_or(|c| *c == '}') {
                    return at + 1;
                }
                let before = at;
                at = read_tree(chars, at, prefix.clone(), out);
                // `self`, `*` or an alias: skip what the tree reader left.
                while chars.get(at).is_some_and(|c| !matches!(c, ',' | '}')) {
                    at += 1;
                }
                if at == before {
                    at += 1;
                }
            }
        }
        let start = at;
        while at < chars.len() && (chars[at].is_alphanumeric() || chars[at] == '_') {
            at += 1;
        }
        if at > start {
            let name: String = chars[start..at].iter().collect();
            if name != "self" {
                prefix.push(name);
            }
        }
        if at > start && chars[at..].starts_with(&[':', ':']) {
            at += 2;
            continue;
        }
        out.push(prefix);
        return at;
    }
}

/// The file a module path names: the longest prefix that is a module of the crate.
fn resolve<'a>(path: &[String], modules: &'a BTreeMap<Vec<String>, String>) -> Option<&'a String> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n].to_vec()))
}

/// Which file imports which, over the whole crate.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    imports(false)
}

/// Which file imports which; with `through_reexports`, a path to an item a mod.rs (or lib.rs)
/// re-exports (`pub use`) counts as an import of the file that defines it.
fn imports(through_reexports: bool) -> BTreeMap<String, BTreeSet<String>> {
    let files = files();
    let modules: BTreeMap<Vec<String>, String> = files
        .keys()
        .filter(|f| *f != "main.rs")
        .map(|f| (module_of(f), f.clone()))
        .collect();
    let reexported: BTreeMap<&String, BTreeMap<String, Vec<String>>> = files
        .iter()
        .filter(|(f, _)| through_reexports && (f.ends_with("mod.rs") || *f == "lib.rs"))
        .map(|(f, text)| (f, reexports_of(text, &module_of(f))))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, text) in &files {
        if file == "main.rs" {
            continue;
        }
        let module = module_of(file);
        let is_mod_file = file.ends_with("mod.rs") || file == "lib.rs";
        let targets = graph.entry(file.clone()).or_default();
        for mut path in named_paths(&code_of(text), &module, is_mod_file) {
            let mut target = resolve(&path, &modules);
            // Follow re-exports (a few steps at most: a re-export of a re-export).
            for _ in 0..4 {
                let Some(at) = target else { break };
                let depth = module_of(at).len();
                let Some(reexport) = path
                    .get(depth)
                    .and_then(|name| reexported.get(at)?.get(name))
                else {
                    break;
                };
                path = reexport.iter().chain(&path[depth + 1..]).cloned().collect();
                target = resolve(&path, &modules);
            }
            if let Some(target) = target {
                if target != file {
                    targets.insert(target.clone());
                }
            }
        }
    }
    graph
}

/// The items a mod.rs re-exports (`pub use a::b::{C, D}`), by name, with the path of each.
fn reexports_of(text: &str, module: &[String]) -> BTreeMap<String, Vec<String>> {
    let code = code_of(text);
    // Its module declarations, so that `pub use child::Item` reads as a path, then each
    // `pub use` statement without its keywords.
    let mut statements: String = code
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with("mod ") || l.starts_with("pub mod ") || l.starts_with("pub(crate) mod ")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("pub use ") {
        let after = &rest[at + "pub use ".len()..];
        let end = after.find(';').unwrap_or(after.len());
        statements.push_str(&after[..end]);
        statements.push_str(";\n");
        rest = &after[end..];
    }
    named_paths(&statements, module, true)
        .into_iter()
        .filter_map(|p| Some((p.last()?.clone(), p)))
        .collect()
}

/// The top-level module of a file: `run/stop.rs` → run, `lib.rs` → lib.
fn top(file: &str) -> String {
    module_of(file)
        .first()
        .cloned()
        .unwrap_or_else(|| "lib".to_string())
}

fn layer(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| {
            panic!("src/{module} is in no layer: add it to LAYERS and to docs/ARCHITECTURE.md")
        })
}

/// The most lines a file of src/ may have before its unit-test module.
const MAX_LINES: usize = 800;

/// Above this many lines before its tests, a file's module doc says why it is one file, in a
/// paragraph that starts with [`WHY_MARK`] (docs/ARCHITECTURE.md, "Size of files").
const WHY_LINES: usize = 600;

/// How a module doc starts the paragraph that says why a long file is one file.
const WHY_MARK: &str = "//! **Why one file";

/// A file's lines before its unit-test module (all of them when it has none).
fn lines_before_tests(text: &str) -> usize {
    test_module_line(text).unwrap_or_else(|| text.lines().count())
}

/// Files over [`MAX_LINES`], and files over [`WHY_LINES`] whose module doc does not say why
/// they are one file; test files (all tests) are measured by the first rule only.
fn size_violations(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (file, text) in files {
        let n = lines_before_tests(text);
        if n > MAX_LINES {
            wrong.push(format!(
                "src/{file}: {n} lines before its tests, more than {MAX_LINES}: split it along \
                 its concerns"
            ));
        } else if n > WHY_LINES && !is_test_file(file) && !says_why_one_file(text) {
            wrong.push(format!(
                "src/{file}: {n} lines before its tests, more than {WHY_LINES}, and its module \
                 doc has no paragraph starting '{WHY_MARK}': say why, or split it"
            ));
        }
    }
    wrong
}

/// Whether the module doc (the `//!` lines at the top) has the paragraph [`WHY_MARK`] starts.
fn says_why_one_file(text: &str) -> bool {
    text.lines()
        .take_while(|l| l.starts_with("//!"))
        .any(|l| l.starts_with(WHY_MARK))
}

#[test]
fn no_file_is_longer_than_the_limit_before_its_tests() {
    let wrong = size_violations(&files());
    assert!(
        wrong.is_empty(),
        "files too long (docs/ARCHITECTURE.md, \"Size of files\"):\n{}",
        wrong.join("\n")
    );
}

/// Where a file of src/workload/ stands among the workload's own layers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum WorkloadPart {
    /// `common/`: what every format shares (the `Workload` trait, the shared settings, the
    /// command line's request); imports only itself.
    Core,
    /// A format's folder (`builtin/`, `declarative/`, `stress/`, `vector/`, `ycsb/`): imports
    /// the core and its own files, never another format.
    Format(String),
    /// `definition.rs`: the `Definition` that names each format's, and the settings over it.
    Names,
    /// `any.rs`, which picks a format.
    Picker,
    /// `mod.rs`, the folder's face: declares the parts and hands on what the rest of headroom
    /// uses; on top, and imported by none of them.
    Face,
}

/// The part of the workload `file` (relative to src/) is in; None outside src/workload/.
fn workload_part(file: &str) -> Option<WorkloadPart> {
    let rest = file.strip_prefix("workload/")?;
    Some(match rest.split_once('/') {
        Some(("common", _)) => WorkloadPart::Core,
        Some((format, _)) => WorkloadPart::Format(format.to_string()),
        None if rest == "mod.rs" => WorkloadPart::Face,
        None if rest == "definition.rs" => WorkloadPart::Names,
        None if rest == "any.rs" => WorkloadPart::Picker,
        None => panic!(
            "src/workload/{rest} is in no part of the workload: put it in common/ (what every \
             format shares) or in a format's folder, and see docs/ARCHITECTURE.md"
        ),
    })
}

/// Whether a file of part `from` may import one of part `to`.
fn workload_may_import(from: &WorkloadPart, to: &WorkloadPart) -> bool {
    use WorkloadPart::*;
    match (from, to) {
        (_, Face) => *from == Face,
        (Core, to) => *to == Core,
        (Format(a), Format(b)) => a == b,
        (Format(_), to) => *to == Core,
        (Names, to) => matches!(to, Core | Format(_) | Names),
        (Picker | Face, _) => true,
    }
}

/// A file only the unit tests compile: `tests.rs` or one under a `tests/` folder.
fn is_test_file(file: &str) -> bool {
    file.ends_with("/tests.rs") || file.contains("/tests/")
}

/// Every import inside src/workload/ against its layers, as `from imports to` lines.
fn workload_layer_violations(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (file, targets) in graph {
        let Some(from) = workload_part(file).filter(|_| !is_test_file(file)) else {
            continue;
        };
        for target in targets {
            if let Some(to) = workload_part(target) {
                if !workload_may_import(&from, &to) {
                    wrong.push(format!(
                        "src/{file} ({from:?}) imports src/{target} ({to:?})"
                    ));
                }
            }
        }
    }
    wrong
}

#[test]
fn the_workload_core_and_formats_keep_their_layers() {
    let wrong = workload_layer_violations(&imports(true));
    assert!(
        wrong.is_empty(),
        "imports against the layers of src/workload/ (the core, then the formats, then any.rs; \
         no format imports another; see docs/ARCHITECTURE.md):\n{}",
        wrong.join("\n")
    );
}

/// The checks above fail where they should: on a file too long, and on each kind of import
/// the workload's layers forbid, written as the sources write them.
#[test]
fn the_size_and_workload_checks_catch_what_they_are_for() {
    assert_eq!(
        lines_before_tests(&"x\n".repeat(MAX_LINES + 1)),
        MAX_LINES + 1
    );
    let with_tests = format!(
        "{}#[cfg(test)]\nmod tests {{\n{}}}\n",
        "x\n".repeat(10),
        "y\n".repeat(900)
    );
    assert_eq!(lines_before_tests(&with_tests), 10);

    let part = |f: &str| workload_part(f).unwrap();
    let (core, stress) = (
        part("workload/common/mix.rs"),
        part("workload/stress/mod.rs"),
    );
    assert!(workload_may_import(&stress, &core));
    assert!(workload_may_import(
        &stress,
        &part("workload/stress/values.rs")
    ));
    // Nothing of the folder imports its face; the definitions name every format, the picker
    // reads them.
    assert!(!workload_may_import(&stress, &part("workload/mod.rs")));
    assert!(!workload_may_import(&core, &part("workload/mod.rs")));
    assert!(!workload_may_import(
        &part("workload/any.rs"),
        &part("workload/mod.rs")
    ));
    let names = part("workload/definition.rs");
    assert!(workload_may_import(&names, &stress));
    assert!(workload_may_import(&names, &core));
    assert!(!workload_may_import(&names, &part("workload/any.rs")));
    assert!(!workload_may_import(&stress, &names));
    assert!(workload_may_import(&part("workload/any.rs"), &names));
    assert!(!workload_may_import(
        &stress,
        &part("workload/builtin/mod.rs")
    ));
    assert!(!workload_may_import(
        &stress,
        &part("workload/declarative/model.rs")
    ));
    assert!(!workload_may_import(&stress, &part("workload/any.rs")));
    assert!(!workload_may_import(&core, &stress));
    assert!(!workload_may_import(&core, &part("workload/mod.rs")));
    assert!(!workload_may_import(&core, &part("workload/any.rs")));
    assert!(workload_may_import(&part("workload/any.rs"), &stress));

    // A made-up graph: each forbidden edge is reported, the allowed ones are not, and a
    // test file may reach across (declarative's tests compare a file with a built-in).
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("workload/stress/mod.rs", "workload/builtin/mod.rs"),
        ("workload/common/schema.rs", "workload/ycsb/model.rs"),
        ("workload/ycsb/mod.rs", "workload/common/mix.rs"),
        ("workload/declarative/tests.rs", "workload/builtin/mod.rs"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), BTreeSet::from([b.to_string()])))
    .collect();
    let wrong = workload_layer_violations(&graph);
    assert_eq!(wrong.len(), 2, "{wrong:?}");
    assert!(wrong[0].starts_with("src/workload/common/schema.rs (Core) imports src/workload/ycsb"));
    assert!(wrong[1].starts_with("src/workload/stress/mod.rs (Format(\"stress\")) imports"));

    // An item re-exported by the face is read as an import of the file defining it, so a
    // format cannot reach another (or any.rs) through `crate::workload::...`.
    let face = std::fs::read_to_string(src().join("workload/mod.rs")).unwrap();
    let reexports = reexports_of(&face, &["workload".to_string()]);
    assert_eq!(reexports["AnyWorkload"], ["workload", "any", "AnyWorkload"]);
    let grouped = reexports_of(
        "pub mod model;\npub use model::{load, parse as read};\n",
        &["workload".to_string(), "declarative".to_string()],
    );
    assert_eq!(
        grouped["load"],
        ["workload", "declarative", "model", "load"]
    );
}

#[test]
fn no_module_imports_a_higher_layer() {
    let mut wrong = Vec::new();
    for (file, targets) in import_graph() {
        let from = top(&file);
        for target in targets {
            let to = top(&target);
            let up = layer(&to) < layer(&from);
            let never = NEVER.contains(&(from.as_str(), to.as_str()));
            if (up || never) && !EXCEPTIONS.contains(&(from.as_str(), to.as_str())) {
                wrong.push(format!("src/{file} imports src/{target}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering of docs/ARCHITECTURE.md:\n{}",
        wrong.join("\n")
    );
}

/// Folders whose `mod.rs` and some of their files still import each other in a loop, with
/// the number of files in it (2026-11-29). A folder's face imports what it hands on; a file
/// that imports the face back for a type the face defines makes the loop. None of these may
/// grow, no other folder may start one, and when one shrinks or goes its line here is
/// lowered or removed: the test says so.
const MOD_LOOPS: &[(&str, usize)] = &[
    ("capacity", 2),
    ("cli", 6),
    ("cluster", 11),
    ("cluster/pauses", 2),
    ("engine", 3),
    ("live/page", 3),
    ("maintenance", 2),
    ("metrics", 2),
    ("report/charts", 4),
    ("run", 3),
    ("sweep", 3),
];

/// The groups of files that import each other in a loop, each sorted (Tarjan's strongly
/// connected components).
fn loops(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        loops: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.loops.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        loops: Vec::new(),
    };
    for file in graph.keys() {
        if !walk.index.contains_key(file.as_str()) {
            walk.visit(file);
        }
    }
    walk.loops
}

/// The loops against [`MOD_LOOPS`]: any loop but a listed folder's own, no larger than
/// listed, is wrong; so is a listed folder whose loop shrank or went (lower its line).
fn loop_violations(loops: &[Vec<String>], known: &[(&str, usize)]) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for files in loops {
        // A known folder's loop: its mod.rs and files of that folder only.
        let known_folder = known.iter().find(|(folder, _)| {
            files.contains(&format!("{folder}/mod.rs"))
                && files.iter().all(|f| f.starts_with(&format!("{folder}/")))
        });
        match known_folder {
            Some((folder, most)) if files.len() <= *most => {
                seen.insert(folder, files.len());
            }
            Some((folder, most)) => wrong.push(format!(
                "the loop of src/{folder}/ grew from {most} files to {}: {files:?}",
                files.len()
            )),
            None => wrong.push(format!("files that import each other in a loop: {files:?}")),
        }
    }
    for (folder, most) in known {
        match seen.get(folder) {
            Some(n) if n < most => wrong.push(format!(
                "the loop of src/{folder}/ shrank to {n} files: lower its line in MOD_LOOPS"
            )),
            None => wrong.push(format!(
                "src/{folder}/ has no loop any more: remove its line from MOD_LOOPS"
            )),
            _ => {}
        }
    }
    wrong
}

#[test]
fn no_files_import_each_other_in_a_loop() {
    let wrong = loop_violations(&loops(&import_graph()), MOD_LOOPS);
    assert!(
        wrong.is_empty(),
        "loops of imports (docs/ARCHITECTURE.md, \"The layers\"):\n{}",
        wrong.join("\n")
    );
}

/// The top-level command a file of src/commands/ belongs to (`capacity` for
/// `commands/capacity/matrix.rs`, `quickstart` for `commands/quickstart.rs`); None outside
/// src/commands/, and for the parts every command shares and the folder's mod.rs.
fn command_of(file: &str) -> Option<&str> {
    let rest = file.strip_prefix("commands/")?;
    let name = rest.split('/').next()?.trim_end_matches(".rs");
    (!matches!(name, "settings" | "terminal" | "exit" | "mod")).then_some(name)
}

/// Every import of one command by another, as `from imports to` lines.
fn command_violations(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (file, targets) in graph {
        let Some(from) = command_of(file) else {
            continue;
        };
        for target in targets {
            if command_of(target).is_some_and(|to| to != from) {
                wrong.push(format!("src/{file} imports src/{target}"));
            }
        }
    }
    wrong
}

#[test]
fn no_command_imports_another() {
    let wrong = command_violations(&import_graph());
    assert!(
        wrong.is_empty(),
        "a command imports another: what two commands share goes in commands/settings/, \
         commands/terminal/ or commands/exit.rs (docs/ARCHITECTURE.md, commands/):\n{}",
        wrong.join("\n")
    );
}

/// Each rule above fails on a planted violation: a loop through a mod.rs, a known loop that
/// grew or shrank, a command importing another, a long file without its reason, and a test
/// module the size rule must stop at.
#[test]
fn each_rule_catches_a_planted_violation() {
    let graph = |edges: &[(&str, &str)]| -> BTreeMap<String, BTreeSet<String>> {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    // A child importing its mod.rs back, in a folder not listed: caught.
    let planted = graph(&[
        ("fleet/kube/mod.rs", "fleet/kube/launcher.rs"),
        ("fleet/kube/launcher.rs", "fleet/kube/mod.rs"),
    ]);
    let wrong = loop_violations(&loops(&planted), &[]);
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    assert!(wrong[0].contains("fleet/kube/launcher.rs"), "{wrong:?}");
    // A listed folder: allowed at its size, refused larger, asked to be lowered smaller.
    let two = graph(&[("run/mod.rs", "run/a.rs"), ("run/a.rs", "run/mod.rs")]);
    assert!(loop_violations(&loops(&two), &[("run", 2)]).is_empty());
    let three = graph(&[
        ("run/mod.rs", "run/a.rs"),
        ("run/a.rs", "run/b.rs"),
        ("run/b.rs", "run/mod.rs"),
    ]);
    assert!(loop_violations(&loops(&three), &[("run", 2)])[0].contains("grew"));
    assert!(loop_violations(&loops(&two), &[("run", 3)])[0].contains("shrank"));
    assert!(loop_violations(&loops(&graph(&[])), &[("run", 2)])[0].contains("no loop any more"));
    // A loop reaching outside the listed folder is not the folder's own.
    let across = graph(&[("run/mod.rs", "sla/a.rs"), ("sla/a.rs", "run/mod.rs")]);
    assert_eq!(loop_violations(&loops(&across), &[("run", 2)]).len(), 2);

    // Commands: one importing another is caught; the shared parts and its own files are not.
    let commands = graph(&[
        ("commands/quickstart.rs", "commands/capacity/mod.rs"),
        ("commands/capacity/mod.rs", "commands/capacity/matrix.rs"),
        ("commands/capacity/matrix.rs", "commands/settings/search.rs"),
        ("commands/sweep.rs", "commands/terminal/watch.rs"),
        ("commands/mod.rs", "commands/run/mod.rs"),
    ]);
    assert_eq!(
        command_violations(&commands),
        ["src/commands/quickstart.rs imports src/commands/capacity/mod.rs"]
    );

    // Sizes: counted to the test module, whatever its visibility, past a cfg(test) helper.
    let long = |n: usize, doc: &str| format!("{doc}{}", "x\n".repeat(n));
    let files: BTreeMap<String, String> = [
        ("a.rs", long(MAX_LINES + 1, "")),
        ("b.rs", long(WHY_LINES + 1, "//! B.\n")),
        (
            "c.rs",
            long(
                WHY_LINES + 1,
                "//! C.\n//!\n//! **Why one file of 601 lines.** ...\n",
            ),
        ),
        (
            "d.rs",
            long(WHY_LINES - 10, "") + "#[cfg(test)]\nimpl X {}\n" + &"y\n".repeat(20),
        ),
        (
            "e.rs",
            long(WHY_LINES - 10, "")
                + "#[cfg(test)]\npub(super) mod tests {\n"
                + &"y\n".repeat(900)
                + "}\n",
        ),
        ("f/tests.rs", long(WHY_LINES + 1, "")),
    ]
    .into_iter()
    .map(|(f, t)| (f.to_string(), t))
    .collect();
    let wrong = size_violations(&files);
    assert_eq!(wrong.len(), 3, "{wrong:?}");
    assert!(wrong[0].starts_with("src/a.rs: 801 lines"), "{wrong:?}");
    assert!(
        wrong[1].starts_with("src/b.rs: 602 lines") && wrong[1].contains(WHY_MARK),
        "{wrong:?}"
    );
    assert!(wrong[2].starts_with("src/d.rs: 612 lines"), "{wrong:?}");
    assert_eq!(lines_before_tests(&files["e.rs"]), WHY_LINES - 10);
    // The import reader leaves the test module out, whatever its visibility.
    assert!(!code_of(&files["e.rs"]).contains('y'));
}

/// The reader above finds the imports it must: a file known to import another does.
#[test]
fn the_import_reader_sees_use_groups_and_super() {
    let graph = import_graph();
    let imports = |from: &str, to: &str| graph[from].contains(to);
    // `use crate::results::{...}` groups, nested paths and `super::`.
    assert!(
        imports("run/mod.rs", "results/config.rs"),
        "{:?}",
        graph["run/mod.rs"]
    );
    assert!(imports("results/run_dir.rs", "results/hlog.rs"));
    assert!(imports(
        "commands/capacity/mod.rs",
        "commands/capacity/matrix.rs"
    ));
    // A made-up upward import is caught by the layer check's own rule.
    assert!(layer("results") > layer("report"));
    let paths = named_paths(
        "use crate::a::{b, c::{d, e as f}, self};\nlet x = super::g::h();\nuse super::{i, j::k};",
        &["m".to_string(), "n".to_string()],
        false,
    );
    let paths: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        ["a::b", "a::c::d", "a::c::e", "a", "m::g::h", "m::i", "m::j::k"]
    );
}
