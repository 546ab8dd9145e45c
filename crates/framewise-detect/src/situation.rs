//! Situations: the host's few low-cardinality facets (`stance=foot`, `view=fp`), as one
//! canonical string stamped on every incident record (`ctx`) and ending its footprint key.
//!
//! Time is not a facet of a cause; the game's state is. A hitch at the helm in a firefight is
//! not the same issue as the same hitch on foot in an empty lobby, and no profiler can know
//! which facets matter for a game, so the host declares them — categories, never positions
//! or counters — and [`canonical_situation`] makes one string of them: in keys and values
//! every run of separators (`|`, `,`, `=`, whitespace) replaced by one `_`, each cut to 40
//! UTF-16 code units, then keys sorted and `k=v` pairs joined by `,`. Facets with an empty
//! value are left out. Keys are compared scrubbed: two keys that scrub alike (`a b`, `a_b`)
//! are one facet, so a key never appears twice in the string and the order is the scrubbed
//! keys'.
//!
//! The rule matches the JavaScript reference (`canonicalContext`) character for character
//! for keys that need no scrubbing (every key a host declares as an identifier): keys sort
//! by UTF-16 code units, "whitespace" is JavaScript's `\s`, and lengths count UTF-16 code
//! units. Two stated differences: the reference sorts and merges keys before scrubbing them,
//! which for keys that scrub alike or scrub out of order gives a string with a key twice or
//! unsorted, and this does not; and where the 40-unit cut would split a surrogate pair,
//! JavaScript keeps the lone high surrogate and this keeps neither half (a Rust string cannot
//! hold half a character).
//!
//! ```
//! use framewise_detect::situation::canonical_situation;
//!
//! let ctx = canonical_situation([("view", "fp"), ("stance", "on foot"), ("crew", "")]);
//! assert_eq!(ctx, "stance=on_foot,view=fp");
//! ```

/// How many UTF-16 code units of a scrubbed key or value are kept.
pub const FACET_MAX_UNITS: usize = 40;

/// Whether `c` is whitespace as JavaScript's `\s` means it (WhiteSpace and LineTerminator:
/// the Unicode space separators, tab, vertical tab, form feed, U+FEFF, LF, CR, U+2028,
/// U+2029). Unlike [`char::is_whitespace`] it includes U+FEFF and excludes U+0085.
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'..='\u{000D}'
            | ' '
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// `text` trimmed of JavaScript whitespace at both ends (`String.prototype.trim`).
pub fn trim_js(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

/// The longest prefix of `text` that is at most `max_units` UTF-16 code units long and
/// ends on a character boundary.
pub fn truncate_utf16(text: &str, max_units: usize) -> &str {
    let mut units = 0;
    for (at, c) in text.char_indices() {
        units += c.len_utf16();
        if units > max_units {
            return &text[..at];
        }
    }
    text
}

/// Replaces every run of characters matching `is_separator` by one `_`.
pub(crate) fn collapse_runs(text: &str, is_separator: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_run = false;
    for c in text.chars() {
        if is_separator(c) {
            if !in_run {
                out.push('_');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// One facet key or value, scrubbed: runs of `|`, `,`, `=` and whitespace become one `_`,
/// then the result is cut to [`FACET_MAX_UNITS`] UTF-16 code units.
pub fn scrub_facet(text: &str) -> String {
    let collapsed = collapse_runs(text, |c| {
        matches!(c, '|' | ',' | '=') || is_js_whitespace(c)
    });
    truncate_utf16(&collapsed, FACET_MAX_UNITS).to_owned()
}

/// Orders two strings by their UTF-16 code units, as JavaScript's default sort does (it
/// differs from `str`'s order for characters above U+FFFF against U+E000..U+FFFF).
pub fn cmp_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The host's facets as one canonical string (module docs). A key given twice (as scrubbed:
/// `a b` and `a_b` are one key) keeps its last value; facets whose value is empty are left
/// out; no facets give `""`.
pub fn canonical_situation<'a>(facets: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut kept: Vec<(String, &str)> = Vec::new();
    for (key, value) in facets {
        let key = scrub_facet(key);
        match kept.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => kept.push((key, value)),
        }
    }
    kept.retain(|(_, v)| !v.is_empty());
    kept.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
    kept.iter()
        .map(|(k, v)| format!("{k}={}", scrub_facet(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// The situation facets of a footprint key's `ctx:` segment (the first `|`-separated part
/// that starts with `ctx:`), in the order written; empty when the key has none. A pair
/// without `=` or with an empty name is skipped; a name given twice keeps its last value.
pub fn context_of_key(key: &str) -> Vec<(String, String)> {
    let Some(segment) = key.split('|').find_map(|p| p.strip_prefix("ctx:")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for pair in segment.split(',') {
        let Some((name, value)) = pair.split_once('=') else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        match out.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = value.to_owned(),
            None => out.push((name.to_owned(), value.to_owned())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_and_separators_scrub() {
        assert_eq!(canonical_situation([]), "");
        assert_eq!(
            canonical_situation([("view", "fp"), ("combat", "yes"), ("hull", "elong x")]),
            "combat=yes,hull=elong_x,view=fp"
        );
        // Runs of separators (and U+0085 and U+FEFF) are covered by the golden tests.
        // Empty values are left out; the last value of a repeated key wins.
        assert_eq!(
            canonical_situation([("k", "1"), ("gone", ""), ("k", "2")]),
            "k=2"
        );
    }

    #[test]
    fn keys_are_merged_and_sorted_as_scrubbed() {
        // `a b` scrubs to `a_b`: one key, its last value (it gave `a_b=1,a_b=2`).
        assert_eq!(canonical_situation([("a b", "1"), ("a_b", "2")]), "a_b=2");
        // Sorted by the scrubbed keys: `a_a` < `a_b` (it gave `a_b=1,a_a=2`, as `a b` < `a_a`).
        assert_eq!(
            canonical_situation([("a b", "1"), ("a_a", "2")]),
            "a_a=2,a_b=1"
        );
        // Keys that need no scrubbing: as before.
        assert_eq!(
            canonical_situation([("view", "fp"), ("stance", "foot")]),
            "stance=foot,view=fp"
        );
    }

    #[test]
    fn facets_are_cut_at_forty_units() {
        let long = "x".repeat(50);
        assert_eq!(scrub_facet(&long).len(), 40);
        // 39 units then an astral character: the pair would straddle the cut, so it goes.
        let astral = format!("{}😀", "y".repeat(39));
        assert_eq!(scrub_facet(&astral), "y".repeat(39));
        let fits = format!("{}😀", "y".repeat(38));
        assert_eq!(scrub_facet(&fits), fits);
    }

    #[test]
    fn context_parses_back() {
        assert_eq!(
            context_of_key("hitch|play|gpu-bound|ctx:stance=foot,view=fp"),
            vec![
                ("stance".to_owned(), "foot".to_owned()),
                ("view".to_owned(), "fp".to_owned())
            ]
        );
        assert!(context_of_key("hitch|play|gpu-bound").is_empty());
        assert_eq!(
            context_of_key("x|ctx:=a,b,c=1=2"),
            vec![("c".to_owned(), "1=2".to_owned())]
        );
    }

    #[test]
    fn trim_uses_js_whitespace() {
        assert_eq!(trim_js("\u{feff} physics \u{2028}"), "physics");
        assert_eq!(trim_js("\u{85}x"), "\u{85}x");
    }
}
