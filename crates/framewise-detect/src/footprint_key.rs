//! Footprint keys: what of an incident record enters its footprint, built as the JavaScript
//! reference builds it so that the same record gets the same key (and id) in either runtime.
//!
//! A key is `|`-separated: the record type first, then the phase (`?` when the record has
//! none), the verdict (the top guess, `unclassified` when there is none) and the site, in a
//! per-type order, and last the situation as `ctx:<canonical situation>` when there is one:
//!
//! | record | key |
//! |---|---|
//! | hitch | `hitch|<phase>|<top guess>[|<site>]` |
//! | usermark | `usermark|<phase>|<top guess of the worst frame>` |
//! | jitter | `jitter|<track>|<kind>|<phase>|<top guess>|<vertical, horizontal or unknown>` |
//! | warm | `warm|<tag>|<kind>|<phase>` |
//! | gpu-stall | `gpu-stall|<phase>` |
//! | gpu-settle (cap hit only) | `gpu-settle|<tag>` |
//!
//! A hitch's site, first that applies: `span:<label>` when the top guess is
//! `host-attributed` and the host named the span; the minted `material@object` pairs,
//! deduplicated and sorted; `section:<label>` for the loop section (in framewise: the scope)
//! whose time was most above its baseline. Labels are trimmed, `|` and `,` become `_`, and
//! they are cut to 60 UTF-16 code units. Never a time, a frame number, a build or a machine.
//!
//! ```
//! use framewise_detect::footprint_key::{footprint_key, HitchKey, KeyRecord};
//!
//! let hitch = KeyRecord::Hitch(HitchKey {
//!     phase: Some("play"),
//!     guess: Some("long-cpu-scope"),
//!     section: Some("physics"),
//!     ..HitchKey::default()
//! });
//! assert_eq!(
//!     footprint_key(&hitch, "stance=foot").as_deref(),
//!     Some("hitch|play|long-cpu-scope|section:physics|ctx:stance=foot")
//! );
//! ```

use crate::footprint::{footprint, Footprint, FOOTPRINT_VERSION};
use crate::situation::{cmp_utf16, trim_js, truncate_utf16};

/// A hitch's site label is cut to this many UTF-16 code units.
pub const SITE_MAX_UNITS: usize = 60;

/// One minted material: the `material@object` pair a compile names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mint<'a> {
    /// The material (`?` when unknown).
    pub material: Option<&'a str>,
    /// The object it was minted for (`?` when unknown).
    pub object: Option<&'a str>,
}

/// What of a hitch record enters its key.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HitchKey<'a> {
    /// The phase the frame was in.
    pub phase: Option<&'a str>,
    /// The top guess of the classification.
    pub guess: Option<&'a str>,
    /// The label of the largest span the host attributed (used when the guess is
    /// `host-attributed`).
    pub attributed_span: Option<&'a str>,
    /// Materials the frame minted.
    pub mints: &'a [Mint<'a>],
    /// The section (scope) whose time was most above its baseline.
    pub section: Option<&'a str>,
}

/// What of a jitter record enters its key.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JitterKey<'a> {
    /// The track that jumped.
    pub track: Option<&'a str>,
    /// `snap` or `oscillation`.
    pub kind: Option<&'a str>,
    /// The phase.
    pub phase: Option<&'a str>,
    /// The top guess of the classification.
    pub guess: Option<&'a str>,
    /// The jump (off-trajectory displacement), x y z with y up.
    pub jump: Option<[f64; 3]>,
}

