//! `framewise`: the command-line face of framewise — verdicts with meaningful exit codes.
//!
//! Who should use this binary: people and CI pipelines that want a capture summarized,
//! compared, gated or exported, and coding agents that act on its JSON and exit codes (see
//! `docs/CLI.md`). Programs that want the numbers in-process should link
//! `framewise-analysis` instead. The verbs live in the `framewise_cli` library beside this
//! file (`src/lib.rs`), which parses the arguments and maps errors to exit codes.

#![forbid(unsafe_code)]

/// Counts heap allocations per frame for `framewise demo`'s `allocations` counter (only a
/// binary can choose the global allocator); without it the demo leaves that counter out
/// rather than write 0. It counts only the demo's threads: every other verb is unaffected
/// but for one atomic load and one thread-local read per allocation.
#[global_allocator]
static ALLOCATOR: framewise_demo::CountingAlloc = framewise_demo::CountingAlloc::new();

fn main() -> std::process::ExitCode {
    framewise_cli::main()
}
