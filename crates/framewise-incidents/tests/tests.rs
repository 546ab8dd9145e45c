//! Integration tests of framewise-incidents.

mod concurrent;
mod fold;
mod once;
mod roundtrip;
