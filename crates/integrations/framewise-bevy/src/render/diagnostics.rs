//! Reading one frame of Bevy's render diagnostics.
//!
//! Bevy 0.19 hands a frame's diagnostics to the recorder's callback as `RenderDiagnostics`,
//! whose list of `RenderDiagnostic { path, suffix, value }` it keeps private; its `Debug` form
//! is the only way to read it. This module parses that form (pinned: the crate builds against
//! Bevy =0.19.1, and the lavapipe tests read real diagnostics through it) into spans.

/// One span of Bevy's render diagnostics: a pass or a time span opened by a render node.
#[derive(Clone, Debug, PartialEq)]
pub struct DiagnosticSpan {
    /// The span's path below `render/`, its own name last (`main_opaque_pass_3d`).
    pub path: Vec<String>,
    /// Elapsed CPU time while the node recorded it, ms.
    pub elapsed_cpu_ms: Option<f64>,
    /// Elapsed GPU time between its timestamps (already scaled by the queue's period), ms;
    /// absent without timestamps.
    pub elapsed_gpu_ms: Option<f64>,
    /// Primitives the clipper received (pipeline statistics, render passes), when the device
    /// counts them.
    pub clipper_invocations: Option<u64>,
    /// Vertex shader invocations (pipeline statistics, render passes), when counted.
    pub vertex_shader_invocations: Option<u64>,
}

impl DiagnosticSpan {
    fn new(path: Vec<String>) -> Self {
        Self {
            path,
            elapsed_cpu_ms: None,
            elapsed_gpu_ms: None,
            clipper_invocations: None,
            vertex_shader_invocations: None,
        }
    }
}

/// The spans of one frame's `RenderDiagnostics`, read from its `Debug` form, in the order Bevy
/// closed them (a parent after its children). Bevy writes a span's entries together, its CPU
/// time first; entries that are not span fields (values a node recorded) are skipped.
pub fn parse_render_diagnostics(debug: &str) -> Vec<DiagnosticSpan> {
    let mut spans: Vec<DiagnosticSpan> = Vec::new();
    for (path, value) in entries(debug) {
        let Some(rest) = path.strip_prefix("render/") else {
            continue;
        };
        let Some((span, field)) = rest.rsplit_once('/') else {
            continue;
        };
        let components: Vec<String> = span.split('/').map(str::to_owned).collect();
        let starts_span =
            field == "elapsed_cpu" || spans.last().is_none_or(|last| last.path != components);
        if starts_span {
            spans.push(DiagnosticSpan::new(components));
        }
        let Some(current) = spans.last_mut() else {
            continue;
        };
        let count = || (value.is_finite() && value >= 0.0).then_some(value as u64);
        match field {
            "elapsed_cpu" => current.elapsed_cpu_ms = Some(value),
            "elapsed_gpu" => current.elapsed_gpu_ms = Some(value),
            "clipper_invocations" => current.clipper_invocations = count(),
            "vertex_shader_invocations" => current.vertex_shader_invocations = count(),
            _ => {}
        }
    }
    spans.retain(|span| span.elapsed_cpu_ms.is_some() || span.elapsed_gpu_ms.is_some());
    spans
}

/// `(path, value)` of every `RenderDiagnostic { path: DiagnosticPath { path: "…", … }, suffix:
/// "…", value: … }` in the text.
fn entries(debug: &str) -> Vec<(String, f64)> {
    const PATH: &str = "DiagnosticPath { path: \"";
    const VALUE: &str = "value: ";
    let mut out = Vec::new();
    let mut rest = debug;
    while let Some(at) = rest.find(PATH) {
        rest = &rest[at + PATH.len()..];
        let Some((path, after)) = quoted(rest) else {
            break;
        };
        rest = after;
        let Some(at) = rest.find(VALUE) else {
            break;
        };
        rest = &rest[at + VALUE.len()..];
        let end = rest.find([',', ' ', '}']).unwrap_or(rest.len());
        if let Ok(value) = rest[..end].parse::<f64>() {
            out.push((path, value));
        }
        rest = &rest[end..];
    }
    out
}

/// The `Debug`-escaped string up to its closing quote, unescaped, and the text after it.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &text[i + 1..])),
            '\\' => match chars.next()? {
                (_, 'n') => out.push('\n'),
                (_, 't') => out.push('\t'),
                (_, 'r') => out.push('\r'),
                (_, '0') => out.push('\0'),
                (_, other) => out.push(other),
            },
            other => out.push(other),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `format!("{:?}", diagnostics)` prints in Bevy 0.19.1 (RenderDiagnostics and
    /// DiagnosticPath derive Debug).
    const FRAME: &str = r#"RenderDiagnostics([RenderDiagnostic { path: DiagnosticPath { path: "render/early_mesh_preprocessing/elapsed_cpu", hash: 1 }, suffix: "ms", value: 0.02 }, RenderDiagnostic { path: DiagnosticPath { path: "render/early_mesh_preprocessing/elapsed_gpu", hash: 2 }, suffix: "ms", value: 0.5 }, RenderDiagnostic { path: DiagnosticPath { path: "render/shadows/point \"a\"/elapsed_cpu", hash: 3 }, suffix: "ms", value: 1e-7 }, RenderDiagnostic { path: DiagnosticPath { path: "render/shadows/point \"a\"/elapsed_gpu", hash: 4 }, suffix: "ms", value: 0.25 }, RenderDiagnostic { path: DiagnosticPath { path: "render/shadows/point \"a\"/clipper_invocations", hash: 5 }, suffix: "", value: 960.0 }, RenderDiagnostic { path: DiagnosticPath { path: "render/shadows/elapsed_cpu", hash: 6 }, suffix: "ms", value: 0.1 }, RenderDiagnostic { path: DiagnosticPath { path: "render/shadows/elapsed_cpu", hash: 6 }, suffix: "ms", value: 0.3 }, RenderDiagnostic { path: DiagnosticPath { path: "render/my_value", hash: 7 }, suffix: "", value: 3.0 }])"#;

    #[test]
    fn spans_are_read_with_their_fields_in_closing_order() {
        let spans = parse_render_diagnostics(FRAME);
        let paths: Vec<String> = spans.iter().map(|s| s.path.join("/")).collect();
        assert_eq!(
            paths,
            [
                "early_mesh_preprocessing",
                "shadows/point \"a\"",
                "shadows",
                "shadows"
            ]
        );
        assert_eq!(spans[0].elapsed_cpu_ms, Some(0.02));
        assert_eq!(spans[0].elapsed_gpu_ms, Some(0.5));
        assert_eq!(spans[1].elapsed_cpu_ms, Some(1e-7));
        assert_eq!(spans[1].clipper_invocations, Some(960));
        // Two spans of one name are two spans; one without timestamps has no GPU time.
        assert_eq!(spans[2].elapsed_gpu_ms, None);
        assert_eq!(spans[3].elapsed_cpu_ms, Some(0.3));
    }

    #[test]
    fn anything_else_reads_as_no_spans() {
        assert!(parse_render_diagnostics("RenderDiagnostics([])").is_empty());
        assert!(parse_render_diagnostics("").is_empty());
        assert!(parse_render_diagnostics("DiagnosticPath { path: \"render/x").is_empty());
    }
}
