//! The issues catalogue: every incident of the ledger grouped by footprint, so the same
//! cause on Tuesday and on Friday, on two builds, is one row — with how often, when first
//! and last, on which builds, how bad at worst, the last verdict's evidence, the situation,
//! and the fixes recorded against it.

use std::collections::HashMap;

use framewise_detect::footprint::describe_footprint;
use serde::{Deserialize, Serialize};

use super::fix::FixRecord;
use super::{round_to, unix_ms_from_iso, Ledger};
use crate::record::{Guess, Record};
use crate::time::iso_from_unix_ms;

/// The catalogue document's schema id.
pub const CATALOGUE_SCHEMA: &str = "framewise.issues/1";

/// Which occurrences each issue lists (the counts always cover every one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Occurrences {
    /// None.
    #[default]
    None,
    /// Every occurrence (one issue's history, `framewise issues --fp ID`).
    All,
    /// The occurrences recorded by one session (a capture's own incidents: the inspector
    /// selects their frames).
    Session(String),
}

/// How to fold.
#[derive(Clone, Debug, Default)]
pub struct CatalogueOptions {
    /// Keep records stamped `automated` (bench and CI runs); left out by default.
    pub include_automated: bool,
    /// Count only occurrences at or after this instant (ms since the epoch).
    pub from_ms: Option<i64>,
    /// Count only occurrences at or before this instant.
    pub to_ms: Option<i64>,
    /// "Now", for each issue's `last_ago_ms`.
    pub now_ms: i64,
    /// Which occurrences to list.
    pub occurrences: Occurrences,
}

/// The catalogue: issues most frequent first (ties: most recent first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Catalogue {
    /// [`CATALOGUE_SCHEMA`].
    pub schema: String,
    /// Incident records folded.
    pub incidents: u64,
    /// Incident records left out because a robot made them (`automated`); 0 when they were
    /// asked for.
    pub automated_left_out: u64,
    /// The issues.
    pub issues: Vec<Issue>,
}

/// One footprint's row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    /// The footprint id as the records carry it: 8 lowercase hex digits when they were read
    /// from `perf.jsonl` (the reader lowercases an id written in capitals).
    pub id: String,
    /// The footprint key: exactly what was hashed.
    pub key: String,
    /// The record type (`hitch`, `usermark`, `jitter`).
    #[serde(rename = "type")]
    pub record_type: String,
    /// The glyph a row leads with (`⚡` hitch, `★` usermark, `↯` jitter).
    pub glyph: String,
    /// A short label read off the key (`hitch · long-cpu-scope · physics`).
    pub label: String,
    /// The phase the key names (`?` when the records named none).
    pub phase: String,
    /// The situation facets of the key, `[key, value]` pairs in key order.
    pub situation: Vec<[String; 2]>,
    /// Occurrences.
    pub count: u64,
    /// The first occurrence, ISO 8601 UTC.
    pub first: String,
    /// The last occurrence.
    pub last: String,
    /// Milliseconds from the last occurrence to "now" (negative when it lies ahead: a clock
    /// set wrong).
    pub last_ago_ms: i64,
    /// The builds it was seen on, in order of first sight.
    pub builds: Vec<String>,
    /// How bad it was at worst.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst: Option<Worst>,
    /// The last occurrence's best guess, with its evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_guess: Option<Guess>,
    /// The fixes whose `footprints` name this id, oldest first.
    pub fixes: Vec<FixRef>,
    /// The occurrences asked for ([`Occurrences`]), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub occurrences: Vec<Occurrence>,
}

/// The one number that says how bad an occurrence was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Worst {
    /// The number: a hitch's frame, a usermark's worst frame (ms); a jitter's jump or an
    /// oscillation's amplitude (host units).
    pub value: f64,
    /// `ms`, or a jitter's host unit label (the record's `unit`, e.g. `m`), else `units`.
    pub unit: String,
}

/// A fix recorded against an issue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FixRef {
    /// The fix's title.
    pub title: String,
    /// When it was recorded.
    pub at: String,
    /// The commit it names, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The hitch records per hour of play before and after, when both windows have a rate
    /// (their heartbeats said how long the game was played).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitches_per_hour: Option<[f64; 2]>,
    /// The frame p95 before and after (ms), when both windows had heartbeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<[f64; 2]>,
}

/// One occurrence of an issue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Occurrence {
    /// When.
    pub at: String,
    /// The session that recorded it (a capture's session id), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The frame it happened in (a usermark's: the frame open at the mark).
    pub frame: u64,
    /// The build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// How bad ([`Worst::value`], in the issue's unit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The best guess.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

/// How bad an incident was, with its unit.
fn worst_of(record: &Record) -> Option<Worst> {
    let (value, unit) = match record {
        Record::Hitch(r) => (r.frame_ms, "ms"),
        Record::Usermark(r) => (r.worst_frames.first()?.frame_ms, "ms"),
        Record::Jitter(r) if r.kind == "oscillation" => {
            (r.amplitude?, r.unit.as_deref().unwrap_or("units"))
        }
        Record::Jitter(r) => (r.units, r.unit.as_deref().unwrap_or("units")),
        Record::Heartbeat(_) | Record::SessionEnd(_) => return None,
    };
    value.is_finite().then(|| Worst {
        value: round_to(value, 3),
        unit: unit.to_owned(),
    })
}

