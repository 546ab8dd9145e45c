//! The `TOPO` payload and the topology content hash.

use crate::error::DecodeError;
use crate::model::{
    Access, PassKind, ResourceKind, SymId, Symbol, SymbolTable, TopoEdge, TopoPass, TopoResource,
    Topology,
};
use crate::payload::symbols::{decode_symbol_block, encode_symbol_block};
use crate::wire::{put_opt_sym, put_str, put_varint, Cursor};

const R_TRANSIENT: u8 = 1;
const R_IMPORTED: u8 = 2;
const R_BYTES: u8 = 4;
const R_FIRST: u8 = 8;
const R_LAST: u8 = 16;

/// Appends a TOPO payload.
pub fn encode_topology<'s>(
    out: &mut Vec<u8>,
    topo: &Topology,
    defs: impl ExactSizeIterator<Item = &'s Symbol>,
) {
    encode_symbol_block(out, defs);
    out.extend_from_slice(&topo.id.to_le_bytes());
    put_varint(out, topo.passes.len() as u64);
    for p in &topo.passes {
        put_varint(out, u64::from(p.label));
        out.push(p.kind as u8);
        out.push(u8::from(p.culled));
        put_opt_sym(out, p.scope);
    }
    put_varint(out, topo.resources.len() as u64);
    for r in &topo.resources {
        put_varint(out, u64::from(r.label));
        out.push(r.kind as u8);
        put_opt_sym(out, r.format);
        put_opt_sym(out, r.usage);
        let mut flags = 0;
        if r.transient {
            flags |= R_TRANSIENT;
        }
        if r.imported {
            flags |= R_IMPORTED;
        }
        if r.declared_bytes.is_some() {
            flags |= R_BYTES;
        }
        if r.first_use.is_some() {
            flags |= R_FIRST;
        }
        if r.last_use.is_some() {
            flags |= R_LAST;
        }
        out.push(flags);
        if let Some(b) = r.declared_bytes {
            put_varint(out, b);
        }
        for u in [r.first_use, r.last_use].into_iter().flatten() {
            put_varint(out, u64::from(u));
        }
    }
    put_varint(out, topo.edges.len() as u64);
    for e in &topo.edges {
        put_varint(out, u64::from(e.pass));
        put_varint(out, u64::from(e.resource));
        out.push(e.access as u8);
        put_varint(out, u64::from(e.version));
    }
}

/// Reads a TOPO payload.
pub fn decode_topology(payload: &[u8]) -> Result<(Vec<Symbol>, Topology), DecodeError> {
    let mut c = Cursor::new(payload);
    let symbols = decode_symbol_block(&mut c)?;
    let id = c.u64_le()?;
    let n = c.count(4)?;
    let mut passes = Vec::with_capacity(n);
    for _ in 0..n {
        let label = c.varint_u32("pass symbol")?;
        let kind = PassKind::from_u8(c.u8()?);
        let culled = c.bool("culled flag")?;
        let scope = c.opt_sym()?;
        passes.push(TopoPass {
            label,
            kind,
            culled,
            scope,
        });
    }
    let pass_index = |c: &mut Cursor<'_>, field: &'static str| -> Result<u32, DecodeError> {
        let offset = c.pos();
        let v = c.varint()?;
        u32::try_from(v)
            .ok()
            .filter(|&i| (i as usize) < passes.len())
            .ok_or(DecodeError::InvalidValue {
                field,
                value: v,
                offset,
            })
    };
    let n = c.count(5)?;
    let mut resources = Vec::with_capacity(n);
    for _ in 0..n {
        let label = c.varint_u32("resource symbol")?;
        let kind = ResourceKind::from_u8(c.u8()?);
        let format = c.opt_sym()?;
        let usage = c.opt_sym()?;
        let offset = c.pos();
        let flags = c.u8()?;
        if flags & !0x1f != 0 {
            return Err(DecodeError::InvalidValue {
                field: "resource flags",
                value: u64::from(flags),
                offset,
            });
        }
        let declared_bytes = if flags & R_BYTES != 0 {
            Some(c.varint()?)
        } else {
            None
        };
        let first_use = if flags & R_FIRST != 0 {
            Some(pass_index(&mut c, "first use")?)
        } else {
            None
        };
        let last_use = if flags & R_LAST != 0 {
            Some(pass_index(&mut c, "last use")?)
        } else {
            None
        };
        resources.push(TopoResource {
            label,
            kind,
            format,
            usage,
            declared_bytes,
            transient: flags & R_TRANSIENT != 0,
            imported: flags & R_IMPORTED != 0,
            first_use,
            last_use,
        });
    }
    let n = c.count(4)?;
    let mut edges = Vec::with_capacity(n);
    for _ in 0..n {
        let pass = pass_index(&mut c, "edge pass")?;
        let offset = c.pos();
        let r = c.varint()?;
        let resource = u32::try_from(r)
            .ok()
            .filter(|&i| (i as usize) < resources.len())
            .ok_or(DecodeError::InvalidValue {
                field: "edge resource",
                value: r,
                offset,
            })?;
        let offset = c.pos();
        let a = c.u8()?;
        let access = Access::from_u8(a).ok_or(DecodeError::InvalidValue {
            field: "access",
            value: u64::from(a),
            offset,
        })?;
        let version = c.varint_u32("resource version")?;
        edges.push(TopoEdge {
            pass,
            resource,
            access,
            version,
        });
    }
    c.finish()?;
    Ok((
        symbols,
        Topology {
            id,
            passes,
            resources,
            edges,
        },
    ))
}

/// FNV-1a, 64 bits.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The topology's content hash: FNV-1a 64 over its canonical form, in which every symbol
/// is spelled by name, so equal graphs hash equal across captures whatever ids the
/// writers assigned. The `id` field itself is not hashed. docs/FORMAT.md gives the form.
pub fn topology_id(topo: &Topology, symbols: &SymbolTable) -> u64 {
    let mut out = Vec::with_capacity(64 + 32 * topo.passes.len());
    out.extend_from_slice(b"sgpt-topo-v1");
    let name = |out: &mut Vec<u8>, id: SymId| put_str(out, symbols.name(id).unwrap_or(""));
    let opt_name = |out: &mut Vec<u8>, id: Option<SymId>| match id {
        Some(id) => {
            out.push(1);
            name(out, id);
        }
        None => out.push(0),
    };
    put_varint(&mut out, topo.passes.len() as u64);
    for p in &topo.passes {
        name(&mut out, p.label);
        out.push(p.kind as u8);
        out.push(u8::from(p.culled));
        opt_name(&mut out, p.scope);
    }
    put_varint(&mut out, topo.resources.len() as u64);
    for r in &topo.resources {
        name(&mut out, r.label);
        out.push(r.kind as u8);
        opt_name(&mut out, r.format);
        opt_name(&mut out, r.usage);
        out.push(u8::from(r.transient) | (u8::from(r.imported) << 1));
        for v in [
            r.declared_bytes,
            r.first_use.map(u64::from),
            r.last_use.map(u64::from),
        ] {
            match v {
                Some(v) => {
                    out.push(1);
                    put_varint(&mut out, v);
                }
                None => out.push(0),
            }
        }
    }
    put_varint(&mut out, topo.edges.len() as u64);
    for e in &topo.edges {
        put_varint(&mut out, u64::from(e.pass));
        put_varint(&mut out, u64::from(e.resource));
        out.push(e.access as u8);
        put_varint(&mut out, u64::from(e.version));
    }
    fnv1a64(&out)
}
