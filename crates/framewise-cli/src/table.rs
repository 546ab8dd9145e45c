//! Tables for people: aligned console text and markdown, and how values are written
//! (units, fixed decimals, `—` for a value that was not measured — never 0).

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A table of already-formatted cells.
#[derive(Clone, Debug, Default)]
pub struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns; the first is left-aligned, the rest right-aligned.
    pub fn new(headers: &[&str]) -> Self {
        Self {
            headers: headers
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    (
                        (*h).to_owned(),
                        if i == 0 { Align::Left } else { Align::Right },
                    )
                })
                .collect(),
            rows: Vec::new(),
        }
    }

    /// Sets one column's alignment.
    pub fn align(mut self, column: usize, align: Align) -> Self {
        if let Some(h) = self.headers.get_mut(column) {
            h.1 = align;
        }
        self
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Adds a row (missing cells are blank, extra cells dropped).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn cell<'a>(&self, row: &'a [String], col: usize) -> &'a str {
        row.get(col).map_or("", String::as_str)
    }

    /// Aligned text, every line indented by `indent` spaces.
    pub fn console(&self, out: &mut String, indent: usize) {
        let cols = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|(h, _)| width(h)).collect();
        for row in &self.rows {
            for (c, w) in widths.iter_mut().enumerate() {
                *w = (*w).max(width(self.cell(row, c)));
            }
        }
        let pad = " ".repeat(indent);
        let line = |cells: Vec<&str>, out: &mut String| {
            let mut s = pad.clone();
            for (c, text) in cells.iter().enumerate() {
                let w = widths.get(c).copied().unwrap_or(0);
                let fill = " ".repeat(w.saturating_sub(width(text)));
                let align = self.headers.get(c).map_or(Align::Left, |h| h.1);
                if c > 0 {
                    s.push_str("  ");
                }
                match align {
                    Align::Left if c + 1 == cols => s.push_str(text),
                    Align::Left => {
                        s.push_str(text);
                        s.push_str(&fill);
                    }
                    Align::Right => {
                        s.push_str(&fill);
                        s.push_str(text);
                    }
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(self.headers.iter().map(|(h, _)| h.as_str()).collect(), out);
        for row in &self.rows {
            line((0..cols).map(|c| self.cell(row, c)).collect(), out);
        }
    }

    /// A markdown table.
    pub fn markdown(&self, out: &mut String) {
        let esc = |s: &str| s.replace('|', "\\|");
        out.push('|');
        for (h, _) in &self.headers {
            out.push_str(&format!(" {} |", esc(h)));
        }
        out.push_str("\n|");
        for (_, a) in &self.headers {
            out.push_str(match a {
                Align::Left => " --- |",
                Align::Right => " ---: |",
            });
        }
        out.push('\n');
        for row in &self.rows {
            out.push('|');
            for c in 0..self.headers.len() {
                out.push_str(&format!(" {} |", esc(self.cell(row, c))));
            }
            out.push('\n');
        }
    }
}

/// Display width in characters (every character this tool prints is one column wide).
fn width(s: &str) -> usize {
    s.chars().count()
}

/// The mark for a value that was not measured or could not be computed.
pub const NONE: &str = "—";

/// Milliseconds with three decimals (microsecond resolution), or `—`.
pub fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| NONE.to_owned(), |v| format!("{v:.3}"))
}

/// Milliseconds with a unit.
pub fn ms_unit(v: Option<f64>) -> String {
    v.map_or_else(|| NONE.to_owned(), |v| format!("{v:.3} ms"))
}

/// Frames per second with one decimal, or `—`.
pub fn fps(v: Option<f64>) -> String {
    v.map_or_else(|| NONE.to_owned(), |v| format!("{v:.1}"))
}

/// A ratio shown as a percentage with two decimals, or `—` (also for a value that is not
/// finite: no table says `inf%`).
pub fn ratio_pct(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or_else(|| NONE.to_owned(), |v| format!("{:.2}%", v * 100.0))
}

/// A signed percentage that is already in percent, or `—` (also for a value that is not
/// finite).
pub fn pct(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or_else(|| NONE.to_owned(), |v| format!("{v:+.1}%"))
}

/// A plain number: integers exactly, anything else with up to three decimals.
pub fn num(v: Option<f64>) -> String {
    match v {
        None => NONE.to_owned(),
        Some(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => format!("{v:.0}"),
        Some(v) => {
            let s = format!("{v:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
    }
}

/// The unit a metric path is in, for people (the analysis crate's table, so a gate's
/// reasons and these columns always agree).
pub fn unit(path: &str) -> &'static str {
    framewise_analysis::MetricUnit::of(path).name()
}

/// A metric's value in its unit's precision: ms to the microsecond, fps to a tenth, ratios
/// to four decimals, counts exactly.
pub fn metric(path: &str, v: Option<f64>) -> String {
    match (unit(path), v) {
        (_, None) => NONE.to_owned(),
        ("ms", v) => ms(v),
        ("fps", v) => fps(v),
        ("ratio", Some(x)) => format!("{x:.4}"),
        (_, v) => num(v),
    }
}

/// A signed change of a metric, in the metric's precision.
pub fn metric_delta(path: &str, v: Option<f64>) -> String {
    match v {
        Some(x) if x > 0.0 => format!("+{}", metric(path, Some(x))),
        other => metric(path, other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_console_table() {
        let mut t = Table::new(&["name", "ms"]);
        t.row(vec!["render".into(), "12.000".into()]);
        t.row(vec!["ui".into(), "0.500".into()]);
        let mut s = String::new();
        t.console(&mut s, 2);
        assert_eq!(s, "  name        ms\n  render  12.000\n  ui       0.500\n");
    }

    #[test]
    fn markdown_table() {
        let mut t = Table::new(&["a|b", "n"]);
        t.row(vec!["x".into(), "1".into()]);
        let mut s = String::new();
        t.markdown(&mut s);
        assert_eq!(s, "| a\\|b | n |\n| --- | ---: |\n| x | 1 |\n");
    }

    #[test]
    fn values() {
        assert_eq!(ms(None), "—");
        assert_eq!(ms(Some(16.6666)), "16.667");
        assert_eq!(num(Some(3.0)), "3");
        assert_eq!(num(Some(2.5)), "2.5");
        assert_eq!(pct(Some(-3.26)), "-3.3%");
        assert_eq!(ratio_pct(Some(0.05)), "5.00%");
        assert_eq!(metric("frame.p99", Some(12.5)), "12.500");
        assert_eq!(metric_delta("frame.fps", Some(2.04)), "+2.0");
        assert_eq!(metric_delta("counter.x.max", Some(30.0)), "+30");
        assert_eq!(metric("frame.jank_ratio", None), "—");
    }

    #[test]
    fn units() {
        assert_eq!(unit("frame.p99"), "ms");
        assert_eq!(unit("frame.fps"), "fps");
        assert_eq!(unit("frame.count"), "frames");
        assert_eq!(unit("scope.a.b.calls"), "calls");
        assert_eq!(unit("counter.draw_calls.max"), "count");
        assert_eq!(unit("counter.draw_calls.count"), "frames");
        assert_eq!(unit("frame.jank_ratio"), "ratio");
    }
}
