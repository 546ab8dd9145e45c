//! # framewise-census — what a scene holds, what it costs, and how to measure it
//!
//! Who should use this crate: an engine integration (the Bevy plugin), which walks its scene
//! into a [`Census`] on demand (never per frame) and implements [`BisectEngine`] so
//! [`bisect()`] can measure what each candidate costs; the recorder (`framewise`), which
//! writes a census into the capture and into `.framewise/census.json`; and tools
//! (`framewise census`), which read censuses back and derive their [`hints()`]. It depends on
//! `std`, `serde` and `serde_json` only, so an engine plugin can link it without the CLI or
//! the analysis.
//!
//! ```
//! use framewise_census::*;
//!
//! let tree = |i: u32| EntryParts {
//!     id: format!("tree{i}"),
//!     name: "tree".into(),
//!     site: Some("src/forest.rs:12".into()),
//!     entities: 1,
//!     visible_entities: Some(1),
//!     draws: vec![Draw { mesh: "tree".into(), material: "bark".into(), instances: 1, shadow_casters: 1 }],
//!     batched: Some(false),
//! };
//! let census = Census::new(SceneParts {
//!     engine: "example".into(),
//!     entries: (0..10).map(tree).collect(),
//!     meshes: vec![MeshInfo { id: "tree".into(), name: "tree.glb".into(), triangles: 500, vertices: 300, bytes: None }],
//!     materials: vec![MaterialInfo { id: "bark".into(), name: "bark".into(), fingerprint: None, textures: vec![] }],
//!     ..SceneParts::default()
//! });
//! assert_eq!(census.totals.triangles, 5_000);
//! assert_eq!(census.totals.draw_calls, None, "only a rendered frame counts draw calls");
//! let found = hints(&[census]);
//! assert_eq!(found[0].kind, HintKind::InstancingCandidate);
//! assert_eq!(found[0].site, "src/forest.rs:12");
//! ```

#![forbid(unsafe_code)]

pub mod bisect;
pub mod file;
pub mod hints;
pub mod model;

pub use bisect::{
    bisect, parse_bisect, write_bisect_file, BisectEngine, BisectError, BisectOptions,
    BisectReadError, BisectReport, Candidate, CandidateResult, Delta, EngineError, FrameCost,
    Measure, Spread, Stat, WorldSnapshot, BISECT_FILE, BISECT_SCHEMA,
};
pub use file::{
    parse_census, parse_censuses, write_census_file, write_json_atomically, CensusFile, ReadError,
    CENSUS_FILE, CENSUS_FILE_SCHEMA,
};
pub use hints::{hints, Evidence, Hint, HintKind, SITE_UNKNOWN};
pub use model::{
    estimate_texture_bytes, AssetCounts, Census, CensusEntry, Draw, EntryParts, LightInfo,
    LightKind, MaterialInfo, MeshInfo, SceneParts, SharedGroup, TextureInfo, Totals, ViewInfo,
    CENSUS_SCHEMA,
};
