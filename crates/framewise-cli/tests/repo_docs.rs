//! The repository's documents against the repository: every document the code, the docs and
//! the messages cite exists, every relative link and anchor of the documentation's pages
//! (README.md, ARCHITECTURE.md, docs/ and the pages under it) resolves, and
//! ARCHITECTURE.md's crate table and the README's tour list exactly the workspace's crates
//! (and the table their workspace dependencies), as `cargo metadata` reports them; and every
//! crate root states its stance on `unsafe`.

#![expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on an unreadable repository"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The workspace root (this crate is `crates/framewise-cli`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `cargo metadata` of the workspace (its own packages only).
fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(root().join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Workspace member → the workspace members it depends on (normal dependencies, optional
/// ones included; dev and build dependencies left out), from `cargo metadata`.
fn workspace_crates() -> BTreeMap<String, BTreeSet<String>> {
    let meta = metadata();
    let packages = meta["packages"].as_array().unwrap();
    let members: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| d["name"].as_str())
                .filter(|name| members.contains(*name))
                .map(str::to_owned)
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

/// The words written in backticks in a markdown table cell.
fn backticked(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The rows of the first table under the heading `heading`, as cells.
fn table_under<'a>(doc: &'a str, heading: &str) -> Vec<Vec<&'a str>> {
    let section = doc
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no `{heading}` heading"))
        .1;
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect()
}

/// The crate a path like `crates/integrations/framewise-wgpu` or `framewise-wgpu` names.
fn crate_of(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

#[test]
fn architecture_crate_table_matches_cargo_metadata() {
    let crates = workspace_crates();
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut rows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for cells in table_under(&doc, "## Crates") {
        let [name, _job, deps] = cells.as_slice() else {
            panic!(
                "ARCHITECTURE.md: a crate row has {} cells, not 3",
                cells.len()
            );
        };
        let name = crate_of(backticked(name).first().copied().unwrap_or(name)).to_owned();
        // Backticked names of workspace crates are its workspace dependencies; other
        // backticked words (a feature, a verb) are commentary.
        let deps = backticked(deps)
            .into_iter()
            .filter(|d| crates.contains_key(*d))
            .map(str::to_owned)
            .collect();
        assert!(
            rows.insert(name.clone(), deps).is_none(),
            "ARCHITECTURE.md lists `{name}` twice"
        );
    }
    let missing: Vec<&String> = crates.keys().filter(|c| !rows.contains_key(*c)).collect();
    let extra: Vec<&String> = rows.keys().filter(|c| !crates.contains_key(*c)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "ARCHITECTURE.md's crate table is not the workspace: without a row {missing:?}, \
         rows that are no workspace crate {extra:?}"
    );
    for (name, deps) in &crates {
        assert_eq!(
            &rows[name], deps,
            "ARCHITECTURE.md: the workspace dependencies of `{name}` (left: the table; right: \
             Cargo.toml, dev-dependencies left out)"
        );
    }
}

#[test]
fn readme_tour_lists_every_crate() {
    let crates = workspace_crates();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let listed: BTreeSet<String> = table_under(&readme, "## A tour")
        .iter()
        .filter_map(|cells| backticked(cells.first()?).first().copied())
        .filter(|place| place.starts_with("crates/"))
        .map(|place| crate_of(place).to_owned())
        .collect();
    let missing: Vec<&String> = crates.keys().filter(|c| !listed.contains(*c)).collect();
    let extra: Vec<&String> = listed.iter().filter(|c| !crates.contains_key(*c)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "README.md's tour: crates without a row {missing:?}, rows that are no crate {extra:?}"
    );
}

/// Text files of the repository (sources, docs, scripts, web files, snapshots), outside
/// build output, git and node_modules.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "node_modules") {
                text_files(&path, out);
            }
        } else if let Ok(text) = std::fs::read(&path) {
            if !text.contains(&0) {
                out.push(path);
            }
        }
    }
}

