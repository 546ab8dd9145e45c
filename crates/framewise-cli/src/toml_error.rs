//! A TOML file's error as one short line: the file, the line, and for a value of the wrong
//! type the key, the value as written and the type expected — never the number serde
//! expands (`1e300` read where a count belongs used to print 301 digits).

use std::path::Path;

/// The longest stretch of a value quoted from the file.
const QUOTE_MAX_CHARS: usize = 32;

/// The 1-based line holding byte `offset` of `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |before| before.matches('\n').count() + 1)
}

/// A TOML error as one line naming the file and the line: `PATH: line N: message`; a value
/// of the wrong type or out of range reads `PATH: line N: `key` = VALUE: expected TYPE`.
pub fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> anyhow::Error {
    let message = e.message();
    match e.span() {
        Some(span) => {
            let line = line_of(text, span.start);
            let msg = wrong_value(message, text, span).unwrap_or_else(|| message.to_owned());
            anyhow::anyhow!("{}: line {line}: {msg}", path.display())
        }
        None => anyhow::anyhow!("{}: {message}", path.display()),
    }
}

/// `key = VALUE: expected TYPE` for serde's `invalid type: floating point `…`, expected u32`
/// (and `invalid value: …`) at `span` of `text`; `None` for any other message.
fn wrong_value(message: &str, text: &str, span: std::ops::Range<usize>) -> Option<String> {
    let rest = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))?;
    let (_, expected) = rest.rsplit_once(", expected ")?;
    let written = text.get(span.clone())?.trim();
    let value = quote(written);
    let line_start = text.get(..span.start)?.rfind('\n').map_or(0, |i| i + 1);
    let before = text.get(line_start..span.start)?;
    let key = before
        .rsplit_once('=')
        .map(|(key, _)| key.trim())
        .filter(|key| !key.is_empty() && !key.contains(['[', '{', ',']));
    let expected = expected_words(expected);
    Some(match key {
        Some(key) => format!("`{key}` = {value}: expected {expected}"),
        None => format!("{value}: expected {expected}"),
    })
}

/// At most [`QUOTE_MAX_CHARS`] characters of `written`, `…` marking a cut.
fn quote(written: &str) -> String {
    let mut chars = written.chars();
    let head: String = chars.by_ref().take(QUOTE_MAX_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// What serde calls a Rust type (`u32`, `a boolean`), as a person reads it.
fn expected_words(expected: &str) -> String {
    let range = |min: i128, max: i128| format!("a whole number from {min} to {max}");
    match expected {
        "u8" => range(0, u8::MAX.into()),
        "u16" => range(0, u16::MAX.into()),
        "u32" => range(0, u32::MAX.into()),
        "u64" | "usize" => range(0, u64::MAX.into()),
        "i8" => range(i8::MIN.into(), i8::MAX.into()),
        "i16" => range(i16::MIN.into(), i16::MAX.into()),
        "i32" => range(i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => range(i64::MIN.into(), i64::MAX.into()),
        "f32" | "f64" => "a number".to_owned(),
        "a boolean" => "true or false".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code, reason = "only the error is read")]
        struct Doc {
            runs: Option<u32>,
            frames: Option<u64>,
            shadows: Option<bool>,
            name: Option<String>,
        }
        let e = toml::from_str::<Doc>(text).expect_err(text);
        toml_error(Path::new("f.toml"), text, &e).to_string()
    }

    #[test]
    fn a_value_of_the_wrong_type_names_the_key_the_value_as_written_and_the_type() {
        assert_eq!(
            error("name = \"a\"\nruns = 1e300\n"),
            "f.toml: line 2: `runs` = 1e300: expected a whole number from 0 to 4294967295"
        );
        assert_eq!(
            error("frames = 3.5\n"),
            "f.toml: line 1: `frames` = 3.5: expected a whole number from 0 to 18446744073709551615"
        );
        assert_eq!(
            error("runs = -3\n"),
            "f.toml: line 1: `runs` = -3: expected a whole number from 0 to 4294967295"
        );
        assert_eq!(
            error("shadows = 1.5e200\n"),
            "f.toml: line 1: `shadows` = 1.5e200: expected true or false"
        );
        let long = format!("name = 1.{}\n", "9".repeat(400));
        assert_eq!(
            error(&long),
            "f.toml: line 1: `name` = 1.999999999999999999999999999999…: expected a string"
        );
    }

    #[test]
    fn other_errors_keep_their_message() {
        let text = error("runs = \n");
        assert!(text.starts_with("f.toml: line 1: "), "{text}");
    }
}
