//! The environment harness: lets a driver (`framewise bench`, CI) record any instrumented
//! program without code changes, as long as the program calls [`Session::from_env`].
//!
//! | variable | meaning |
//! |---|---|
//! | `FRAMEWISE_CAPTURE` | capture path; no session starts without it |
//! | `FRAMEWISE_FRAMES` | `frame_limit`: stop after this many frames |
//! | `FRAMEWISE_LEVEL` | capture level: `timing`/`structure`/`workload`/`verbose` or `0`–`3` |
//! | `FRAMEWISE_NOTE` | note stored in META |
//! | `FRAMEWISE_BUILD` | build id stored in META |
//! | `FRAMEWISE_WRITER` | `lossless` (default under the harness) or `realtime` |
//! | `FRAMEWISE_FIXED_DT` | seconds in (0, 1): the host pins its simulation step ([`Session::fixed_dt`]) |
//! | `FRAMEWISE_GOLDEN_FRAME` | frame index whose image the host writes ([`Session::golden_frame`]) |
//! | `FRAMEWISE_SEED` | seed the host starts its world from ([`Session::seed`]) |
//! | `FRAMEWISE_RESOLUTION` | `WIDTHxHEIGHT` the host renders at ([`Session::resolution`]) |
//!
//! The recorder itself acts on the first six; the last four are the host's to act on (the
//! session hands them back and stores them in META's settings, so a capture says what it was
//! asked for). A host that ignores one of them is not comparable across those settings.
//!
//! Every session also reads two variables of the incident log, whatever started it:
//! `FRAMEWISE_DIR` (the `.framewise/` directory the log goes to) and `FRAMEWISE_AUTOMATED`
//! (its records are stamped `automated`); [`OTHERS`] lists them with those the integrations
//! read. A `FRAMEWISE_*` variable that none of these names is most likely misspelt: a session
//! warns once per process about each ([`unknown_variables`]), naming the nearest known name,
//! and `framewise doctor` lists them.
//!
//! [`Session::from_env`]: crate::Session::from_env
//! [`Session::fixed_dt`]: crate::Session::fixed_dt
//! [`Session::golden_frame`]: crate::Session::golden_frame
//! [`Session::seed`]: crate::Session::seed
//! [`Session::resolution`]: crate::Session::resolution

use std::path::PathBuf;
use std::time::Duration;

use crate::error::StartError;
use crate::writer::WriterMode;
use crate::CaptureLevel;

/// `FRAMEWISE_CAPTURE`.
pub const CAPTURE: &str = "FRAMEWISE_CAPTURE";
/// `FRAMEWISE_FRAMES`.
pub const FRAMES: &str = "FRAMEWISE_FRAMES";
/// `FRAMEWISE_LEVEL`.
pub const LEVEL: &str = "FRAMEWISE_LEVEL";
/// `FRAMEWISE_NOTE`.
pub const NOTE: &str = "FRAMEWISE_NOTE";
/// `FRAMEWISE_BUILD`.
pub const BUILD: &str = "FRAMEWISE_BUILD";
/// `FRAMEWISE_WRITER`.
pub const WRITER: &str = "FRAMEWISE_WRITER";
/// `FRAMEWISE_FIXED_DT`.
pub const FIXED_DT: &str = "FRAMEWISE_FIXED_DT";
/// `FRAMEWISE_GOLDEN_FRAME`.
pub const GOLDEN_FRAME: &str = "FRAMEWISE_GOLDEN_FRAME";
/// `FRAMEWISE_SEED`.
pub const SEED: &str = "FRAMEWISE_SEED";
/// `FRAMEWISE_RESOLUTION`.
pub const RESOLUTION: &str = "FRAMEWISE_RESOLUTION";

/// Every variable the harness reads, in the order of the table above (`framewise doctor`
/// lists those that are set).
pub const ALL: [&str; 10] = [
    CAPTURE,
    FRAMES,
    LEVEL,
    NOTE,
    BUILD,
    WRITER,
    FIXED_DT,
    GOLDEN_FRAME,
    SEED,
    RESOLUTION,
];

