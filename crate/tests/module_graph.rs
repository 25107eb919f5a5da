//! The crate's modules form a DAG: no module imports, through any chain of
//! `use crate::...` and `super::...` paths, a module that imports it back.
//! Read from the sources (not the compiler): each file's non-test code
//! without its comments, its paths resolved to the modules it names, at the
//! granularity of the top-level modules and, inside one, of its files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Cycles between these are known and left to their own change (the model
/// families' work in `gguf`, `model` and `quant`); any other fails.
const KNOWN: &[&[&str]] = &[&["gguf", "model", "quant"]];

fn module_of(rel: &str) -> String {
    let p = rel.trim_end_matches(".rs");
    let p = p.strip_suffix("/mod").unwrap_or(p);
    p.replace('/', "::")
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The stages' modules, as `rules/kind.rs`'s stage list (`with_stages!`)
/// names them, one `module: Kind = SPEC;` line each.
fn stage_modules(src: &Path) -> Vec<String> {
    let kind = std::fs::read_to_string(src.join("rules/kind.rs")).unwrap();
    let list = kind.split("macro_rules! with_stages").nth(1).expect("kind.rs holds the stage list");
    let list = &list[..list.find("\n}").expect("the list's end")];
    list.lines()
        .filter_map(|l| l.trim().split_once(':').filter(|(_, rest)| rest.contains('=')).map(|(m, _)| m.trim().to_string()))
        .filter(|m| m.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect()
}

/// Every `crate::a::b` or `super::a` path in `src`, as module names. A
/// macro's `super::$module` over the stage list is a path to each stage's module.
fn targets(module: &str, is_mod_rs: bool, src: &str, stages: &[String]) -> BTreeSet<String> {
    // Comments name modules without importing them.
    let code: String = src
        .split("#[cfg(test)]")
        .next()
        .unwrap_or("")
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let expanded: String = stages.iter().map(|m| format!(" super::{m}::SPEC")).collect();
    let code = if code.contains("super::$module") { code + &expanded } else { code };
    let mut out = BTreeSet::new();
    for (start, _) in code.match_indices("crate::").chain(code.match_indices("super::")) {
        let rest = &code[start..];
        let path: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':').collect();
        let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
        if parts.len() < 2 {
            continue;
        }
        let target = if parts[0] == "crate" {
            let top = module.split("::").next().unwrap();
            if parts[1] == top && parts.len() > 2 { format!("{}::{}", parts[1], parts[2]) } else { parts[1].to_string() }
        } else {
            // `super` of a file `a/b.rs` is `a`; of `a/b/mod.rs`, `a` too.
            let own = if is_mod_rs { module.rsplit_once("::").map_or("", |(p, _)| p) } else { module };
            let parent = own.rsplit_once("::").map_or("", |(p, _)| p);
            let parent = if is_mod_rs { own } else { parent };
            if parent.is_empty() { parts[1].to_string() } else { format!("{parent}::{}", parts[1]) }
        };
        out.insert(target);
    }
    out
}

#[test]
fn the_crate_has_no_import_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let stages = stage_modules(&src);
    assert!(stages.len() >= 10 && stages.contains(&"top_k".to_string()), "the stage list: {stages:?}");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let modules: BTreeSet<String> =
        all.iter().map(|p| module_of(p.strip_prefix(&src).unwrap().to_str().unwrap())).collect();
    let resolve = |t: &str| {
        let mut t = t.to_string();
        while !modules.contains(&t) {
            match t.rsplit_once("::") {
                Some((p, _)) => t = p.to_string(),
                None => return None,
            }
        }
        Some(t)
    };
    let top = |m: &str| m.split("::").next().unwrap().to_string();
    for p in &all {
        let rel = p.strip_prefix(&src).unwrap().to_str().unwrap().to_string();
        let module = module_of(&rel);
        if module == "lib" || module.starts_with("bin") {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap();
        for t in targets(&module, rel.ends_with("mod.rs"), &text, &stages) {
            let Some(t) = resolve(&t) else { continue };
            if t == module || t.starts_with(&format!("{module}::")) || module.starts_with(&format!("{t}::")) {
                continue;
            }
            // Across top-level modules the top-level ones are the nodes; inside one, its files.
            let (a, b) = if top(&module) == top(&t) { (module.clone(), t) } else { (top(&module), top(&t)) };
            edges.entry(a).or_default().insert(b);
        }
    }
    // The registry's list of specs reaches every stage's module.
    assert!(stages.iter().all(|m| edges["rules::registry"].contains(&format!("rules::{m}"))), "{:?}", edges["rules::registry"]);
    let cycles = strongly_connected(&edges);
    let unknown: Vec<&Vec<String>> = cycles
        .iter()
        .filter(|c| !KNOWN.iter().any(|k| k.len() == c.len() && k.iter().all(|m| c.contains(&m.to_string()))))
        .collect();
    assert!(unknown.is_empty(), "import cycles among the crate's modules: {unknown:?}");
}

/// The strongly connected components of more than one node (Tarjan).
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        out: Vec<Vec<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        let i = t.index.len();
        t.index.insert(v.to_string(), i);
        t.low.insert(v.to_string(), i);
        t.stack.push(v.to_string());
        let next: Vec<String> = t.edges.get(v).map(|s| s.iter().cloned().collect()).unwrap_or_default();
        for w in next {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let lw = t.low[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.stack.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                let done = w == v;
                c.push(w);
                if done {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                t.out.push(c);
            }
        }
    }
    let mut t = T { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), out: Vec::new() };
    let nodes: Vec<String> = edges.keys().cloned().collect();
    for v in nodes {
        if !t.index.contains_key(&v) {
            visit(&mut t, &v);
        }
    }
    t.out
}