/// An incident record, as far as its key is concerned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyRecord<'a> {
    /// A frame over the hitch bar.
    Hitch(HitchKey<'a>),
    /// A human's mark over a trailing window: keyed by the worst frame's top guess.
    Usermark {
        /// The phase.
        phase: Option<&'a str>,
        /// The top guess of the worst frame in the window.
        worst_guess: Option<&'a str>,
    },
    /// A tracked point that left its trajectory.
    Jitter(JitterKey<'a>),
    /// A warm-up the host ran.
    Warm {
        /// The host's tag.
        tag: Option<&'a str>,
        /// The kind of warm.
        kind: Option<&'a str>,
        /// The phase.
        phase: Option<&'a str>,
    },
    /// The GPU process stalled.
    GpuStall {
        /// The phase.
        phase: Option<&'a str>,
    },
    /// A GPU settle wait; only a cap hit (`settled: false`) is an incident.
    GpuSettle {
        /// The host's tag.
        tag: Option<&'a str>,
        /// Whether the wait settled before its cap.
        settled: bool,
    },
}

/// The dominant axis of a jump: `vertical` when |y| is at least 0.7 of its length,
/// `horizontal` otherwise, `unknown` without a jump or for a zero one. Non-finite
/// components count as 0.
pub fn jump_axis(jump: Option<[f64; 3]>) -> &'static str {
    let Some(j) = jump else { return "unknown" };
    let [x, y, z] = j.map(|n| if n.is_finite() { n.abs() } else { 0.0 });
    let mag = (x * x + y * y + z * z).sqrt();
    if mag == 0.0 {
        "unknown"
    } else if y >= 0.7 * mag {
        "vertical"
    } else {
        "horizontal"
    }
}

/// A site label as it enters a key: trimmed, `|` and `,` replaced by `_`, cut to
/// [`SITE_MAX_UNITS`] UTF-16 code units; `None` when nothing is left.
fn site_label(label: Option<&str>) -> Option<String> {
    let trimmed = trim_js(label?);
    if trimmed.is_empty() {
        return None;
    }
    let replaced = trimmed.replace(['|', ','], "_");
    Some(truncate_utf16(&replaced, SITE_MAX_UNITS).to_owned())
}

/// A hitch's site (module docs), or `None`.
fn hitch_site(h: &HitchKey<'_>) -> Option<String> {
    if h.guess == Some("host-attributed") {
        if let Some(label) = site_label(h.attributed_span) {
            return Some(format!("span:{label}"));
        }
    }
    if !h.mints.is_empty() {
        let mut ids: Vec<String> = h
            .mints
            .iter()
            .map(|m| format!("{}@{}", m.material.unwrap_or("?"), m.object.unwrap_or("?")))
            .collect();
        ids.sort_by(|a, b| cmp_utf16(a, b));
        ids.dedup();
        return Some(ids.join(","));
    }
    site_label(h.section).map(|label| format!("section:{label}"))
}

/// The key of a record without its situation, or `None` for a record that is no incident.
fn base_key(record: &KeyRecord<'_>) -> Option<String> {
    let ph = |p: Option<&str>| p.unwrap_or("?").to_owned();
    let q = |s: Option<&str>| s.unwrap_or("?").to_owned();
    let guess = |g: Option<&str>| g.unwrap_or("unclassified").to_owned();
    Some(match record {
        KeyRecord::Hitch(h) => {
            let mut key = format!("hitch|{}|{}", ph(h.phase), guess(h.guess));
            if let Some(site) = hitch_site(h) {
                key.push('|');
                key.push_str(&site);
            }
            key
        }
        KeyRecord::Usermark { phase, worst_guess } => {
            format!("usermark|{}|{}", ph(*phase), guess(*worst_guess))
        }
        KeyRecord::Jitter(j) => format!(
            "jitter|{}|{}|{}|{}|{}",
            q(j.track),
            q(j.kind),
            ph(j.phase),
            guess(j.guess),
            jump_axis(j.jump)
        ),
        KeyRecord::Warm { tag, kind, phase } => {
            format!("warm|{}|{}|{}", q(*tag), q(*kind), ph(*phase))
        }
        KeyRecord::GpuStall { phase } => format!("gpu-stall|{}", ph(*phase)),
        KeyRecord::GpuSettle { tag, settled } => {
            if *settled {
                return None;
            }
            format!("gpu-settle|{}", q(*tag))
        }
    })
}

/// The readable key of a record's footprint, its canonical situation (see
/// [`crate::situation::canonical_situation`]; `""` for none) appended as `|ctx:…`; `None`
/// for a record that is no incident (a GPU settle that settled).
pub fn footprint_key(record: &KeyRecord<'_>, situation: &str) -> Option<String> {
    let base = base_key(record)?;
    Some(if situation.is_empty() {
        base
    } else {
        format!("{base}|ctx:{situation}")
    })
}