/// `FRAMEWISE_DIR`: the incident log's directory (`framewise_incidents::locate`).
pub const DIR: &str = "FRAMEWISE_DIR";
/// `FRAMEWISE_AUTOMATED`: the incident log's records are stamped `automated`
/// (`framewise_incidents::derive::automated_from_env`).
pub const AUTOMATED: &str = "FRAMEWISE_AUTOMATED";

/// The `FRAMEWISE_*` variables framewise reads besides [`ALL`]: the incident log's two, which
/// every session reads, then framewise-bevy's `FRAMEWISE_BISECT_AT` and framewise-wgpu's
/// `FRAMEWISE_REQUIRE_GPU`.
pub const OTHERS: [&str; 4] = [
    DIR,
    AUTOMATED,
    "FRAMEWISE_BISECT_AT",
    "FRAMEWISE_REQUIRE_GPU",
];

/// Prefixes (and names) of the knobs framewise's own benchmarks and tests read: never
/// reported as unknown, so that recording under them stays quiet.
const DEVELOPMENT: [&str; 10] = [
    "FRAMEWISE_BENCH_",
    "FRAMEWISE_DEMO_BENCH_",
    "FRAMEWISE_TEST_",
    "FRAMEWISE_BEVY_TEST_",
    "FRAMEWISE_INCIDENTS_TEST_",
    "FRAMEWISE_OUTPUT_",
    "FRAMEWISE_MEASURE_",
    "FRAMEWISE_BROWSER_",
    "FRAMEWISE_REQUIRE_",
    "FRAMEWISE_CHROMIUM",
];

/// The largest width or height `FRAMEWISE_RESOLUTION` accepts, pixels.
pub const MAX_RESOLUTION_PX: u32 = 16_384;

/// What the environment asked for; every field `None` when its variable is unset.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct EnvConfig {
    /// `FRAMEWISE_CAPTURE`.
    pub capture: Option<PathBuf>,
    /// `FRAMEWISE_FRAMES`.
    pub frames: Option<u64>,
    /// `FRAMEWISE_LEVEL`.
    pub level: Option<CaptureLevel>,
    /// `FRAMEWISE_NOTE`.
    pub note: Option<String>,
    /// `FRAMEWISE_BUILD`.
    pub build: Option<String>,
    /// `FRAMEWISE_WRITER`.
    pub writer_mode: Option<WriterMode>,
    /// `FRAMEWISE_FIXED_DT`.
    pub fixed_dt: Option<Duration>,
    /// `FRAMEWISE_GOLDEN_FRAME`.
    pub golden_frame: Option<u64>,
    /// `FRAMEWISE_SEED`.
    pub seed: Option<u64>,
    /// `FRAMEWISE_RESOLUTION`: (width, height) in pixels, each in 1..=[`MAX_RESOLUTION_PX`].
    pub resolution: Option<(u32, u32)>,
}

impl EnvConfig {
    /// Reads the process environment. A variable that is set but does not parse is an error,
    /// never silently ignored (the first such, in the order of [`ALL`]; [`EnvConfig::read`]
    /// gives every one).
    pub fn from_env() -> Result<Self, StartError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads variables through `lookup` (for tests and embedders with their own settings).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, StartError> {
        let (config, errors) = Self::read(lookup);
        match errors.into_iter().next() {
            Some(error) => Err(error),
            None => Ok(config),
        }
    }

