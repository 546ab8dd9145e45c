//! Tables for people: aligned console text and markdown, and how values are written
//! (units, fixed decimals, `—` for a value that was not measured — never 0).
//!
//! Text that comes from an input (a scope, counter or census name, an evidence string, a
//! file name) goes through [`inline`] before it is put in a console or markdown line: a
//! newline in it must not start a line of its own (a table row cut in two, a GitHub
//! workflow command such as `::error::` read off the log). Table cells get it here; a
//! verb's prose lines call it themselves.

use std::borrow::Cow;

/// `text` made to stay on its line: a line break (CR, LF, U+2028, U+2029), a tab and every
/// other control character become a visible escape (`\n`, `\r`, `\t`, `\u{1b}`), so the
/// name still reads as what it is and can neither start a new line nor move the cursor.
/// Text with none of them is returned as it is.
pub fn inline(text: &str) -> Cow<'_, str> {
    let breaks = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    if !text.contains(breaks) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if breaks(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A markdown table cell: [`inline`], and `|` escaped so it does not end the cell.
fn markdown_cell(text: &str) -> String {
    inline(text).replace('|', "\\|")
}

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
    /// A table with these columns; the first is left-aligned, the rest right-aligned. A
    /// header is [`inline`] as a cell is (a counter's name heads a column of `history`).
    pub fn new(headers: &[&str]) -> Self {
        Self {
            headers: headers
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    (
                        inline(h).into_owned(),
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

    /// Aligned text, every line indented by `indent` spaces. Each cell is [`inline`]: a
    /// line break in a name neither starts a line nor breaks the alignment.
    pub fn console(&self, out: &mut String, indent: usize) {
        let cols = self.headers.len();
        let rows: Vec<Vec<Cow<'_, str>>> = self
            .rows
            .iter()
            .map(|row| (0..cols).map(|c| inline(self.cell(row, c))).collect())
            .collect();
        let mut widths: Vec<usize> = self.headers.iter().map(|(h, _)| width(h)).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
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
        for row in &rows {
            line(row.iter().map(|c| c.as_ref()).collect(), out);
        }
    }

    /// A markdown table: every row one line with the header's columns (cells are
    /// [`inline`], `|` escaped).
    pub fn markdown(&self, out: &mut String) {
        out.push('|');
        for (h, _) in &self.headers {
            out.push_str(&format!(" {} |", markdown_cell(h)));
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
                out.push_str(&format!(" {} |", markdown_cell(self.cell(row, c))));
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

/// A plain number: integers exactly, anything else with up to three decimals; a magnitude
/// of 9e15 or more (past which f64 no longer holds every integer) in scientific notation
/// with up to three decimals (`1e308`, `1.798e308`), never its hundreds of digits; `—` for a
/// value that is not finite (JSON writes it as null).
pub fn num(v: Option<f64>) -> String {
    match v {
        None => NONE.to_owned(),
        Some(v) if !v.is_finite() => NONE.to_owned(),
        Some(v) if v.abs() >= 9.0e15 => scientific(v),
        Some(v) if v.fract() == 0.0 => format!("{v:.0}"),
        Some(v) => {
            let s = format!("{v:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
    }
}

/// `v` as `1.798e308`: the mantissa with up to three decimals, trailing zeros dropped.
fn scientific(v: f64) -> String {
    let s = format!("{v:.3e}");
    match s.split_once('e') {
        Some((mantissa, exponent)) if mantissa.contains('.') => format!(
            "{}e{exponent}",
            mantissa.trim_end_matches('0').trim_end_matches('.')
        ),
        _ => s,
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
    fn a_line_break_in_a_cell_stays_in_its_cell() {
        let mut t = Table::new(&["scope", "ms"]);
        t.row(vec!["evil\n::error::x|y\r".into(), "1".into()]);
        t.row(vec!["ok".into(), "2".into()]);
        let mut s = String::new();
        t.markdown(&mut s);
        assert_eq!(
            s,
            "| scope | ms |\n| --- | ---: |\n| evil\\n::error::x\\|y\\r | 1 |\n| ok | 2 |\n"
        );
        let mut s = String::new();
        t.console(&mut s, 0);
        assert_eq!(
            s,
            "scope                 ms\nevil\\n::error::x|y\\r   1\nok                     2\n"
        );
    }

    #[test]
    fn inline_escapes_what_breaks_a_line() {
        assert!(matches!(inline("render"), Cow::Borrowed("render")));
        assert_eq!(inline("a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(inline("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(inline("a\u{85}b\u{2028}c"), "a\\u{85}b\\u{2028}c");
        assert_eq!(inline("naïve — ok"), "naïve — ok");
    }

    #[test]
    fn values() {
        assert_eq!(ms(None), "—");
        assert_eq!(ms(Some(16.6666)), "16.667");
        assert_eq!(num(Some(3.0)), "3");
        assert_eq!(num(Some(2.5)), "2.5");
        // Past 9e15 in scientific notation, never 309 digits; not finite: as JSON, no value.
        assert_eq!(num(Some(8_999_999_999_999_999.0)), "8999999999999999");
        assert_eq!(num(Some(9.0e15)), "9e15");
        assert_eq!(num(Some(1e308)), "1e308");
        assert_eq!(num(Some(f64::MAX)), "1.798e308");
        assert_eq!(num(Some(-2.5e20)), "-2.5e20");
        assert_eq!(num(Some(f64::INFINITY)), "—");
        assert_eq!(num(Some(f64::NAN)), "—");
        assert_eq!(metric("counter.x.max", Some(1e308)), "1e308");
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
