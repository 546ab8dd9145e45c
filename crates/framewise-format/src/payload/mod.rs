//! Payload codecs: one module per record type, each a pair of `encode_*` / `decode_*`
//! functions over the [`crate::model`] types. Every payload opens with a symbol block.

pub mod census;
pub mod frame;
pub mod meta;
pub mod symbols;
pub mod topo;
pub mod tracks;

pub use census::{decode_census, encode_census};
#[cfg(target_arch = "x86_64")]
pub use frame::encode_frame_bmi2;
pub use frame::{
    decode_frame, encode_frame, encode_frame_checked, peek_frame, FrameDecoder, FramePeek,
};
pub use meta::{decode_meta, encode_meta};
pub use symbols::{decode_symbol_block, encode_symbol_block};
pub use topo::{decode_topology, encode_topology, topology_id};
pub use tracks::{decode_counter_track, decode_directory, encode_counter_track, encode_directory};