    /// Reads every variable on its own: what read, and an error for each variable set that
    /// does not parse, in the order of [`ALL`] (`framewise doctor` reports them all).
    pub fn read(lookup: impl Fn(&str) -> Option<String>) -> (Self, Vec<StartError>) {
        let get = |name: &str| lookup(name).filter(|value| !value.is_empty());
        let mut errors = Vec::new();
        let mut read = ReadVars {
            errors: &mut errors,
        };
        let frames = read.var(get(FRAMES), FRAMES, |value| {
            value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|frames| *frames > 0)
                .ok_or("expected a frame count above 0")
        });
        let level = read.var(get(LEVEL), LEVEL, |value| {
            parse_level(value).ok_or("expected timing, structure, workload, verbose or 0-3")
        });
        let writer_mode = read.var(get(WRITER), WRITER, |value| {
            match value.trim().to_ascii_lowercase().as_str() {
                "lossless" => Ok(WriterMode::Lossless),
                "realtime" => Ok(WriterMode::Realtime),
                _ => Err("expected lossless or realtime"),
            }
        });
        let fixed_dt = read.var(get(FIXED_DT), FIXED_DT, |value| {
            parse_fixed_dt(value).ok_or(
                "expected a step in seconds from 1 ns to under 1 s, e.g. 0.016666 \
                 (as demo --fixed-dt and a bench's fixed_dt)",
            )
        });
        let golden_frame = read.var(get(GOLDEN_FRAME), GOLDEN_FRAME, |value| {
            value
                .trim()
                .parse::<u64>()
                .map_err(|_| "expected a frame index")
        });
        let seed = read.var(get(SEED), SEED, |value| {
            value
                .trim()
                .parse::<u64>()
                .map_err(|_| "expected an unsigned 64-bit integer")
        });
        let resolution = read.var(get(RESOLUTION), RESOLUTION, |value| {
            parse_resolution(value).ok_or("expected WIDTHxHEIGHT in pixels, e.g. 1280x720")
        });
        let config = Self {
            capture: get(CAPTURE).map(PathBuf::from),
            frames,
            level,
            note: get(NOTE),
            build: get(BUILD),
            writer_mode,
            fixed_dt,
            golden_frame,
            seed,
            resolution,
        };
        (config, errors)
    }
}

/// Collects the errors of the variables [`EnvConfig::read`] parses.
struct ReadVars<'a> {
    errors: &'a mut Vec<StartError>,
}

impl ReadVars<'_> {
    /// `value` of `var` parsed, or `None` with the error kept when it does not parse.
    fn var<T>(
        &mut self,
        value: Option<String>,
        var: &'static str,
        parse: impl FnOnce(&str) -> Result<T, &'static str>,
    ) -> Option<T> {
        let value = value?;
        match parse(&value) {
            Ok(parsed) => Some(parsed),
            Err(reason) => {
                self.errors.push(StartError::Env {
                    var,
                    value,
                    reason: reason.to_owned(),
                });
                None
            }
        }
    }
}

/// A simulation step in seconds, in (0, 1) as `demo --fixed-dt` and a bench's `fixed_dt`
/// take it, and at least a nanosecond (a shorter step rounds to zero: time would stand
/// still).
pub fn parse_fixed_dt(value: &str) -> Option<Duration> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite() && *seconds > 0.0 && *seconds < 1.0)
        .map(Duration::from_secs_f64)
        .filter(|step| !step.is_zero())
}

/// Whether framewise reads a variable of this name: one of [`ALL`] or [`OTHERS`], or a knob
/// of framewise's own benchmarks and tests.
pub fn is_known(name: &str) -> bool {
    ALL.contains(&name)
        || OTHERS.contains(&name)
        || DEVELOPMENT.iter().any(|prefix| name.starts_with(prefix))
}

/// A `FRAMEWISE_*` variable framewise does not read, with the known name nearest to it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownVariable {
    /// The variable's name as set (control characters escaped, so that it prints on one
    /// line).
    pub name: String,
    /// The known name within a few edits of it, if any: what it was probably meant to be.
    pub nearest: Option<&'static str>,
}

impl std::fmt::Display for UnknownVariable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is no variable framewise reads", self.name)?;
        if let Some(nearest) = self.nearest {
            write!(f, " (did you mean {nearest}?)")?;
        }
        Ok(())
    }
}

