//! A GPU pass's workload counts in a `FRAM` record (docs/FORMAT.md): a presence bitmask,
//! then each present count as a varint.

use crate::error::DecodeError;
use crate::model::Workload;
use crate::wire::{put_varint, Cursor};

const W_DISPATCHES: u64 = 1 << 0;
const W_INDIRECT_DISPATCHES: u64 = 1 << 1;
const W_WORKGROUPS: u64 = 1 << 2;
const W_DRAWS: u64 = 1 << 3;
const W_INDEXED_DRAWS: u64 = 1 << 4;
const W_INDIRECT_DRAWS: u64 = 1 << 5;
const W_INSTANCES: u64 = 1 << 6;
const W_VERTICES: u64 = 1 << 7;
const W_PRIMITIVES: u64 = 1 << 8;
const W_WORKGROUP_SIZE: u64 = 1 << 9;
const W_INVOCATIONS: u64 = 1 << 10;
const W_PIPELINE: u64 = 1 << 11;
const W_ENTRY_POINT: u64 = 1 << 12;
const W_EXTRA: u64 = 1 << 13;
const W_KNOWN: u64 = (1 << 14) - 1;

pub(super) fn encode_workload(out: &mut Vec<u8>, w: &Workload) {
    let counts = [
        (W_DISPATCHES, w.dispatches),
        (W_INDIRECT_DISPATCHES, w.indirect_dispatches),
        (W_WORKGROUPS, w.workgroups),
        (W_DRAWS, w.draws),
        (W_INDEXED_DRAWS, w.indexed_draws),
        (W_INDIRECT_DRAWS, w.indirect_draws),
        (W_INSTANCES, w.instances),
        (W_VERTICES, w.vertices),
        (W_PRIMITIVES, w.primitives),
    ];
    let mut mask = 0u64;
    for (bit, v) in counts {
        if v.is_some() {
            mask |= bit;
        }
    }
    if w.workgroup_size.is_some() {
        mask |= W_WORKGROUP_SIZE;
    }
    if w.invocations.is_some() {
        mask |= W_INVOCATIONS;
    }
    if w.pipeline.is_some() {
        mask |= W_PIPELINE;
    }
    if w.entry_point.is_some() {
        mask |= W_ENTRY_POINT;
    }
    if !w.extra.is_empty() {
        mask |= W_EXTRA;
    }
    put_varint(out, mask);
    for (_, v) in counts {
        if let Some(v) = v {
            put_varint(out, v);
        }
    }
    if let Some(size) = w.workgroup_size {
        for s in size {
            put_varint(out, u64::from(s));
        }
    }
    if let Some(v) = w.invocations {
        put_varint(out, v);
    }
    for s in [w.pipeline, w.entry_point].into_iter().flatten() {
        put_varint(out, u64::from(s));
    }
    if !w.extra.is_empty() {
        put_varint(out, w.extra.len() as u64);
        for (label, value) in &w.extra {
            put_varint(out, u64::from(*label));
            put_varint(out, *value);
        }
    }
}

pub(super) fn decode_workload(c: &mut Cursor<'_>) -> Result<Workload, DecodeError> {
    let offset = c.pos();
    let mask = c.varint()?;
    if mask & !W_KNOWN != 0 {
        return Err(DecodeError::InvalidValue {
            field: "workload mask",
            value: mask,
            offset,
        });
    }
    let opt = |bit: u64, c: &mut Cursor<'_>| -> Result<Option<u64>, DecodeError> {
        if mask & bit != 0 {
            c.varint().map(Some)
        } else {
            Ok(None)
        }
    };
    let mut w = Workload {
        dispatches: opt(W_DISPATCHES, c)?,
        indirect_dispatches: opt(W_INDIRECT_DISPATCHES, c)?,
        workgroups: opt(W_WORKGROUPS, c)?,
        draws: opt(W_DRAWS, c)?,
        indexed_draws: opt(W_INDEXED_DRAWS, c)?,
        indirect_draws: opt(W_INDIRECT_DRAWS, c)?,
        instances: opt(W_INSTANCES, c)?,
        vertices: opt(W_VERTICES, c)?,
        primitives: opt(W_PRIMITIVES, c)?,
        ..Workload::default()
    };
    if mask & W_WORKGROUP_SIZE != 0 {
        w.workgroup_size = Some([
            c.varint_u32("workgroup size")?,
            c.varint_u32("workgroup size")?,
            c.varint_u32("workgroup size")?,
        ]);
    }
    w.invocations = opt(W_INVOCATIONS, c)?;
    if mask & W_PIPELINE != 0 {
        w.pipeline = Some(c.varint_u32("pipeline symbol")?);
    }
    if mask & W_ENTRY_POINT != 0 {
        w.entry_point = Some(c.varint_u32("entry point symbol")?);
    }
    if mask & W_EXTRA != 0 {
        let n = c.count(2)?;
        w.extra.reserve(n);
        for _ in 0..n {
            w.extra
                .push((c.varint_u32("workload label symbol")?, c.varint()?));
        }
    }
    Ok(w)
}
