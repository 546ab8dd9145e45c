//! Footprints: the identity of an incident's cause, apart from its occurrence.
//!
//! An incident record (a hitch, a usermark, a jitter…) says *when* something happened and how
//! bad it was. Two records on two days, two builds or two machines are often the same cause
//! seen again; the footprint is the part of a record that names that cause, so a catalogue
//! can fold records by it and fixes can be recorded against it.
//!
//! A footprint is `{ v, id, key }`:
//! - `key` is readable and is exactly what was hashed: the record type, the phase, the
//!   verdict, whatever identifies the site, and the host's situation (see
//!   [`crate::situation`]); never a time, a frame number, a build or a machine. The key
//!   builders live in [`crate::footprint_key`].
//! - `id` is FNV-1a 32 (offset basis `0x811c9dc5`, prime `0x01000193`) of `v<version>:<key>`,
//!   as 8 lowercase hex digits. The hash runs over the string's **UTF-16 code units** (not its
//!   UTF-8 bytes), as the JavaScript reference does with `charCodeAt`, so an id computed here
//!   and one computed by a browser agree for every key, non-ASCII included.
//! - `v` versions the derivation: a change to what enters a key is a new version, never a
//!   silent reshuffle of old ids.
//!
//! ```
//! use framewise_detect::footprint::{footprint, FOOTPRINT_VERSION};
//!
//! let fp = footprint(FOOTPRINT_VERSION, "hitch|play|pipeline-compile");
//! assert_eq!(fp.v, 1);
//! assert_eq!(fp.id.len(), 8);
//! assert_eq!(fp.key, "hitch|play|pipeline-compile");
//! ```

use crate::situation::context_of_key;

/// The current version of the key derivation.
pub const FOOTPRINT_VERSION: u32 = 1;

/// FNV-1a 32 offset basis.
const FNV_OFFSET_BASIS: u32 = 0x811c_9dc5;
/// FNV-1a 32 prime.
const FNV_PRIME: u32 = 0x0100_0193;

/// FNV-1a 32 over the UTF-16 code units of `text` (each unit XORed in whole, then one
/// multiplication by the prime, modulo 2³²). For ASCII text this is the classic byte-wise
/// FNV-1a; above U+007F it differs from hashing UTF-8 bytes, on purpose (module docs).
pub fn fnv1a32_utf16(text: &str) -> u32 {
    text.encode_utf16().fold(FNV_OFFSET_BASIS, |h, unit| {
        (h ^ u32::from(unit)).wrapping_mul(FNV_PRIME)
    })
}

/// A footprint: the version of the derivation, the id, and the key that was hashed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Footprint {
    /// The derivation's version ([`FOOTPRINT_VERSION`] for keys built here).
    pub v: u32,
    /// FNV-1a 32 of `v<v>:<key>`, 8 lowercase hex digits.
    pub id: String,
    /// Exactly what was hashed (after the `v<v>:` prefix).
    pub key: String,
}

/// The footprint of `key` under derivation `version`: the id is FNV-1a 32 of
/// `v<version>:<key>` over UTF-16 code units, as 8 lowercase hex digits.
pub fn footprint(version: u32, key: &str) -> Footprint {
    let hashed = format!("v{version}:{key}");
    Footprint {
        v: version,
        id: format!("{:08x}", fnv1a32_utf16(&hashed)),
        key: key.to_owned(),
    }
}

/// How a footprint key reads to a person: the glyph and short label every reader (a wake
/// line, a report row, the Issues panel) leads with, the phase, and the situation facets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    /// One character that marks the record type (`⚡` hitch, `★` usermark, `↯` jitter, …;
    /// `·` for a key of no known type).
    pub glyph: &'static str,
    /// A short label, e.g. `hitch · long-cpu-scope · physics`.
    pub label: String,
    /// The phase the key names (empty for types that carry none).
    pub phase: String,
    /// The situation facets of the key's `ctx:` segment, in the order written.
    pub situation: Vec<(String, String)>,
}