/// Every `….md` a text cites: the file name with the path in front of it, if any, and the
/// `#fragment` after it, if any.
fn cited_documents(text: &str) -> Vec<(&str, Option<&str>)> {
    let is_path = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    let mut cited = Vec::new();
    for (at, _) in text.match_indices(".md") {
        let end = at + 3;
        if text[end..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        {
            continue; // `.mdx`, `.md5`
        }
        let start = text[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_path(c))
            .last()
            .map_or(at, |(i, _)| i);
        let word = &text[start..end];
        // Documents are named in capitals (README.md, docs/CLI.md); the pages under docs/
        // in lower case (docs/cli/gate.md) are cited by their path from the root.
        let stem = crate_of(word).trim_end_matches(".md");
        let capitals = stem.chars().all(|c| c.is_ascii_uppercase() || c == '_');
        if !stem.is_empty() && (capitals || word.starts_with("docs/")) {
            let fragment = text[end..].strip_prefix('#').map(|rest| {
                let len = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                    .unwrap_or(rest.len());
                &rest[..len]
            });
            cited.push((word, fragment.filter(|f| !f.is_empty())));
        }
    }
    cited
}

/// The lines of a markdown document outside its fenced code blocks.
fn prose_lines(doc: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    doc.lines().filter(move |l| {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchors a markdown renderer gives a document's headings: lower case, spaces as
/// hyphens, punctuation other than `-` and `_` dropped (`## Truth grades` → `truth-grades`);
/// a heading seen before gets `-1`, `-2`, … after its anchor, as GitHub numbers them.
fn heading_anchors(doc: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    for line in prose_lines(doc).filter(|l| l.starts_with('#')) {
        let anchor: String = line
            .trim_start_matches('#')
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut unique = anchor.clone();
        let mut seen = 0;
        while anchors.contains(&unique) {
            seen += 1;
            unique = format!("{anchor}-{seen}");
        }
        anchors.insert(unique);
    }
    anchors
}

/// The targets of a markdown document's inline links and images (`[text](target)`), outside
/// fenced code blocks and code spans.
fn link_targets(doc: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    for line in prose_lines(doc) {
        // Code spans are the odd-numbered pieces between backticks.
        for (i, piece) in line.split('`').enumerate() {
            if i % 2 == 1 {
                continue;
            }
            for (at, _) in piece.match_indices("](") {
                let rest = &piece[at + 2..];
                if let Some(len) = rest.find(')') {
                    targets.push(rest[..len].trim());
                }
            }
        }
    }
    targets
}

/// The markdown pages of the documentation: README.md, ARCHITECTURE.md, docs/*.md and
/// docs/*/*.md (the pages split out of an entry page, as docs/cli/ and docs/performance/).
fn documentation_pages(root: &Path) -> Vec<PathBuf> {
    let is_md = |p: &Path| p.extension().is_some_and(|e| e == "md");
    let mut pages = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        let depth = dir.strip_prefix(root).unwrap().components().count();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && depth < 2 {
                dirs.push(path);
            } else if path.is_file() && is_md(&path) {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

#[test]
fn every_relative_link_in_the_documentation_resolves() {
    let root = root();
    let pages = documentation_pages(&root);
    assert!(
        pages.iter().any(|p| p.ends_with("docs/cli/gate.md"))
            && pages
                .iter()
                .any(|p| p.ends_with("docs/performance/recorder.md")),
        "the pages under docs/cli/ and docs/performance/ are not among those checked: {pages:?}"
    );
    let mut dangling = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let doc = std::fs::read_to_string(page).unwrap();
        let shown = page.strip_prefix(&root).unwrap().display();
        for target in link_targets(&doc) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            if !file.exists() {
                dangling.push(format!("{shown}: {target} (no such file)"));
            } else if !fragment.is_empty() {
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                if !heading_anchors(&text).contains(fragment) {
                    dangling.push(format!("{shown}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(
        dangling.is_empty(),
        "relative links in the documentation that lead nowhere:\n{}",
        dangling.join("\n")
    );
    assert!(
        checked > 100,
        "only {checked} relative links found: is the parser broken?"
    );
}

#[test]
fn every_cited_document_exists_in_the_repository() {
    let root = root();
    let mut files = Vec::new();
    text_files(&root, &mut files);
    let mut dangling = Vec::new();
    for file in &files {
        let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        for (word, fragment) in cited_documents(&text) {
            let here = file.parent().unwrap();
            let name = crate_of(word);
            let found = [here.join(word), root.join(word)]
                .into_iter()
                .chain(
                    [root.join(name), root.join("docs").join(name)]
                        .into_iter()
                        .filter(|_| !word.contains('/')),
                )
                .find(|p| p.is_file());
            let shown = file.strip_prefix(&root).unwrap_or(file).display();
            match (found, fragment) {
                (None, _) => dangling.push(format!("{shown}: {word}")),
                (Some(target), Some(fragment)) => {
                    let doc = std::fs::read_to_string(&target).unwrap();
                    if !heading_anchors(&doc).contains(fragment) {
                        dangling.push(format!("{shown}: {word}#{fragment} (no such heading)"));
                    }
                }
                (Some(_), None) => {}
            }
        }
    }
    dangling.sort();
    dangling.dedup();
    assert!(
        dangling.is_empty(),
        "documents (or headings) cited but not in the repository (the repository must stand \
         alone):\n{}",
        dangling.join("\n")
    );
    assert!(
        files.iter().any(|f| f.ends_with("docs/CONCEPTS.md")),
        "docs/CONCEPTS.md, where the concepts live, is missing"
    );
}

/// Every library and binary root says how it stands on `unsafe`: forbidden, or allowed with
/// every block's `// SAFETY:` comment enforced by clippy.
#[test]
fn every_crate_forbids_unsafe_or_documents_every_unsafe_block() {
    let meta = metadata();
    let mut without = Vec::new();
    for package in meta["packages"].as_array().unwrap() {
        for target in package["targets"].as_array().unwrap() {
            let kinds = target["kind"].as_array().unwrap();
            if !kinds.iter().any(|k| k == "lib" || k == "bin") {
                continue;
            }
            let src = target["src_path"].as_str().unwrap();
            let text = std::fs::read_to_string(src).unwrap();
            let attributes: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("#!["))
                .collect();
            let ok = attributes.iter().any(|a| {
                let a = a.replace(' ', "");
                a == "#![forbid(unsafe_code)]"
                    || (a.contains("clippy::undocumented_unsafe_blocks")
                        && ["#![deny(", "#![forbid(", "#![warn("]
                            .iter()
                            .any(|level| a.starts_with(level)))
            });
            if !ok {
                without.push(format!("{} ({src})", target["name"].as_str().unwrap()));
            }
        }
    }
    assert!(
        without.is_empty(),
        "crate roots with neither #![forbid(unsafe_code)] nor \
         #![deny(clippy::undocumented_unsafe_blocks)]:\n{}",
        without.join("\n")
    );
}
