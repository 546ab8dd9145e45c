//! The `META` payload: a symbol block, then tagged fields (`tag varint, length varint,
//! value`). Readers skip tags they do not know; a known tag's value must be consumed
//! exactly. Repeatable tags append to a list.

use crate::error::DecodeError;
use crate::model::{
    AdapterInfo, AdapterType, CpuClock, GpuQueueClock, Meta, RenderSettings, Symbol,
};
use crate::payload::symbols::{decode_symbol_block, encode_symbol_block};
use crate::wire::{put_str, put_varint, Cursor};

/// META field tags (see docs/FORMAT.md).
pub mod tag {
    /// 16 raw bytes.
    pub const SESSION_ID: u64 = 1;
    /// varint, ns since the Unix epoch.
    pub const WALL_CLOCK_START: u64 = 2;
    /// u8.
    pub const CAPTURE_LEVEL: u64 = 3;
    /// string.
    pub const BUILD_ID: u64 = 4;
    /// string source, f64 resolution_ns.
    pub const CPU_CLOCK: u64 = 5;
    /// varint queue symbol, f64 timestamp period (ns per tick). Repeatable.
    pub const GPU_CLOCK: u64 = 6;
    /// string key, string value. Repeatable.
    pub const HOST: u64 = 7;
    /// strings vendor, device, driver; u8 adapter type; string backend.
    pub const ADAPTER: u64 = 8;
    /// string key, string value. Repeatable.
    pub const FEATURE: u64 = 9;
    /// u8 flags, [varint w, h internal], [varint w, h output], string upscaler.
    pub const RENDER: u64 = 10;
    /// string.
    pub const SCENE_SCALE: u64 = 11;
    /// f64 ns per scope.
    pub const RECORDER_OVERHEAD: u64 = 12;
    /// varint ns.
    pub const FRAME_BUDGET: u64 = 13;
    /// string key, string value. Repeatable.
    pub const SITUATION: u64 = 14;
    /// string.
    pub const NOTE: u64 = 15;
    /// string key, string value. Repeatable.
    pub const SETTING: u64 = 16;
    /// string.
    pub const WRITER: u64 = 17;
}

fn field(out: &mut Vec<u8>, tag: u64, value: &[u8]) {
    put_varint(out, tag);
    put_varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

fn kv(key: &str, value: &str) -> Vec<u8> {
    let mut v = Vec::new();
    put_str(&mut v, key);
    put_str(&mut v, value);
    v
}

fn string(value: &str) -> Vec<u8> {
    let mut v = Vec::new();
    put_str(&mut v, value);
    v
}

/// Appends a META payload.
pub fn encode_meta<'s>(
    out: &mut Vec<u8>,
    meta: &Meta,
    symbols: impl ExactSizeIterator<Item = &'s Symbol>,
) {
    encode_symbol_block(out, symbols);
    field(out, tag::SESSION_ID, &meta.session_id);
    let mut v = Vec::new();
    put_varint(&mut v, meta.wall_clock_start_unix_ns);
    field(out, tag::WALL_CLOCK_START, &v);
    field(out, tag::CAPTURE_LEVEL, &[meta.capture_level]);
    if !meta.build_id.is_empty() {
        field(out, tag::BUILD_ID, &string(&meta.build_id));
    }
    let mut v = string(&meta.cpu_clock.source);
    v.extend_from_slice(&meta.cpu_clock.resolution_ns.to_le_bytes());
    field(out, tag::CPU_CLOCK, &v);
    for clock in &meta.gpu_clocks {
        let mut v = Vec::new();
        put_varint(&mut v, u64::from(clock.queue));
        v.extend_from_slice(&clock.timestamp_period_ns.to_le_bytes());
        field(out, tag::GPU_CLOCK, &v);
    }
    for (k, val) in &meta.host {
        field(out, tag::HOST, &kv(k, val));
    }
    if let Some(a) = &meta.adapter {
        let mut v = string(&a.vendor);
        put_str(&mut v, &a.device);
        put_str(&mut v, &a.driver);
        v.push(a.adapter_type as u8);
        put_str(&mut v, &a.backend);
        field(out, tag::ADAPTER, &v);
    }
    for (k, val) in &meta.features {
        field(out, tag::FEATURE, &kv(k, val));
    }
    if let Some(r) = &meta.render {
        let mut v = vec![
            u8::from(r.internal_resolution.is_some())
                | (u8::from(r.output_resolution.is_some()) << 1),
        ];
        for (w, h) in [r.internal_resolution, r.output_resolution]
            .into_iter()
            .flatten()
        {
            put_varint(&mut v, u64::from(w));
            put_varint(&mut v, u64::from(h));
        }
        put_str(&mut v, &r.upscaler);
        field(out, tag::RENDER, &v);
    }
    if !meta.scene_scale.is_empty() {
        field(out, tag::SCENE_SCALE, &string(&meta.scene_scale));
    }
    if let Some(o) = meta.recorder_overhead_ns_per_scope {
        field(out, tag::RECORDER_OVERHEAD, &o.to_le_bytes());
    }
    if let Some(b) = meta.frame_budget_ns {
        let mut v = Vec::new();
        put_varint(&mut v, b);
        field(out, tag::FRAME_BUDGET, &v);
    }
    for (k, val) in &meta.situation {
        field(out, tag::SITUATION, &kv(k, val));
    }
    if !meta.note.is_empty() {
        field(out, tag::NOTE, &string(&meta.note));
    }
    for (k, val) in &meta.settings {
        field(out, tag::SETTING, &kv(k, val));
    }
    if !meta.writer.is_empty() {
        field(out, tag::WRITER, &string(&meta.writer));
    }
}

