//! Golden footprint ids: stable across runs, machines and runtimes.
//!
//! Each expected id was computed outside this crate, by the JavaScript reference's rule
//! (`charCodeAt` over the string, `Math.imul` by the prime) run in Node, and is checked
//! again here by a tiny reference FNV-1a that shares no code with the implementation: its
//! own UTF-16 encoder and 64-bit arithmetic reduced modulo 2³².

use framewise_detect::footprint::{fnv1a32_utf16, footprint, FOOTPRINT_VERSION};
use framewise_detect::situation::canonical_situation;

/// The reference: FNV-1a 32 over UTF-16 code units, written from the definition.
fn reference_fnv1a32(text: &str) -> String {
    let mut units: Vec<u64> = Vec::new();
    for c in text.chars() {
        let cp = u64::from(u32::from(c));
        if cp < 0x1_0000 {
            units.push(cp);
        } else {
            let v = cp - 0x1_0000;
            units.push(0xD800 + (v >> 10));
            units.push(0xDC00 + (v & 0x3FF));
        }
    }
    let mut h: u64 = 2_166_136_261; // 0x811c9dc5
    for u in units {
        h ^= u;
        h = (h * 16_777_619) % (1 << 32); // 0x01000193
    }
    format!("{h:08x}")
}

/// (key, id of `v1:<key>`) as Node computed them.
const GOLDEN: &[(&str, &str)] = &[
    ("", "c2ecb316"),
    ("hitch|?|unclassified", "f7ab0627"),
    ("hitch|play|pipeline-compile", "b4c81308"),
    ("hitch|play|long-cpu-scope|section:physics", "3babb7c2"),
    (
        "hitch|play|long-cpu-scope|section:physics|ctx:stance=foot,view=fp",
        "6436b33c",
    ),
    ("hitch|boot|resource-upload", "238bbb6a"),
    (
        "hitch|play|gpu-bound|ctx:combat=yes,hull=elong-x,squad=duo",
        "1c4e55e5",
    ),
    ("hitch|menu|wait-outside-frame", "2899568a"),
    ("hitch|play|unknown-by-elimination", "56d40cca"),
    ("hitch|play|host-attributed|span:mesh:step", "a7012080"),
    ("hitch|play|pipeline-compile|?@b,stone@wall", "38799d4e"),
    ("usermark|play|spawn-burst", "b30ba312"),
    ("usermark|?|unclassified", "f8a78777"),
    ("jitter|unit|snap|play|snap|horizontal", "db6581b0"),
    (
        "jitter|camera|snap|play|follows-track|horizontal",
        "83bc1873",
    ),
    (
        "jitter|unit|oscillation|play|long-frame-catch-up|vertical",
        "7026c897",
    ),
    (
        "jitter|unit|snap|play|snap|horizontal|ctx:hull=elong-x,squad=duo,stance=helm",
        "d423dcef",
    ),
    ("warm|shaders|pipelines|boot", "70e7bf82"),
    ("gpu-stall|play", "e8ac9caf"),
    ("gpu-settle|uploads", "5c72e946"),
    // Non-ASCII in the Basic Multilingual Plane: one UTF-16 unit each.
    (
        "hitch|jeu|long-cpu-scope|section:physique_déformable",
        "f30719cd",
    ),
    (
        "hitch|play|long-cpu-scope|section:物理演算|ctx:場面=戦闘",
        "7071bc97",
    ),
    (
        "hitch|play|long-cpu-scope|section:Ünïcødé ✓ → ∞",
        "a62dcaf9",
    ),
    ("jitter|единица|snap|игра|snap|horizontal", "229724c9"),
    // Astral-plane characters: two UTF-16 units (a surrogate pair) each.
    ("hitch|play|long-cpu-scope|section:😀 emoji", "aa7c4b16"),
    ("hitch|play|gpu-bound|ctx:mood=🎮🔥,z=𝄞", "a313873b"),
    // The top of the BMP and the private-use area, around the surrogates.
    (
        "usermark|play|unclassified|ctx:k=\u{ffff}\u{e000}",
        "15a5dbcc",
    ),
];

#[test]
fn golden_ids_match_the_reference() {
    assert!(GOLDEN.len() >= 20);
    for (key, id) in GOLDEN {
        let fp = footprint(FOOTPRINT_VERSION, key);
        assert_eq!(fp.v, 1);
        assert_eq!(&fp.key, key);
        assert_eq!(&fp.id, id, "implementation, key {key:?}");
        assert_eq!(
            &reference_fnv1a32(&format!("v1:{key}")),
            id,
            "reference, key {key:?}"
        );
    }
}

#[test]
fn published_fnv1a32_vectors() {
    // The FNV authors' test vectors (ASCII: one UTF-16 unit per byte).
    assert_eq!(fnv1a32_utf16(""), 0x811c_9dc5);
    assert_eq!(fnv1a32_utf16("a"), 0xe40c_292c);
    assert_eq!(fnv1a32_utf16("foobar"), 0xbf9c_f968);
}

#[test]
fn utf16_is_not_utf8() {
    // "é" is one UTF-16 unit but two UTF-8 bytes: hashing bytes would give another id.
    let utf8 = {
        let mut h: u32 = 0x811c_9dc5;
        for b in "v1:é".bytes() {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
        format!("{h:08x}")
    };
    assert_ne!(footprint(1, "é").id, utf8);
    assert_eq!(footprint(1, "é").id, reference_fnv1a32("v1:é"));
}

#[test]
fn situations_match_the_reference() {
    // Expected strings computed by the reference's `canonicalContext` in Node.
    assert_eq!(
        canonical_situation([("view", "fp"), ("stance", "on foot"), ("crew", "")]),
        "stance=on_foot,view=fp"
    );
    assert_eq!(
        canonical_situation([("a|b", "x, y==z\t\u{3000}w")]),
        "a_b=x_y_z_w"
    );
    assert_eq!(
        canonical_situation([("k", "a\u{85}b\u{feff}c")]),
        "k=a\u{85}b_c"
    );
    assert_eq!(
        canonical_situation([("\u{ff5e}", "1"), ("\u{1f600}", "2")]),
        "\u{1f600}=2,\u{ff5e}=1"
    );
    assert_eq!(
        canonical_situation([
            ("hull", "Élan  lourd"),
            ("zone", "北 门"),
            ("combat", "yes")
        ]),
        "combat=yes,hull=Élan_lourd,zone=北_门"
    );
}