/// Describes a footprint key: its glyph, label, phase and situation facets. Keys of types
/// this module does not know are labelled by themselves.
pub fn describe_footprint(key: &str) -> Description {
    let parts: Vec<&str> = key.split('|').filter(|p| !p.starts_with("ctx:")).collect();
    let part = |i: usize| parts.get(i).copied().unwrap_or("?");
    let (glyph, label, phase) = match parts.first().copied().unwrap_or("") {
        "hitch" => (
            "⚡",
            format!(
                "hitch · {}{}",
                part(2),
                hitch_site_label(parts.get(3).copied())
            ),
            part(1),
        ),
        "usermark" => ("★", format!("usermark · {}", part(2)), part(1)),
        "jitter" => (
            "↯",
            format!(
                "jitter · {} {} · {} · {}",
                part(1),
                part(2),
                part(4),
                part(5)
            ),
            part(3),
        ),
        "warm" => ("🔥", format!("warm · {} ({})", part(1), part(2)), part(3)),
        "gpu-stall" => ("⏳", "gpu-process stall".to_owned(), part(1)),
        "gpu-settle" => ("⏳", format!("gpu-settle cap hit · {}", part(1)), ""),
        "error" => (
            "✖",
            format!(
                "error · {} · {}",
                part(2),
                crate::situation::truncate_utf16(parts.get(3).copied().unwrap_or(""), 60)
            ),
            "",
        ),
        "server-hitch" => (
            "▣",
            format!("server tick over budget · {}", part(2)),
            part(1),
        ),
        "server-stall" => ("▦", format!("event-loop stall · {}", part(2)), part(1)),
        _ => ("·", key.to_owned(), ""),
    };
    Description {
        glyph,
        label,
        phase: phase.to_owned(),
        situation: context_of_key(key),
    }
}

/// How a hitch key's site segment reads: a span or a section by name, mints by count.
fn hitch_site_label(site: Option<&str>) -> String {
    match site {
        None | Some("") => String::new(),
        Some(s) => {
            if let Some(label) = s.strip_prefix("span:") {
                format!(" · {label}")
            } else if let Some(label) = s.strip_prefix("section:") {
                format!(" · {label}")
            } else {
                format!(" · {} mint site(s)", s.split(',').count())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_follow_the_key_shape() {
        let d = describe_footprint("hitch|play|long-cpu-scope|section:physics|ctx:stance=foot");
        assert_eq!(d.glyph, "⚡");
        assert_eq!(d.label, "hitch · long-cpu-scope · physics");
        assert_eq!(d.phase, "play");
        assert_eq!(d.situation, vec![("stance".into(), "foot".into())]);

        let d = describe_footprint("jitter|camera|snap|play|follows-track|horizontal");
        assert_eq!(d.label, "jitter · camera snap · follows-track · horizontal");
        assert_eq!(d.phase, "play");
        assert!(d.situation.is_empty());

        let d = describe_footprint("hitch|boot|pipeline-compile|a@b,c@d");
        assert_eq!(d.label, "hitch · pipeline-compile · 2 mint site(s)");

        let d = describe_footprint("usermark|?|unclassified");
        assert_eq!(
            (d.glyph, d.label.as_str()),
            ("★", "usermark · unclassified")
        );

        let d = describe_footprint("something else");
        assert_eq!(
            (d.glyph, d.label.as_str(), d.phase.as_str()),
            ("·", "something else", "")
        );

        let d = describe_footprint("hitch");
        assert_eq!((d.label.as_str(), d.phase.as_str()), ("hitch · ?", "?"));
    }

    #[test]
    fn ids_are_eight_lowercase_hex_digits() {
        for key in ["", "a", "hitch|play|gpu-bound", "ünïcødé ✓ 😀"] {
            let fp = footprint(FOOTPRINT_VERSION, key);
            assert_eq!(fp.id.len(), 8, "{key}");
            assert!(fp
                .id
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        }
        assert_ne!(footprint(1, "k").id, footprint(2, "k").id);
    }
}
