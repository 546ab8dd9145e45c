//! A tool's arguments, refused when they name what the tool does not take.
//!
//! rmcp's `Parameters<T>` deserializes the arguments with serde, which ignores a member the
//! struct has no field for: `"tolerance"` for `"tolerances"` would be dropped without a word
//! and the comparison judged without it (a pass that should have failed). Every arguments
//! struct is `#[serde(deny_unknown_fields)]` (so its `inputSchema` says
//! `additionalProperties: false`), and this extractor, which the tools take instead of
//! rmcp's, names each unknown argument with the one meant when one is near, as the CLI does
//! for a misspelt flag. The message starts as rmcp's own (`failed to deserialize
//! parameters:`), so the call returns `isError: true` with it, as any other argument that
//! does not fit the schema. So is an argument given twice (`{"capture": "a", "capture":
//! "b"}`, which JSON reads as the last): the transport found it on the raw line
//! ([`DuplicateArguments`]), and it is named rather than resolved.

use rmcp::handler::server::common::{schema_for_input, FromContextPart};
use rmcp::handler::server::tool::ToolCallContext;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::duplicates::DuplicateArguments;

/// What rmcp's message starts with for arguments that do not fit the schema: a call failing
/// with it returns `isError: true` (not a JSON-RPC error).
const PREFIX: &str = "failed to deserialize parameters:";

/// A tool's arguments: rmcp's `Parameters`, refusing an argument the tool does not take.
/// (Named `Parameters`: rmcp's `#[tool]` finds the input schema by that name.)
#[derive(Debug, Clone)]
pub struct Parameters<P>(pub P);

impl<P: JsonSchema> JsonSchema for Parameters<P> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}

impl<S, P> FromContextPart<ToolCallContext<'_, S>> for Parameters<P>
where
    P: DeserializeOwned + JsonSchema + 'static,
{
    fn from_context_part(context: &mut ToolCallContext<S>) -> Result<Self, rmcp::ErrorData> {
        if let Some(DuplicateArguments(repeated)) = context
            .request_context
            .extensions
            .get::<DuplicateArguments>()
        {
            return Err(invalid(given_more_than_once(repeated)));
        }
        let arguments = context.arguments.take().unwrap_or_default();
        let known = argument_names::<P>();
        let unknown: Vec<String> = arguments
            .keys()
            .filter(|key| !known.iter().any(|k| k == *key))
            .map(|key| unknown_argument(key, &known))
            .collect();
        if !unknown.is_empty() {
            return Err(invalid(format!(
                "{} (this tool takes {})",
                unknown.join("; "),
                takes(&known)
            )));
        }
        serde_json::from_value(serde_json::Value::Object(arguments))
            .map(Parameters)
            .map_err(|e| invalid(e.to_string()))
    }
}

/// The error rmcp turns into an `isError` result.
fn invalid(message: String) -> rmcp::ErrorData {
    rmcp::ErrorData::invalid_params(format!("{PREFIX} {message}"), None)
}

/// The argument names `P`'s input schema lists, in its order.
pub(crate) fn argument_names<P: JsonSchema + 'static>() -> Vec<String> {
    schema_for_input::<P>()
        .ok()
        .and_then(|schema| {
            Some(
                schema
                    .get("properties")?
                    .as_object()?
                    .keys()
                    .cloned()
                    .collect(),
            )
        })
        .unwrap_or_default()
}

/// "unknown argument `tolerance` (did you mean `tolerances`?)".
pub(crate) fn unknown_argument(name: &str, known: &[String]) -> String {
    let near = framewise_analysis::gate::nearest(name, known.iter().map(String::as_str));
    match near.as_slice() {
        [] => format!("unknown argument `{name}`"),
        near => format!(
            "unknown argument `{name}` (did you mean {}?)",
            near.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    }
}

/// "argument `capture` is given more than once: …": the arguments a call repeated, refused
/// (JSON would keep the last of the values, and the others would be ignored).
fn given_more_than_once(repeated: &[String]) -> String {
    let (noun, verb) = if repeated.len() == 1 {
        ("argument", "is")
    } else {
        ("arguments", "are")
    };
    format!(
        "{noun} {} {verb} given more than once: a repeated argument is refused, not resolved to one of its values; give each argument once (nothing was run)",
        takes(repeated)
    )
}

/// "`base`, `cand` and `mode`", or "no arguments".
fn takes(known: &[String]) -> String {
    let quoted: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
    match quoted.as_slice() {
        [] => "no arguments".to_owned(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_argument_is_named_with_the_one_meant() {
        let known: Vec<String> = ["base", "cand", "tolerances"].map(String::from).to_vec();
        assert_eq!(
            unknown_argument("tolerance", &known),
            "unknown argument `tolerance` (did you mean `tolerances`?)"
        );
        assert_eq!(
            unknown_argument("bogus", &known),
            "unknown argument `bogus`"
        );
        assert_eq!(takes(&known), "`base`, `cand` and `tolerances`");
        assert_eq!(takes(&[]), "no arguments");
        assert!(given_more_than_once(&["capture".to_owned()])
            .starts_with("argument `capture` is given more than once: "));
        assert!(given_more_than_once(&["a".to_owned(), "b".to_owned()])
            .starts_with("arguments `a` and `b` are given more than once: "));
    }
}