/// The variables among `names` that look like framewise's (`FRAMEWISE_` in any case) but that
/// it does not read ([`is_known`]), sorted by name.
pub fn unknown_variables(
    names: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<UnknownVariable> {
    let mut unknown: Vec<UnknownVariable> = names
        .into_iter()
        .filter_map(|name| {
            let name = name.to_string_lossy().into_owned();
            let upper = name.to_ascii_uppercase();
            if !upper.starts_with("FRAMEWISE_") || is_known(&name) {
                return None;
            }
            Some(UnknownVariable {
                nearest: nearest_known(&upper),
                name: name
                    .chars()
                    .map(|c| {
                        if c.is_control() {
                            c.escape_default().to_string()
                        } else {
                            c.to_string()
                        }
                    })
                    .collect(),
            })
        })
        .collect();
    unknown.sort_by(|a, b| a.name.cmp(&b.name));
    unknown
}

/// [`unknown_variables`] of this process's environment.
pub fn unknown_variables_in_env() -> Vec<UnknownVariable> {
    unknown_variables(std::env::vars_os().map(|(name, _)| name))
}

/// The known name nearest to `name` (upper case), when a few edits make one of the other: a
/// typo, a letter dropped or doubled, a case slip.
fn nearest_known(name: &str) -> Option<&'static str> {
    ALL.iter()
        .chain(OTHERS.iter())
        .map(|known| (strsim::levenshtein(name, known), *known))
        .filter(|(distance, known)| {
            // A quarter of the name's own part, from 1 to 3 edits: `FRAMEWISE_DIR` is 1 edit
            // from `FRAMEWISE_DIRS`, not from `FRAMEWISE_ID`.
            *distance <= (known.len() - "FRAMEWISE_".len()).div_ceil(4).clamp(1, 3)
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
}

/// `WIDTHxHEIGHT` (an `x` or `X`), each side in 1..=[`MAX_RESOLUTION_PX`].
pub fn parse_resolution(value: &str) -> Option<(u32, u32)> {
    let (w, h) = value.trim().split_once(['x', 'X'])?;
    let side = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|px| (1..=MAX_RESOLUTION_PX).contains(px))
    };
    Some((side(w)?, side(h)?))
}