/// The verdict an incident leads with: a usermark's is its worst frame's.
fn best_guess(record: &Record) -> Option<&Guess> {
    match record {
        Record::Hitch(r) => r.classification.first(),
        Record::Jitter(r) => r.classification.first(),
        Record::Usermark(r) => r.worst_frames.first()?.classification.first(),
        Record::Heartbeat(_) | Record::SessionEnd(_) => None,
    }
}

fn frame_of(record: &Record) -> u64 {
    match record {
        Record::Hitch(r) => r.frame,
        Record::Jitter(r) => r.frame,
        Record::Usermark(r) => r.frame,
        Record::Heartbeat(r) => r.frame,
        Record::SessionEnd(r) => r.frames,
    }
}

struct Group<'a> {
    id: &'a str,
    key: &'a str,
    record_type: &'static str,
    count: u64,
    first_ms: i64,
    last_ms: i64,
    builds: Vec<&'a str>,
    worst: Option<Worst>,
    last_guess: Option<&'a Guess>,
    occurrences: Vec<Occurrence>,
}

/// Folds `ledger`'s incidents by footprint, with the `fixes` recorded against each.
pub fn catalogue(
    ledger: &Ledger<'_>,
    fixes: &[FixRecord],
    options: &CatalogueOptions,
) -> Catalogue {
    let from_ms = options.from_ms.unwrap_or(i64::MIN);
    let to_ms = options.to_ms.unwrap_or(i64::MAX);
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let (mut incidents, mut automated_left_out) = (0u64, 0u64);
    for s in ledger.between(from_ms, to_ms) {
        let record = s.record;
        let Some(footprint) = record.footprint() else {
            continue;
        };
        let common = record.common();
        if common.automated && !options.include_automated {
            automated_left_out += 1;
            continue;
        }
        incidents += 1;
        let at = *index.entry(footprint.id.as_str()).or_insert_with(|| {
            groups.push(Group {
                id: &footprint.id,
                key: &footprint.key,
                record_type: record.type_name(),
                count: 0,
                first_ms: s.ms,
                last_ms: s.ms,
                builds: Vec::new(),
                worst: None,
                last_guess: None,
                occurrences: Vec::new(),
            });
            groups.len() - 1
        });
        let Some(g) = groups.get_mut(at) else {
            continue;
        };
        g.count += 1;
        g.first_ms = g.first_ms.min(s.ms);
        // The ledger is in time order, so this occurrence is the latest so far.
        g.last_ms = s.ms;
        g.last_guess = best_guess(record).or(g.last_guess);
        if let Some(build) = common.build.as_deref() {
            if !g.builds.contains(&build) {
                g.builds.push(build);
            }
        }
        let worst = worst_of(record);
        if let Some(w) = &worst {
            if g.worst.as_ref().is_none_or(|best| w.value > best.value) {
                g.worst = Some(w.clone());
            }
        }
        let listed = match &options.occurrences {
            Occurrences::None => false,
            Occurrences::All => true,
            Occurrences::Session(id) => common.session.as_deref() == Some(id.as_str()),
        };
        if listed {
            g.occurrences.push(Occurrence {
                at: common.at.clone(),
                session: common.session.clone(),
                frame: frame_of(record),
                build: common.build.clone(),
                value: worst.map(|w| w.value),
                guess: best_guess(record).map(|g| g.guess.clone()),
            });
        }
    }
    let mut issues: Vec<Issue> = groups
        .into_iter()
        .map(|g| {
            let description = describe_footprint(g.key);
            Issue {
                id: g.id.to_owned(),
                key: g.key.to_owned(),
                record_type: g.record_type.to_owned(),
                glyph: description.glyph.to_owned(),
                label: description.label,
                phase: description.phase,
                situation: description
                    .situation
                    .into_iter()
                    .map(|(k, v)| [k, v])
                    .collect(),
                count: g.count,
                first: iso_from_unix_ms(g.first_ms),
                last: iso_from_unix_ms(g.last_ms),
                last_ago_ms: options.now_ms - g.last_ms,
                builds: g.builds.iter().map(|b| (*b).to_owned()).collect(),
                worst: g.worst,
                last_guess: g.last_guess.cloned(),
                fixes: fixes_for(g.id, fixes),
                occurrences: g.occurrences,
            }
        })
        .collect();
    issues.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| b.last.cmp(&a.last)));
    Catalogue {
        schema: CATALOGUE_SCHEMA.to_owned(),
        incidents,
        automated_left_out,
        issues,
    }
}

/// The fixes that name `id`, oldest first.
fn fixes_for(id: &str, fixes: &[FixRecord]) -> Vec<FixRef> {
    let mut linked: Vec<(i64, FixRef)> = fixes
        .iter()
        // In any case: a hand-written fix line may name the id in capitals.
        .filter(|f| f.footprints.iter().any(|fp| fp.eq_ignore_ascii_case(id)))
        .map(|f| {
            let pair = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| [a, b]);
            let ms = unix_ms_from_iso(&f.at).unwrap_or(i64::MAX);
            let fix = FixRef {
                title: f.title.clone(),
                at: f.at.clone(),
                commit: f.commit.clone(),
                hitches_per_hour: pair(
                    f.before.summary.hitches_per_hour,
                    f.after.summary.hitches_per_hour,
                ),
                p95_ms: pair(f.before.summary.p95_ms, f.after.summary.p95_ms),
            };
            (ms, fix)
        })
        .collect();
    linked.sort_by_key(|(ms, _)| *ms);
    linked.into_iter().map(|(_, f)| f).collect()
}
