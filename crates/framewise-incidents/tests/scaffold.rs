//! What `scaffold` writes: the agent guide carries docs/AGENTS.md's doctrine word for word,
//! and `framewise.toml` keeps its examples one `#` away from working.

use framewise_incidents::{scaffold, AGENT_DOCTRINE, AGENT_GUIDE, AGENT_GUIDE_FILE, CONFIG_TOML};

/// The numbered list under docs/AGENTS.md's "## The doctrine", without the comment that
/// points here.
fn doctrine_in_agents_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../", "docs/AGENTS.md");
    let text = std::fs::read_to_string(path).expect("docs/AGENTS.md");
    let start = text.find("## The doctrine\n").expect("a doctrine section");
    let section = &text[start..];
    let end = section[1..].find("\n## ").map_or(section.len(), |e| e + 1);
    let list_start = section.find("\n1. ").expect("a numbered list") + 1;
    section[list_start..end].trim_end().to_owned() + "\n"
}

#[test]
fn the_guide_carries_the_doctrine_of_agents_md() {
    assert_eq!(
        AGENT_DOCTRINE,
        doctrine_in_agents_md(),
        "docs/AGENTS.md's doctrine and crates/framewise-incidents/src/agent_doctrine.md differ"
    );
    assert!(AGENT_GUIDE.contains(AGENT_DOCTRINE));
    assert!(AGENT_DOCTRINE.starts_with("1. **Never claim a performance fix"));
    assert!(AGENT_DOCTRINE.contains("7. **Goldens belong to a person.**"));
}

#[test]
fn scaffolding_writes_the_three_files_once() {
    let project = tempfile::tempdir().expect("tempdir");
    let first = scaffold(project.path()).expect("scaffold");
    assert!(first.created_dir);
    assert_eq!(first.created.len(), 3);
    let dir = project.path().join(".framewise");
    let guide = std::fs::read_to_string(dir.join(AGENT_GUIDE_FILE)).expect("guide");
    assert_eq!(guide, AGENT_GUIDE);
    assert_eq!(
        std::fs::read_to_string(dir.join("framewise.toml")).expect("toml"),
        CONFIG_TOML
    );
    // A user's edit survives a second scaffold.
    std::fs::write(dir.join("framewise.toml"), "[budgets]\nframe_ms = 8.33\n").expect("edit");
    let again = scaffold(project.path()).expect("scaffold again");
    assert!(!again.created_dir && again.created.is_empty());
    assert_eq!(again.kept.len(), 3);
    assert_eq!(
        std::fs::read_to_string(dir.join("framewise.toml")).expect("toml"),
        "[budgets]\nframe_ms = 8.33\n"
    );
}
