//! How motion tracks are recorded: the counter and META setting names, and reading the
//! declarations back. The recorder writes by these names and every reader (the analysis, the
//! recorder's writer side) reads by them, so the convention lives in one place.
//!
//! For a track `NAME`: gauges `motion.NAME.x_mm`, `.y_mm`, `.z_mm` (thousandths of the host
//! unit, y up) and `motion.NAME.reach_mm`; sums `motion.NAME.held` and `motion.NAME.cuts`;
//! META settings `motion.NAME.floor_mm`, `motion.NAME.follows`, `motion.NAME.reach`. For the
//! session: gauge `motion.clock_us`, settings `motion.long_frame_ms` and `motion.unit`.

use super::{MotionError, MotionMonitor, MotionOptions, TrackSpec};

/// Thousandths of a host unit per unit (positions, reach and floors are recorded so).
pub const MILLI: f64 = 1000.0;

/// Every counter and setting of motion tracking starts with this.
pub const PREFIX: &str = "motion.";

/// Whether a counter records motion tracking (positions, reach, held frames, cuts, the
/// motion clock) rather than the game's work: such counters are kept out of incident
/// records' counter deltas and medians.
pub fn is_motion_counter(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// The gauge of the host's motion clock, µs.
pub const CLOCK_GAUGE: &str = "motion.clock_us";
/// The setting of the host's long-frame threshold, ms.
pub const LONG_FRAME_SETTING: &str = "motion.long_frame_ms";
/// The setting of the unit label.
pub const UNIT_SETTING: &str = "motion.unit";

/// The counter names of one track.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackNames {
    /// Position gauges, x y z.
    pub position: [String; 3],
    /// Anchor distance gauge.
    pub reach: String,
    /// Held frames (a sum).
    pub held: String,
    /// Cuts (a sum).
    pub cuts: String,
}

impl TrackNames {
    /// The names for track `name`.
    pub fn of(name: &str) -> Self {
        Self {
            position: ["x", "y", "z"].map(|a| format!("motion.{name}.{a}_mm")),
            reach: format!("motion.{name}.reach_mm"),
            held: format!("motion.{name}.held"),
            cuts: format!("motion.{name}.cuts"),
        }
    }
}

/// The META settings that declare `spec`: floor, and follows and reach when set.
pub fn track_settings(spec: &TrackSpec) -> Vec<(String, String)> {
    let name = &spec.name;
    let mut out = vec![(
        format!("motion.{name}.floor_mm"),
        format!("{}", (spec.floor * MILLI).round()),
    )];
    if let Some(f) = &spec.follows {
        out.push((format!("motion.{name}.follows"), f.clone()));
    }
    if let Some(r) = &spec.reach {
        out.push((format!("motion.{name}.reach"), r.clone()));
    }
    out
}

fn number(key: &str, value: &str) -> Result<f64, MotionError> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| MotionError::BadSetting {
            key: key.to_owned(),
            value: value.to_owned(),
        })
}

/// The tracks and options declared by META settings (a later setting of a key wins), in
/// the order their floors were declared. Checked as [`MotionMonitor::new`] checks them.
pub fn setup_from_settings(
    settings: &[(String, String)],
) -> Result<(Vec<TrackSpec>, MotionOptions), MotionError> {
    let mut tracks: Vec<TrackSpec> = Vec::new();
    let mut options = MotionOptions::default();
    for (key, value) in settings {
        if let Some(name) = key
            .strip_prefix("motion.")
            .and_then(|k| k.strip_suffix(".floor_mm"))
        {
            let floor = number(key, value)? / MILLI;
            match tracks.iter_mut().find(|t| t.name == name) {
                Some(t) => t.floor = floor,
                None => tracks.push(TrackSpec::new(name, floor)),
            }
        } else if key == LONG_FRAME_SETTING {
            options.long_frame_ms = number(key, value)?;
        } else if key == UNIT_SETTING {
            options.unit.clone_from(value);
        }
    }
    for t in &mut tracks {
        let get = |what: &str| {
            let key = format!("motion.{}.{what}", t.name);
            settings
                .iter()
                .rev()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone())
        };
        t.follows = get("follows");
        t.reach = get("reach");
    }
    MotionMonitor::new(tracks.clone(), options.clone())?;
    Ok((tracks, options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_round_trip() {
        let camera = TrackSpec::new("camera", 0.05).follows("unit").reach("boom");
        let unit = TrackSpec::new("unit", 0.5);
        let mut settings = track_settings(&unit);
        settings.extend(track_settings(&camera));
        settings.push((LONG_FRAME_SETTING.into(), "66.7".into()));
        settings.push((UNIT_SETTING.into(), "m".into()));
        settings.push(("seed".into(), "7".into()));
        let (tracks, options) = setup_from_settings(&settings).expect("valid");
        assert_eq!(tracks, vec![unit, camera]);
        assert_eq!(options.long_frame_ms, 66.7);
        assert_eq!(options.unit, "m");
        assert_eq!(TrackNames::of("unit").position[1], "motion.unit.y_mm");
    }

    #[test]
    fn bad_declarations_are_errors() {
        let bad = vec![("motion.unit.floor_mm".to_owned(), "far".to_owned())];
        assert!(matches!(
            setup_from_settings(&bad),
            Err(MotionError::BadSetting { .. })
        ));
        let orphan = vec![
            ("motion.camera.floor_mm".to_owned(), "50".to_owned()),
            ("motion.camera.follows".to_owned(), "unit".to_owned()),
        ];
        assert!(matches!(
            setup_from_settings(&orphan),
            Err(MotionError::UnknownFollows { .. })
        ));
        assert_eq!(setup_from_settings(&[]).map(|(t, _)| t.len()), Ok(0));
    }
}
