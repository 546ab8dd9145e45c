//! Any bytes, as one line the MCP server reads on stdin (`framewise mcp`): classified as a
//! message for the service, an error to answer, or nothing to do. Never panics; an answer is
//! one line of JSON-RPC 2.0 with code -32700 (no JSON), -32600 (JSON that is no message),
//! -32602 (a message whose params are wrong: a key given twice, a request before
//! `initialize`) or -32022 (a protocol revision not served), whose `id` is the line's own when
//! it could be read, else null.
#![no_main]

use framewise_cli::parsers::{mcp_line, Line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // A line never holds its `\n`: the transport splits at it.
    let line = data.split(|b| *b == b'\n').next().unwrap_or_default();
    match mcp_line(line) {
        Line::Answer(answer) => {
            let json = serde_json::to_string(&answer).expect("an answer serializes");
            assert!(!json.contains('\n'), "{json}");
            let back: serde_json::Value = serde_json::from_str(&json).expect("it is JSON");
            assert_eq!(back["jsonrpc"], "2.0", "{json}");
            let code = back["error"]["code"].as_i64();
            assert!(
                matches!(code, Some(-32700 | -32600 | -32602 | -32022)),
                "{json}"
            );
            assert!(!answer.error.message.is_empty(), "{json}");
            if code == Some(-32700) {
                assert!(answer.id.is_null(), "{json}");
            }
            assert!(
                answer.id.is_null()
                    || answer.id.is_string()
                    || answer.id.is_i64()
                    || answer.id.is_u64(),
                "{json}"
            );
        }
        Line::Message(_) | Line::Skip => {}
    }
});
