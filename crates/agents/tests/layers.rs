//! The crate's layers (`crates/agents/README.md`), checked on its source: every `crate::…` path a
//! file names outside comments and its unit tests runs to its own layer or one below it, and no
//! files name each other in a circle. Fails with the file, the path and the two layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: each module of the crate's root and the layer it stands in.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "plain data and words",
        &[
            "error",
            "words",
            "qir",
            "answer",
            "example_book",
            "context",
            "similarity",
            "ask",
        ],
    ),
    ("understanding", &["understanding"]),
    ("linking", &["linking"]),
    ("candidates", &["candidates"]),
    ("dialogue", &["dialogue"]),
    ("the state graph", &["state", "graph"]),
    ("agents", &["agents"]),
    ("the pipeline", &["explanation", "generated", "pipeline", "lib"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, modules)| modules.contains(&module))
}

/// Every `.rs` file under `dir`, as paths relative to `root`.
fn sources(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source folder reads") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(root).expect("under the root").to_path_buf());
        }
    }
}

/// The file's code: its unit tests (from `#[cfg(test)]` on) and every comment dropped.
fn code(text: &str) -> String {
    let text = text.split("\n#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|line| match line.find("//") {
            // `//` inside a string (an IRI) is code: only a line that starts as a comment, or
            // a `//` after the code's last quote, is dropped.
            Some(at) if line[..at].matches('"').count() % 2 == 0 => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `crate::a::b` paths a file names: `(a, b)`, where `b` is the next segment if any.
fn crate_paths(code: &str) -> BTreeSet<(String, Option<String>)> {
    let mut out = BTreeSet::new();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for (at, _) in code.match_indices("crate::") {
        if at > 0 && code[..at].ends_with(ident) {
            continue; // `chatty_kg_graph::…`, not this crate
        }
        let rest = &code[at + "crate::".len()..];
        let first: String = rest.chars().take_while(|&c| ident(c)).collect();
        let after = &rest[first.len()..];
        let second = after
            .strip_prefix("::")
            .map(|s| s.chars().take_while(|&c| ident(c)).collect::<String>())
            .filter(|s| !s.is_empty());
        if !first.is_empty() {
            out.insert((first, second));
        }
    }
    out
}

/// The file a `crate::a::b` path leads to: `a/b.rs` when there is one, else `a/mod.rs` or `a.rs`.
fn file_of(src: &Path, first: &str, second: Option<&str>) -> Option<PathBuf> {
    let candidates = [
        second.map(|s| PathBuf::from(first).join(format!("{s}.rs"))),
        Some(PathBuf::from(first).join("mod.rs")),
        Some(PathBuf::from(format!("{first}.rs"))),
    ];
    candidates.into_iter().flatten().find(|p| src.join(p).is_file())
}

#[test]
fn imports_run_down_the_layers_and_never_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    files.sort();
    assert!(
        files.len() > 20,
        "the crate's sources were not found under {}",
        src.display()
    );

    let mut wrong = Vec::new();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for file in &files {
        let module = file
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|m| m.trim_end_matches(".rs").to_owned())
            .expect("a file name");
        let Some(own) = layer_of(&module) else {
            wrong.push(format!(
                "{}: module `{module}` is in no layer of LAYERS",
                file.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(src.join(file)).expect("the file reads");
        for (first, second) in crate_paths(&code(&text)) {
            let Some(theirs) = layer_of(&first) else {
                wrong.push(format!("{}: `crate::{first}` is in no layer of LAYERS", file.display()));
                continue;
            };
            if theirs > own {
                wrong.push(format!(
                    "{}: `crate::{first}` runs up from layer {own} ({}) to layer {theirs} ({})",
                    file.display(),
                    LAYERS[own].0,
                    LAYERS[theirs].0
                ));
            }
            if let Some(target) = file_of(&src, &first, second.as_deref())
                && &target != file
            {
                edges.entry(file.clone()).or_default().insert(target);
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layers:\n{}", wrong.join("\n"));

    // A circle is a path back to a file from itself: a depth-first search that meets a file
    // still on its stack.
    fn visit(
        file: &PathBuf,
        edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        stack: &mut Vec<PathBuf>,
        done: &mut BTreeSet<PathBuf>,
        circles: &mut Vec<String>,
    ) {
        if done.contains(file) {
            return;
        }
        if let Some(at) = stack.iter().position(|f| f == file) {
            let circle: Vec<String> = stack[at..].iter().map(|f| f.display().to_string()).collect();
            circles.push(format!("{} -> {}", circle.join(" -> "), file.display()));
            return;
        }
        stack.push(file.clone());
        for next in edges.get(file).into_iter().flatten() {
            visit(next, edges, stack, done, circles);
        }
        stack.pop();
        done.insert(file.clone());
    }
    let mut circles = Vec::new();
    let mut done = BTreeSet::new();
    for file in &files {
        visit(file, &edges, &mut Vec::new(), &mut done, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "files that import each other:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_checker_reads_paths_and_skips_comments() {
    let code = code(
        "use crate::words::singular; // crate::agents::chat\n/// crate::pipeline\nlet x = chatty_kg_graph::crate_name;\n#[cfg(test)]\nmod tests { use crate::pipeline::Pipeline; }",
    );
    let paths = crate_paths(&code);
    assert_eq!(
        paths,
        BTreeSet::from([("words".to_owned(), Some("singular".to_owned()))])
    );
    assert_eq!(layer_of("agents"), Some(6));
    assert!(layer_of("words") < layer_of("understanding"));
}
