//! The documentation's links go where they say: every relative link `[text](target)` in the
//! README, `docs/*.md` and the other READMEs (`reports/`, `datasets/`, `prompts/`, `docker/`,
//! `crates/*/`) names a file or folder that exists, and every `#anchor` names a heading of its
//! page by GitHub's rule. Web and mail links are not followed. The front doors stay short: the
//! README under 250 lines, `reports/README.md` under 400 (the rest belongs in `docs/`). Each
//! failure names the page, the line, the link and why.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pages checked, relative to the root: those of the list that exist.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    pages.extend(
        sorted_entries(root, "docs")
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    for page in [
        "reports/README.md",
        "datasets/README.md",
        "prompts/README.md",
        "docker/README.md",
    ] {
        pages.push(PathBuf::from(page));
    }
    pages.extend(
        sorted_entries(root, "crates")
            .into_iter()
            .map(|dir| dir.join("README.md")),
    );
    pages.retain(|page| root.join(page).is_file());
    pages
}

/// The entries of `root/dir` as paths relative to `root`, sorted; none when it cannot be read.
fn sorted_entries(root: &Path, dir: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| Path::new(dir).join(entry.file_name()))
        .collect();
    paths.sort();
    paths
}

/// Whether a line opens or closes a fenced code block.
fn is_fence(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("```") || line.starts_with("~~~")
}

/// The inline links' targets of a page with their line numbers, outside fenced code blocks and
/// code spans (a code span may run on over a line break, never past the end of a paragraph).
fn links(text: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let (mut in_fence, mut in_code) = (false, false);
    for (index, line) in text.lines().enumerate() {
        if is_fence(line) {
            in_fence = !in_fence;
            in_code = false;
            continue;
        }
        if in_fence || line.trim().is_empty() {
            in_code = false;
            continue;
        }
        for (part_index, part) in line.split('`').enumerate() {
            if part_index > 0 {
                in_code = !in_code;
            }
            if in_code {
                continue;
            }
            let mut rest = part;
            while let Some(at) = rest.find("](") {
                let target = &rest[at + 2..];
                let end = target
                    .find(|c: char| c == ')' || c.is_whitespace())
                    .unwrap_or(target.len());
                found.push((index + 1, &target[..end]));
                rest = &target[end..];
            }
        }
    }
    found
}

/// GitHub's anchor for a heading: lower case; letters, digits, `-` and `_` kept, each space a
/// hyphen, every other character dropped. A link in a heading counts by its text.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    while let Some(at) = rest.find("](") {
        let Some(end) = rest[at..].find(')') else { break };
        text.push_str(&rest[..at]);
        rest = &rest[at + end + 1..];
    }
    text.push_str(rest);
    let mut anchor = String::new();
    for c in text.trim().to_lowercase().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            anchor.push(c);
        } else if c == ' ' {
            anchor.push('-');
        }
    }
    anchor
}

/// The anchors of a page's headings (`#` to `######`, outside fenced code blocks); a repeated
/// heading's anchor gets `-1`, `-2`, … as on GitHub.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = HashSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if is_fence(line) {
            in_fence = !in_fence;
            continue;
        }
        let unindented = line.trim_start_matches(' ');
        let level = unindented.len() - unindented.trim_start_matches('#').len();
        let heading = &unindented[level..];
        let is_heading = line.len() - unindented.len() <= 3
            && (1..=6).contains(&level)
            && (heading.is_empty() || heading.starts_with(' ') || heading.starts_with('\t'));
        if in_fence || !is_heading {
            continue;
        }
        let anchor = slug(heading.trim().trim_end_matches('#'));
        let count = seen.entry(anchor.clone()).or_insert(0);
        anchors.insert(if *count == 0 {
            anchor
        } else {
            format!("{anchor}-{count}")
        });
        *count += 1;
    }
    anchors
}

/// Why `target`, linked from `page`, does not resolve; `None` when it does.
fn broken(root: &Path, page: &Path, target: &str) -> Option<String> {
    if ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| target.starts_with(*scheme))
    {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let page_path = root.join(page);
    let file = if path.is_empty() {
        page_path.clone()
    } else {
        page_path.parent().unwrap_or(root).join(path)
    };
    if !file.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let anchor = anchor?;
    if !file.extension().is_some_and(|e| e == "md") {
        return None;
    }
    match fs::read_to_string(&file) {
        Ok(text) if anchors(&text).contains(anchor) => None,
        Ok(_) => Some(format!("no heading of {} has the anchor #{anchor}", file.display())),
        Err(error) => Some(format!("{} cannot be read: {error}", file.display())),
    }
}

#[test]
fn every_relative_link_resolves() {
    let root = root();
    let pages = pages(&root);
    assert!(
        pages.iter().any(|page| page.starts_with("docs")),
        "no page under docs/ was found"
    );
    let mut failures = Vec::new();
    for page in &pages {
        let text = fs::read_to_string(root.join(page)).unwrap();
        for (line, target) in links(&text) {
            if let Some(why) = broken(&root, page, target) {
                failures.push(format!("{}:{line}: the link ({target}): {why}", page.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} broken links:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_front_doors_stay_short() {
    for (page, limit) in [("README.md", 250), ("reports/README.md", 400)] {
        let lines = fs::read_to_string(root().join(page)).unwrap().lines().count();
        assert!(
            lines < limit,
            "{page} has {lines} lines: keep it under {limit} and move the rest into docs/"
        );
    }
}

#[test]
fn anchors_follow_githubs_rule() {
    let page = "# A graph's conventions\n## QALD-9 and LC-QuAD on DBpedia\n```\n# not a heading\n```\n\
                ### `/health` and [metrics](server.md)\n## Notes\n## Notes\n";
    let found = anchors(page);
    for anchor in [
        "a-graphs-conventions",
        "qald-9-and-lc-quad-on-dbpedia",
        "health-and-metrics",
        "notes",
        "notes-1",
    ] {
        assert!(found.contains(anchor), "{anchor} missing from {found:?}");
    }
    assert!(
        !found.contains("not-a-heading"),
        "a line in a code block counted as a heading"
    );
    let text = "see [a](a.md#x) and `[b](b.md)`, or `a span\nover lines [d](d.md)` [e](e.md)";
    let targets: Vec<&str> = links(text).into_iter().map(|(_, target)| target).collect();
    assert_eq!(targets, ["a.md#x", "e.md"]);
}
