//! Integration tests of framewise-incidents.

mod concurrent;
mod derive;
mod fold;
mod once;
mod roundtrip;
mod scaffold;
