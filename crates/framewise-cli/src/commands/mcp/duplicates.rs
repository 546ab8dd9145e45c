//! Keys a JSON line repeats in one object.
//!
//! JSON leaves a repeated key to the reader, and `serde_json` keeps the last value: a
//! `tools/call` with `{"capture": "a.sgpt", "capture": "b.sgpt"}` ran on `b.sgpt` without a
//! word. The rule for arguments is that what is given is refused or used, never ignored, so
//! the transport reads a `tools/call` line a second time, here, for the keys it repeats: the
//! ones in `params.arguments` make the call an `isError` result naming them (the tools'
//! argument extractor reads [`DuplicateArguments`]), any other one an error response.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The arguments a `tools/call` repeated (each as its path in `arguments`, `capture` or
/// `a.b`), put on the request for the tool's argument extractor, which refuses the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateArguments(pub Vec<String>);

/// One step of a path into a JSON text: a key of an object or an index into an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A key of an object.
    Key(String),
    /// An index into an array.
    Index(usize),
}

/// The keys a `tools/call` line repeats: those in its `params.arguments` (as their path in
/// `arguments`, shown), and the others (as their whole path), each once, in the order met.
/// Nothing for a line that does not read as JSON (the transport has answered it already).
pub fn in_call(line: &[u8]) -> (Vec<String>, Vec<Vec<Step>>) {
    let mut arguments = Vec::new();
    let mut elsewhere = Vec::new();
    for path in repeated_keys(line) {
        match path.as_slice() {
            [Step::Key(p), Step::Key(a), rest @ ..]
                if p == "params" && a == "arguments" && !rest.is_empty() =>
            {
                arguments.push(shown(rest));
            }
            _ => elsewhere.push(path),
        }
    }
    (arguments, elsewhere)
}

/// A path as a message shows it: `capture`, `params.name`, `a[0].b`.
pub fn shown(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Every key repeated in an object of the JSON text `line`, as its path from the top, once
/// each (a key given three times is one path), in the order met.
pub fn repeated_keys(line: &[u8]) -> Vec<Vec<Step>> {
    let mut walk = Walk::default();
    let mut deserializer = serde_json::Deserializer::from_slice(line);
    if (&mut walk).deserialize(&mut deserializer).is_err() {
        return Vec::new();
    }
    walk.repeated
}

/// Where the walk is, and what it found.
#[derive(Default)]
struct Walk {
    path: Vec<Step>,
    repeated: Vec<Vec<Step>>,
}

impl<'de> DeserializeSeed<'de> for &mut Walk {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for &mut Walk {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
        Ok(())
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            self.path.push(Step::Index(index));
            let more = seq.next_element_seed(&mut *self)?;
            self.path.pop();
            if more.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            self.path.push(Step::Key(key.clone()));
            if !keys.insert(key) && !self.repeated.contains(&self.path) {
                self.repeated.push(self.path.clone());
            }
            map.next_value_seed(&mut *self)?;
            self.path.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_arguments_are_found_apart_from_other_repeated_keys() {
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b","arguments":{"capture":"x","n":[{"k":1,"k":2}],"capture":"y","capture":"z"}}}"#;
        let (arguments, elsewhere) = in_call(line);
        assert_eq!(arguments, ["n[0].k", "capture"], "in the order met");
        assert_eq!(
            elsewhere,
            [vec![Step::Key("params".into()), Step::Key("name".into())]]
        );
        assert_eq!(shown(&elsewhere[0]), "params.name");
    }

    #[test]
    fn nothing_is_repeated_in_a_line_without_repeats_or_that_is_no_json() {
        let line = br#"{"params":{"arguments":{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}}}"#;
        assert_eq!(in_call(line), (Vec::new(), Vec::new()));
        assert!(repeated_keys(b"{\"a\":1,\"a\":").is_empty());
        assert!(repeated_keys(b"").is_empty());
        // A key escaped differently is the same key.
        assert_eq!(
            repeated_keys(br#"{"a":1,"\u0061":2}"#),
            [vec![Step::Key("a".into())]]
        );
    }
}
