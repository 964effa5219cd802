//! The layering of docs/ARCHITECTURE.md, checked against the source: every `crate::` and
//! `super::` path in src/ (tests left out) is read as an import of the file it names, and
//!
//! - no top-level module imports one of a higher layer, except the exceptions named here
//!   (each explained in ARCHITECTURE.md);
//! - no files import each other in a loop.
//!
//! Reading paths as text can miss an import written in an unusual way (a macro, a glob
//! through a re-export); it cannot invent one, so what it reports is real.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers from the top: a module may import its own layer's modules or lower ones.
const LAYERS: &[&[&str]] = &[
    // Test data for the unit tests, compiled only with them.
    &["lib"],
    &["commands", "cli"],
    &["report"],
    &["compare"],
    &["sweep"],
    &["capacity"],
    &["fleet"],
    &["run"],
    &["results"],
    &["maintenance"],
    &["sla"],
    &["engine"],
    &["metrics"],
    &["workload", "cluster"],
    &["client"],
    &["units", "output_dir", "stats", "stop", "format", "lanes"],
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

/// The code of a file without its unit tests and comments.
fn code_of(text: &str) -> String {
    let text = match text
        .find("#[cfg(test)]\nmod tests")
        .or_else(|| text.find("#[cfg(test)]\npub(crate) mod tests"))
    {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
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
    let files = files();
    let modules: BTreeMap<Vec<String>, String> = files
        .keys()
        .filter(|f| *f != "main.rs")
        .map(|f| (module_of(f), f.clone()))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, text) in &files {
        if file == "main.rs" {
            continue;
        }
        let module = module_of(file);
        let is_mod_file = file.ends_with("mod.rs") || file == "lib.rs";
        let targets = graph.entry(file.clone()).or_default();
        for path in named_paths(&code_of(text), &module, is_mod_file) {
            if let Some(target) = resolve(&path, &modules) {
                if target != file {
                    targets.insert(target.clone());
                }
            }
        }
    }
    graph
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

/// Whether `a` is a folder's mod.rs and `b` a file of that folder (or the other way round):
/// a module and its own submodules may use each other's items (the submodules share the
/// folder's types; the folder's face hands theirs on), so their imports make no loop.
fn parent_and_child(a: &str, b: &str) -> bool {
    let inside = |parent: &str, child: &str| {
        parent
            .strip_suffix("mod.rs")
            .is_some_and(|dir| child.starts_with(dir) && child != parent)
            || (parent == "lib.rs")
    };
    inside(a, b) || inside(b, a)
}

#[test]
fn no_files_import_each_other_in_a_loop() {
    let graph: BTreeMap<String, BTreeSet<String>> = import_graph()
        .into_iter()
        .map(|(file, targets)| {
            let targets = targets
                .into_iter()
                .filter(|t| !parent_and_child(&file, t))
                .collect();
            (file, targets)
        })
        .collect();
    // Tarjan's strongly connected components, iteratively small enough to recurse.
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        loops: Vec<Vec<&'a str>>,
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
                    component.push(w);
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
        graph: &graph,
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
    assert!(
        walk.loops.is_empty(),
        "files that import each other in a loop: {:?}",
        walk.loops
    );
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