fn read_kv(c: &mut Cursor<'_>) -> Result<(String, String), DecodeError> {
    Ok((c.string()?, c.string()?))
}

/// Reads a META payload: its symbols and its fields.
pub fn decode_meta(payload: &[u8]) -> Result<(Vec<Symbol>, Meta), DecodeError> {
    let mut c = Cursor::new(payload);
    let symbols = decode_symbol_block(&mut c)?;
    let mut meta = Meta::default();
    while c.remaining() > 0 {
        let tag = c.varint()?;
        let len = c.count(1)?;
        let mut v = Cursor::new(c.bytes(len)?);
        match tag {
            tag::SESSION_ID => {
                meta.session_id.copy_from_slice(v.bytes(16)?);
            }
            tag::WALL_CLOCK_START => meta.wall_clock_start_unix_ns = v.varint()?,
            tag::CAPTURE_LEVEL => meta.capture_level = v.u8()?,
            tag::BUILD_ID => meta.build_id = v.string()?,
            tag::CPU_CLOCK => {
                meta.cpu_clock = CpuClock {
                    source: v.string()?,
                    resolution_ns: v.f64_le()?,
                };
            }
            tag::GPU_CLOCK => meta.gpu_clocks.push(GpuQueueClock {
                queue: v.varint_u32("queue symbol")?,
                timestamp_period_ns: v.f64_le()?,
            }),
            tag::HOST => meta.host.push(read_kv(&mut v)?),
            tag::ADAPTER => {
                let vendor = v.string()?;
                let device = v.string()?;
                let driver = v.string()?;
                let adapter_type = match v.u8()? {
                    1 => AdapterType::Hardware,
                    2 => AdapterType::Software,
                    _ => AdapterType::Unknown,
                };
                let backend = v.string()?;
                meta.adapter = Some(AdapterInfo {
                    vendor,
                    device,
                    driver,
                    adapter_type,
                    backend,
                });
            }
            tag::FEATURE => meta.features.push(read_kv(&mut v)?),
            tag::RENDER => {
                let flags = v.u8()?;
                let mut read_res = |present: bool| -> Result<Option<(u32, u32)>, DecodeError> {
                    if !present {
                        return Ok(None);
                    }
                    Ok(Some((v.varint_u32("width")?, v.varint_u32("height")?)))
                };
                let internal_resolution = read_res(flags & 1 != 0)?;
                let output_resolution = read_res(flags & 2 != 0)?;
                let upscaler = v.string()?;
                meta.render = Some(RenderSettings {
                    internal_resolution,
                    output_resolution,
                    upscaler,
                });
            }
            tag::SCENE_SCALE => meta.scene_scale = v.string()?,
            tag::RECORDER_OVERHEAD => meta.recorder_overhead_ns_per_scope = Some(v.f64_le()?),
            tag::FRAME_BUDGET => meta.frame_budget_ns = Some(v.varint()?),
            tag::SITUATION => meta.situation.push(read_kv(&mut v)?),
            tag::NOTE => meta.note = v.string()?,
            tag::SETTING => meta.settings.push(read_kv(&mut v)?),
            tag::WRITER => meta.writer = v.string()?,
            _ => continue, // unknown tag: skipped whole
        }
        v.finish()?;
    }
    Ok((symbols, meta))
}