/// The footprint of a record at the current version ([`FOOTPRINT_VERSION`]); `None` when the
/// record is no incident.
pub fn footprint_of(record: &KeyRecord<'_>, situation: &str) -> Option<Footprint> {
    footprint_key(record, situation).map(|key| footprint(FOOTPRINT_VERSION, &key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(r: KeyRecord<'_>) -> String {
        footprint_key(&r, "").unwrap_or_default()
    }

    #[test]
    fn hitch_keys_pick_the_site_in_order() {
        let mints = [
            Mint {
                material: Some("stone"),
                object: Some("wall"),
            },
            Mint {
                material: None,
                object: Some("b"),
            },
            Mint {
                material: Some("stone"),
                object: Some("wall"),
            },
        ];
        let base = HitchKey {
            phase: Some("play"),
            guess: Some("host-attributed"),
            attributed_span: Some("  mesh|step, 2 "),
            mints: &mints,
            section: Some("physics"),
        };
        assert_eq!(
            key(KeyRecord::Hitch(base)),
            "hitch|play|host-attributed|span:mesh_step_ 2"
        );
        let not_host = HitchKey {
            guess: Some("pipeline-compile"),
            ..base
        };
        assert_eq!(
            key(KeyRecord::Hitch(not_host)),
            "hitch|play|pipeline-compile|?@b,stone@wall"
        );
        let no_mints = HitchKey {
            mints: &[],
            ..not_host
        };
        assert_eq!(
            key(KeyRecord::Hitch(no_mints)),
            "hitch|play|pipeline-compile|section:physics"
        );
        let blank = HitchKey {
            section: Some(" \t"),
            ..no_mints
        };
        assert_eq!(key(KeyRecord::Hitch(blank)), "hitch|play|pipeline-compile");
        assert_eq!(
            key(KeyRecord::Hitch(HitchKey::default())),
            "hitch|?|unclassified"
        );
        let long = "s".repeat(70);
        let long_section = HitchKey {
            section: Some(&long),
            ..HitchKey::default()
        };
        assert_eq!(
            key(KeyRecord::Hitch(long_section)),
            format!("hitch|?|unclassified|section:{}", "s".repeat(60))
        );
    }

    #[test]
    fn other_record_types() {
        assert_eq!(
            key(KeyRecord::Usermark {
                phase: Some("play"),
                worst_guess: None
            }),
            "usermark|play|unclassified"
        );
        let jitter = JitterKey {
            track: Some("unit"),
            kind: Some("snap"),
            phase: Some("play"),
            guess: Some("snap"),
            jump: Some([0.6, 0.3, 0.0]),
        };
        assert_eq!(
            key(KeyRecord::Jitter(jitter)),
            "jitter|unit|snap|play|snap|horizontal"
        );
        let up = JitterKey {
            jump: Some([0.1, -2.0, 0.2]),
            ..jitter
        };
        assert_eq!(
            key(KeyRecord::Jitter(up)),
            "jitter|unit|snap|play|snap|vertical"
        );
        assert_eq!(
            key(KeyRecord::Jitter(JitterKey::default())),
            "jitter|?|?|?|unclassified|unknown"
        );
        assert_eq!(
            key(KeyRecord::Warm {
                tag: Some("shaders"),
                kind: None,
                phase: None
            }),
            "warm|shaders|?|?"
        );
        assert_eq!(key(KeyRecord::GpuStall { phase: Some("") }), "gpu-stall|");
        let settled = KeyRecord::GpuSettle {
            tag: Some("t"),
            settled: true,
        };
        assert_eq!(footprint_key(&settled, "a=b"), None);
        assert_eq!(
            footprint_key(
                &KeyRecord::GpuSettle {
                    tag: Some("t"),
                    settled: false
                },
                "a=b"
            )
            .as_deref(),
            Some("gpu-settle|t|ctx:a=b")
        );
    }

    #[test]
    fn axis_edge_cases() {
        assert_eq!(jump_axis(Some([0.0, 0.0, 0.0])), "unknown");
        assert_eq!(jump_axis(Some([f64::NAN, 1.0, 0.0])), "vertical");
        assert_eq!(jump_axis(Some([1.0, 0.7, 0.0])), "horizontal");
        assert_eq!(jump_axis(None), "unknown");
    }
}
