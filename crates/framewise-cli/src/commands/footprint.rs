//! `framewise footprint KEY [--situation NAME=VALUE]...`: the footprint of an incident key —
//! `{v, id, key}` exactly as an incident record carries it — and how the key reads.
//!
//! The id is computed by framewise-detect's one rule (FNV-1a 32 of `v<version>:<key>` over
//! UTF-16 code units), so it agrees with the incident log, `framewise issues` and any other
//! runtime that follows the rule. `--situation` appends the canonical situation of the facets
//! given (`|ctx:…`), as the recorder does, so a key can be built from its parts.
//!
//! Exit: 0 printed; 4 on an empty key, a malformed facet, a situation given both in the key
//! and by `--situation`, or a facet name given twice.

use std::collections::BTreeMap;

use anyhow::bail;
use framewise_analysis::footprint::{describe_footprint, footprint, FOOTPRINT_VERSION};
use framewise_analysis::situation::{canonical_situation, scrub_facet};
use serde::Serialize;

use crate::output::{self, OutputArgs, Report};
use crate::table::{inline, NONE};

/// `framewise footprint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The footprint key, exactly as hashed (e.g. `hitch|play|long-cpu-scope|section:physics`).
    pub key: String,
    /// A situation facet; the facets' canonical form is appended to the key as `|ctx:…`.
    /// Repeat for several.
    #[arg(long, value_name = "NAME=VALUE")]
    pub situation: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[])?;
    let key = full_key(&args.key, &args.situation)?;
    let view = FootprintView::new(&key);
    output::emit(&args.output, &view)?;
    Ok(0)
}

/// The key with the canonical situation of `facets` appended, after checking both.
fn full_key(key: &str, facets: &[String]) -> anyhow::Result<String> {
    if key.trim().is_empty() {
        bail!("the footprint key is empty or blank (give the key exactly as an incident record carries it, e.g. 'hitch|play|gpu-bound')");
    }
    if facets.is_empty() {
        return Ok(key.to_owned());
    }
    if key.split('|').any(|p| p.starts_with("ctx:")) {
        bail!(
            "the key already has a situation (a `ctx:` segment); drop --situation or the segment"
        );
    }
    let mut pairs: Vec<(&str, &str)> = Vec::with_capacity(facets.len());
    for facet in facets {
        match facet.split_once('=') {
            Some((name, _)) if pairs.iter().any(|&(n, _)| n == name) => bail!(
                "--situation {name}= is given twice: which value was meant? give each name once"
            ),
            // Names are compared as the situation writes them (scrubbed): `a b` and `a_b`
            // are one facet, and one of the two values would be dropped without a word.
            Some((name, value)) if !name.is_empty() => {
                let scrubbed = scrub_facet(name);
                if let Some(&(other, _)) = pairs.iter().find(|&&(n, _)| scrub_facet(n) == scrubbed)
                {
                    bail!(
                        "--situation names {other:?} and {name:?} are one facet, {scrubbed} (in a name, runs of `|`, `,`, `=` and whitespace become `_`): give each name once"
                    );
                }
                pairs.push((name, value));
            }
            _ => bail!("--situation {facet:?}: expected NAME=VALUE"),
        }
    }
    let situation = canonical_situation(pairs);
    Ok(if situation.is_empty() {
        key.to_owned()
    } else {
        format!("{key}|ctx:{situation}")
    })
}

/// The document `framewise footprint --format json` prints (docs/cli/footprint.md,
/// `framewise.footprint/1`).
#[derive(Clone, Debug, Serialize)]
struct FootprintView {
    schema: &'static str,
    footprint: FootprintJson,
    description: DescriptionJson,
}

/// `{v, id, key}`, as an incident record carries it.
#[derive(Clone, Debug, Serialize)]
struct FootprintJson {
    v: u32,
    id: String,
    key: String,
}

/// How the key reads.
#[derive(Clone, Debug, Serialize)]
struct DescriptionJson {
    glyph: &'static str,
    label: String,
    phase: String,
    situation: BTreeMap<String, String>,
}

impl FootprintView {
    fn new(key: &str) -> Self {
        let fp = footprint(FOOTPRINT_VERSION, key);
        let d = describe_footprint(key);
        Self {
            schema: "framewise.footprint/1",
            footprint: FootprintJson {
                v: fp.v,
                id: fp.id,
                key: fp.key,
            },
            description: DescriptionJson {
                glyph: d.glyph,
                label: d.label,
                phase: d.phase,
                situation: d.situation.into_iter().collect(),
            },
        }
    }

    fn situation_text(&self) -> String {
        if self.description.situation.is_empty() {
            return NONE.to_owned();
        }
        self.description
            .situation
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The rows under the id: key, reading, phase, situation.
    fn lines(&self) -> [(&'static str, String); 4] {
        [
            ("key", self.footprint.key.clone()),
            (
                "reads as",
                format!("{} {}", self.description.glyph, self.description.label),
            ),
            ("phase", self.phase_text().to_owned()),
            ("situation", self.situation_text()),
        ]
    }

    fn phase_text(&self) -> &str {
        if self.description.phase.is_empty() {
            NONE
        } else {
            &self.description.phase
        }
    }
}

impl Report for FootprintView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn console(&self, out: &mut String) {
        let fp = &self.footprint;
        out.push_str(&format!("footprint {} (v{})\n", fp.id, fp.v));
        for (name, value) in self.lines() {
            out.push_str(&format!("  {name:<10} {}\n", inline(&value)));
        }
    }

    fn markdown(&self, out: &mut String) {
        let fp = &self.footprint;
        out.push_str(&format!("**footprint `{}`** (v{})\n\n", fp.id, fp.v));
        for (name, value) in self.lines() {
            out.push_str(&format!("- {name}: {}\n", inline(&value)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn situation_is_appended_canonically() {
        let facets = vec!["view=fp".to_owned(), "stance=on foot".to_owned()];
        assert_eq!(
            full_key("hitch|play|gpu-bound", &facets).ok().as_deref(),
            Some("hitch|play|gpu-bound|ctx:stance=on_foot,view=fp")
        );
        assert!(full_key("", &[]).is_err());
        assert!(full_key("k", &["novalue".to_owned()]).is_err());
        assert!(full_key("k", &["=v".to_owned()]).is_err());
        assert!(full_key("k|ctx:a=b", &["c=d".to_owned()]).is_err());
        // Facets with empty values are left out; none left adds no segment.
        assert_eq!(full_key("k", &["a=".to_owned()]).ok().as_deref(), Some("k"));
    }
}