fn parse_level(value: &str) -> Option<CaptureLevel> {
    let value = value.trim().to_ascii_lowercase();
    if let Ok(number) = value.parse::<u8>() {
        return CaptureLevel::from_u8(number);
    }
    [
        CaptureLevel::Timing,
        CaptureLevel::Structure,
        CaptureLevel::Workload,
        CaptureLevel::Verbose,
    ]
    .into_iter()
    .find(|level| level.name() == value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn all_is_the_documented_table() {
        let documented: Vec<&str> = include_str!("env.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! | `"))
            .filter_map(|l| l.split('`').next())
            .filter(|name| name.starts_with("FRAMEWISE_"))
            .collect();
        assert_eq!(documented, ALL);
    }

    fn read(vars: &[(&str, &str)]) -> Result<EnvConfig, StartError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        EnvConfig::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn reads_every_variable() {
        let env = read(&[
            (CAPTURE, "/tmp/run.sgpt"),
            (FRAMES, "600"),
            (LEVEL, "workload"),
            (NOTE, "after fix"),
            (BUILD, "abc123"),
            (WRITER, "realtime"),
            (FIXED_DT, "0.016"),
            (GOLDEN_FRAME, "120"),
            (SEED, "42"),
            (RESOLUTION, "320x180"),
        ])
        .expect("valid environment");
        assert_eq!(env.capture, Some(PathBuf::from("/tmp/run.sgpt")));
        assert_eq!(env.frames, Some(600));
        assert_eq!(env.level, Some(CaptureLevel::Workload));
        assert_eq!(env.note.as_deref(), Some("after fix"));
        assert_eq!(env.build.as_deref(), Some("abc123"));
        assert_eq!(env.writer_mode, Some(WriterMode::Realtime));
        assert_eq!(env.fixed_dt, Some(Duration::from_secs_f64(0.016)));
        assert_eq!(env.golden_frame, Some(120));
        assert_eq!(env.seed, Some(42));
        assert_eq!(env.resolution, Some((320, 180)));
        assert_eq!(
            read(&[(LEVEL, "1")]).expect("numeric level").level,
            Some(CaptureLevel::Structure)
        );
    }

    #[test]
    fn unset_is_none_and_bad_values_are_errors() {
        assert_eq!(read(&[]).expect("empty environment"), EnvConfig::default());
        for (var, value) in [
            (FRAMES, "many"),
            (FRAMES, "0"),
            (LEVEL, "7"),
            (WRITER, "fast"),
            (FIXED_DT, "-1"),
            (FIXED_DT, "0.0000000000000002"),
            (FIXED_DT, "1e-10"),
            // One range everywhere: `demo --fixed-dt` and a bench's `fixed_dt` take (0, 1).
            (FIXED_DT, "1"),
            (FIXED_DT, "100"),
            (FIXED_DT, "3599"),
            (GOLDEN_FRAME, "x"),
            (SEED, "-3"),
            (RESOLUTION, "1280"),
            (RESOLUTION, "0x720"),
            (RESOLUTION, "99999x10"),
            (RESOLUTION, "wide"),
        ] {
            match read(&[(var, value)]) {
                Err(StartError::Env { var: v, .. }) => assert_eq!(v, var),
                other => panic!("{var}={value}: expected an error, got {other:?}"),
            }
        }
    }

    #[test]
    fn the_fixed_step_takes_the_range_of_the_demo_and_the_benches() {
        for (value, seconds) in [("0.016666", 0.016666), ("0.5", 0.5), (" 0.999 ", 0.999)] {
            let env = read(&[(FIXED_DT, value)]).expect(value);
            assert_eq!(
                env.fixed_dt,
                Some(Duration::from_secs_f64(seconds)),
                "{value}"
            );
        }
        let refused = read(&[(FIXED_DT, "100")]).expect_err("100 s");
        assert_eq!(
            refused.to_string(),
            "environment variable FRAMEWISE_FIXED_DT=\"100\": expected a step in seconds from \
             1 ns to under 1 s, e.g. 0.016666 (as demo --fixed-dt and a bench's fixed_dt)"
        );
    }

    #[test]
    fn every_variable_that_does_not_parse_is_reported() {
        let map: HashMap<&str, &str> = [(SEED, "abc"), (FRAMES, "0"), (LEVEL, "workload")]
            .into_iter()
            .collect();
        let (env, errors) = EnvConfig::read(|name| map.get(name).map(|v| (*v).to_owned()));
        let vars: Vec<&str> = errors
            .iter()
            .map(|e| match e {
                StartError::Env { var, .. } => *var,
                other => panic!("{other}"),
            })
            .collect();
        // In the order of ALL, the variables that read kept.
        assert_eq!(vars, [FRAMES, SEED]);
        assert_eq!(env.level, Some(CaptureLevel::Workload));
        // `from_lookup` refuses with the first.
        match read(&[(SEED, "abc"), (FRAMES, "0")]) {
            Err(StartError::Env { var, .. }) => assert_eq!(var, FRAMES),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_variable_is_named_with_the_nearest_known_one() {
        let names = [
            "FRAMEWISE_FRAMS",
            "FRAMEWISE_FRAMES",
            "FRAMEWISE_DIR",
            "FRAMEWISE_AUTOMATED",
            "FRAMEWISE_BISECT_AT",
            "FRAMEWISE_BENCH_ROUNDS",
            "FRAMEWISE_TEST_CRASH_CAPTURE",
            "framewise_seed",
            "FRAMEWISE_COLOUR",
            "FRAMEWISE_RESOLUTON",
            "FRAMEWISE_X\nY",
            "PATH",
            "NOT_FRAMEWISE_FRAMES",
        ];
        let unknown = unknown_variables(names.iter().map(std::ffi::OsString::from));
        let shown: Vec<String> = unknown.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "FRAMEWISE_COLOUR is no variable framewise reads",
                "FRAMEWISE_FRAMS is no variable framewise reads (did you mean FRAMEWISE_FRAMES?)",
                "FRAMEWISE_RESOLUTON is no variable framewise reads (did you mean \
                 FRAMEWISE_RESOLUTION?)",
                "FRAMEWISE_X\\nY is no variable framewise reads",
                "framewise_seed is no variable framewise reads (did you mean FRAMEWISE_SEED?)",
            ]
        );
        // A short name is only 1 edit from another.
        assert_eq!(nearest_known("FRAMEWISE_DIRS"), Some(DIR));
        assert_eq!(nearest_known("FRAMEWISE_ID"), None);
    }
}
