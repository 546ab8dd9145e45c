//! framewise-census's tests: the census's derived counts, every hint kind and its
//! threshold, the census file, and the bisection protocol over a synthetic engine.

mod bisect;
mod census;
mod hints;
mod scene;
