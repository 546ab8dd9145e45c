//! Integration tests of framewise-incidents.

mod concurrent;
mod roundtrip;
