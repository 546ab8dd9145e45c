//! Integration tests of the `framewise` binary: each runs the built binary against a
//! temporary directory and asserts exit codes and outputs (snapshots with floats and paths
//! redacted).

#[expect(
    clippy::unwrap_used,
    reason = "fixture helpers fail the test loudly on a broken temp dir"
)]
mod support;

mod agent_loop;
mod append;
mod attribute;
mod bench;
mod bisect;
#[expect(
    clippy::unwrap_used,
    reason = "fixture helpers fail the test loudly on a broken temp dir or bad JSON"
)]
mod census;
mod compare;
mod damaged;
mod demo;
mod doctor;
mod errors;
mod footprint;
mod golden;
mod hitches;
mod hostile;
mod init;
mod inspect;
mod ledger;
mod lists;
#[expect(
    clippy::unwrap_used,
    reason = "the MCP client's helpers fail the test loudly on a broken pipe or bad JSON"
)]
mod mcp;
mod outputs;
mod summarize;
mod trace;
mod view;
