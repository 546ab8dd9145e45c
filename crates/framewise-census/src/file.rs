//! `.framewise/census.json`: every census a session took, oldest first, and reading a
//! census document back (the file, or one census on its own).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::{Census, CENSUS_SCHEMA};

/// The file's schema tag.
pub const CENSUS_FILE_SCHEMA: &str = "framewise.census-file/1";
/// The file's name inside `.framewise/`.
pub const CENSUS_FILE: &str = "census.json";
/// The file keeps at most this many censuses, the newest.
pub const MAX_CENSUSES_IN_FILE: usize = 64;

/// The file's document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CensusFile {
    /// Always [`CENSUS_FILE_SCHEMA`].
    pub schema: String,
    /// The censuses, oldest first (at most [`MAX_CENSUSES_IN_FILE`], the newest).
    pub censuses: Vec<Census>,
}

impl CensusFile {
    /// A file holding these censuses (the newest [`MAX_CENSUSES_IN_FILE`] of them).
    pub fn new(mut censuses: Vec<Census>) -> Self {
        let excess = censuses.len().saturating_sub(MAX_CENSUSES_IN_FILE);
        censuses.drain(..excess);
        Self {
            schema: CENSUS_FILE_SCHEMA.to_owned(),
            censuses,
        }
    }
}

/// The file's document over borrowed censuses (what [`write_census_file`] serializes).
#[derive(Serialize)]
struct CensusFileRef<'a> {
    schema: &'a str,
    censuses: &'a [Census],
}

/// Writes `censuses` (the newest [`MAX_CENSUSES_IN_FILE`]) to `path` as a census file,
/// atomically ([`write_json_atomically`]).
pub fn write_census_file(path: &Path, censuses: &[Census]) -> std::io::Result<()> {
    let from = censuses.len().saturating_sub(MAX_CENSUSES_IN_FILE);
    let doc = CensusFileRef {
        schema: CENSUS_FILE_SCHEMA,
        censuses: &censuses[from..],
    };
    write_json_atomically(path, &doc)
}

/// Writes `doc` to `path` as pretty JSON, atomically: a temporary file beside it, renamed
/// over it, so a reader sees the previous file or this one, never a mix.
pub fn write_json_atomically<T: Serialize + ?Sized>(path: &Path, doc: &T) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(doc).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "document.json".into());
    // The process id keeps two sessions writing into one directory off each other's
    // temporary file; the rename decides which file is the latest.
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, &bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Why a census document does not read.
#[derive(Debug)]
pub enum ReadError {
    /// Not JSON, or not the shape its schema tag promises (serde's message: one line, with
    /// the line and column).
    Json(serde_json::Error),
    /// JSON, but not an object (what it is instead: "an array", "a number"…).
    NotObject(&'static str),
    /// A JSON object without a known `schema` tag.
    Schema(Option<String>),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Json(e) => write!(f, "not a census document: {e}"),
            ReadError::NotObject(what) => write!(
                f,
                "not a census document: {what}, where a JSON object with a \"schema\" field belongs"
            ),
            ReadError::Schema(Some(s)) => write!(
                f,
                "schema {s:?} is neither {CENSUS_FILE_SCHEMA:?} nor {CENSUS_SCHEMA:?}"
            ),
            ReadError::Schema(None) => write!(
                f,
                "no \"schema\" field: expected {CENSUS_FILE_SCHEMA:?} or {CENSUS_SCHEMA:?}"
            ),
        }
    }
}

impl std::error::Error for ReadError {}

/// The `schema` tag of a JSON document: `Ok(None)` for an object without one, `Err` for text
/// that is not JSON or JSON that is not an object (named: "an array", "a string"…).
pub(crate) fn schema_tag(text: &str) -> Result<Option<String>, TagError> {
    use serde_json::Value;
    match serde_json::from_str::<Value>(text).map_err(TagError::Json)? {
        Value::Object(map) => Ok(map.get("schema").and_then(Value::as_str).map(str::to_owned)),
        Value::Array(_) => Err(TagError::NotObject("an array")),
        Value::String(_) => Err(TagError::NotObject("a string")),
        Value::Number(_) => Err(TagError::NotObject("a number")),
        Value::Bool(_) => Err(TagError::NotObject("a boolean")),
        Value::Null => Err(TagError::NotObject("null")),
    }
}

/// Why a document's `schema` tag could not be read.
pub(crate) enum TagError {
    /// Not JSON.
    Json(serde_json::Error),
    /// JSON, but not an object.
    NotObject(&'static str),
}

impl From<TagError> for ReadError {
    fn from(e: TagError) -> Self {
        match e {
            TagError::Json(e) => ReadError::Json(e),
            TagError::NotObject(what) => ReadError::NotObject(what),
        }
    }
}

/// Reads a census document: a `census.json` file (every census in it, oldest first) or a
/// single census.
pub fn parse_censuses(text: &str) -> Result<Vec<Census>, ReadError> {
    match schema_tag(text)?.as_deref() {
        Some(CENSUS_FILE_SCHEMA) => serde_json::from_str::<CensusFile>(text)
            .map(|f| f.censuses)
            .map_err(ReadError::Json),
        Some(CENSUS_SCHEMA) => serde_json::from_str::<Census>(text)
            .map(|c| vec![c])
            .map_err(ReadError::Json),
        other => Err(ReadError::Schema(other.map(str::to_owned))),
    }
}

/// Reads one census (the document a capture's census record carries).
pub fn parse_census(text: &str) -> Result<Census, ReadError> {
    match schema_tag(text)?.as_deref() {
        Some(CENSUS_SCHEMA) => serde_json::from_str(text).map_err(ReadError::Json),
        other => Err(ReadError::Schema(other.map(str::to_owned))),
    }
}
