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
//! | `FRAMEWISE_FIXED_DT` | seconds: the host pins its simulation step ([`Session::fixed_dt`]) |
//! | `FRAMEWISE_GOLDEN_FRAME` | frame index whose image the host writes ([`Session::golden_frame`]) |
//! | `FRAMEWISE_SEED` | seed the host starts its world from ([`Session::seed`]) |
//! | `FRAMEWISE_RESOLUTION` | `WIDTHxHEIGHT` the host renders at ([`Session::resolution`]) |
//!
//! The recorder itself acts on the first six; the last four are the host's to act on (the
//! session hands them back and stores them in META's settings, so a capture says what it was
//! asked for). A host that ignores one of them is not comparable across those settings.
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
    /// never silently ignored.
    pub fn from_env() -> Result<Self, StartError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads variables through `lookup` (for tests and embedders with their own settings).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, StartError> {
        let get = |name: &str| lookup(name).filter(|value| !value.is_empty());
        let bad = |var: &'static str, value: &str, reason: &str| StartError::Env {
            var,
            value: value.to_owned(),
            reason: reason.to_owned(),
        };
        let frames = get(FRAMES)
            .map(|value| {
                value
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|frames| *frames > 0)
                    .ok_or_else(|| bad(FRAMES, &value, "expected a frame count above 0"))
            })
            .transpose()?;
        let level = get(LEVEL)
            .map(|value| {
                parse_level(&value).ok_or_else(|| {
                    bad(
                        LEVEL,
                        &value,
                        "expected timing, structure, workload, verbose or 0-3",
                    )
                })
            })
            .transpose()?;
        let writer_mode = get(WRITER)
            .map(|value| match value.trim().to_ascii_lowercase().as_str() {
                "lossless" => Ok(WriterMode::Lossless),
                "realtime" => Ok(WriterMode::Realtime),
                _ => Err(bad(WRITER, &value, "expected lossless or realtime")),
            })
            .transpose()?;
        let fixed_dt = get(FIXED_DT)
            .map(|value| {
                value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|seconds| seconds.is_finite() && *seconds > 0.0 && *seconds < 3600.0)
                    .map(Duration::from_secs_f64)
                    // A step shorter than a nanosecond rounds to zero: time would stand still.
                    .filter(|step| !step.is_zero())
                    .ok_or_else(|| {
                        bad(
                            FIXED_DT,
                            &value,
                            "expected a step in seconds from 1 ns to under an hour, e.g. 0.016666",
                        )
                    })
            })
            .transpose()?;
        let golden_frame = get(GOLDEN_FRAME)
            .map(|value| {
                value
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| bad(GOLDEN_FRAME, &value, "expected a frame index"))
            })
            .transpose()?;
        let seed = get(SEED)
            .map(|value| {
                value
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| bad(SEED, &value, "expected an unsigned 64-bit integer"))
            })
            .transpose()?;
        let resolution = get(RESOLUTION)
            .map(|value| {
                parse_resolution(&value).ok_or_else(|| {
                    bad(
                        RESOLUTION,
                        &value,
                        "expected WIDTHxHEIGHT in pixels, e.g. 1280x720",
                    )
                })
            })
            .transpose()?;
        Ok(Self {
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
        })
    }
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
}
