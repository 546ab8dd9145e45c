//! The render graph as the capture's topology.
//!
//! In Bevy 0.19 a camera's render graph is a schedule (`Core3d` for a 3D camera, named by its
//! `CameraRenderGraph`): its nodes are systems (`main_opaque_pass_3d`, `tonemapping`…) and
//! its edges the ordering between them. Each frame, after the render graph ran, the plugin
//! describes the schedules the render world's views ran — every system a pass in the order
//! the schedule runs them (labelled by the system's short name, the name Bevy's diagnostics
//! give most passes; the scope is the system), and every ordering edge `A → B` (sets
//! flattened to their systems, implied edges removed) as a resource `after A` that A writes
//! and B reads — registers it once per distinct graph and sets it on the open frame.

use std::collections::{BTreeSet, HashMap};

use bevy::app::SubApp;
use bevy::core_pipeline::schedule::RootNonCameraView;
use bevy::ecs::schedule::{
    InternedScheduleLabel, IntoScheduleConfigs, NodeId, Schedule, Schedules,
};
use bevy::ecs::system::Local;
use bevy::ecs::world::World;
use bevy::render::camera::ExtractedCamera;
use bevy::render::renderer::{RenderGraph, RenderGraphSystems};
use framewise::TopologyId;
use framewise::{Access, EdgeDesc, PassDesc, PassKind, ResourceDesc, ResourceKind, TopologyDesc};

use super::SessionLink;

pub(super) fn install(render_app: &mut SubApp) {
    render_app.add_systems(RenderGraph, set_topology.in_set(RenderGraphSystems::Finish));
}

/// The graph last registered, by the schedules it describes.
#[derive(Default)]
pub(super) struct Registered {
    schedules: Vec<InternedScheduleLabel>,
    id: Option<TopologyId>,
}

fn set_topology(world: &mut World, mut registered: Local<Registered>) {
    let Some(link) = world.get_resource::<SessionLink>().cloned() else {
        return;
    };
    if link.with(|_| ()).is_none() {
        return;
    }
    let mut labels: Vec<InternedScheduleLabel> = Vec::new();
    let mut cameras = world.query::<&ExtractedCamera>();
    let mut auxiliary = world.query::<&RootNonCameraView>();
    let views = cameras
        .iter(world)
        .map(|camera| camera.schedule)
        .chain(auxiliary.iter(world).map(|view| view.0));
    for label in views {
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    if labels.is_empty() {
        return;
    }
    if registered.schedules != labels || registered.id.is_none() {
        let schedules = world.resource::<Schedules>();
        let graphs: Option<Vec<(String, ScheduleGraph)>> = labels
            .iter()
            .map(|label| {
                let schedule = schedules.get(*label)?;
                Some((format!("{label:?}"), schedule_graph(schedule)?))
            })
            .collect();
        // A schedule not yet run (not initialized) is described next frame.
        let Some(graphs) = graphs else {
            return;
        };
        let desc = topology(&graphs);
        registered.id = link.with(|session| session.register_topology(&desc));
        registered.schedules = labels;
    }
    if let Some(id) = registered.id {
        link.with(|session| session.set_topology(id));
    }
}

/// A schedule's systems in the order it runs them, and its ordering edges between them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScheduleGraph {
    /// System names, in run order.
    pub systems: Vec<String>,
    /// `(before, after)` indices into `systems`, implied edges removed.
    pub edges: BTreeSet<(usize, usize)>,
}

/// The graph of an initialized schedule (`None` before its first run).
fn schedule_graph(schedule: &Schedule) -> Option<ScheduleGraph> {
    let systems: Vec<_> = schedule.systems().ok()?.collect();
    let index: HashMap<NodeId, usize> = systems
        .iter()
        .enumerate()
        .map(|(i, (key, _))| (NodeId::System(*key), i))
        .collect();
    // Every system is one node; a set is two, its start and its end, with its members between:
    // `X before S` orders X before the set's start, `S before Y` the set's end before Y.
    let graph = schedule.graph();
    let mut ends: HashMap<NodeId, (usize, usize)> =
        index.iter().map(|(n, &i)| (*n, (i, i))).collect();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); systems.len()];
    let mut node = |id: NodeId, next: &mut Vec<Vec<usize>>| {
        *ends.entry(id).or_insert_with(|| {
            // A set's start precedes its end, members or not (an empty set still orders).
            next.push(vec![next.len() + 1]);
            next.push(Vec::new());
            (next.len() - 2, next.len() - 1)
        })
    };
    for (set, child) in graph.hierarchy().graph().all_edges() {
        let (set_start, set_end) = node(set, &mut next);
        let (child_start, child_end) = node(child, &mut next);
        next[set_start].push(child_start);
        next[child_end].push(set_end);
    }
    for (before, after) in graph.dependency().graph().all_edges() {
        let (_, before_end) = node(before, &mut next);
        let (after_start, _) = node(after, &mut next);
        next[before_end].push(after_start);
    }
    // System `a` runs before every system it reaches.
    let mut edges = BTreeSet::new();
    for a in 0..systems.len() {
        let mut stack = next[a].clone();
        let mut seen = vec![false; next.len()];
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            if n < systems.len() && n != a {
                edges.insert((a, n));
            }
            stack.extend(next[n].iter().copied());
        }
    }
    Some(ScheduleGraph {
        systems: systems
            .iter()
            .map(|(_, system)| system.name().as_string())
            .collect(),
        edges: reduce(systems.len(), edges),
    })
}

/// Removes the edges another path implies (transitive reduction of a DAG).
fn reduce(nodes: usize, edges: BTreeSet<(usize, usize)>) -> BTreeSet<(usize, usize)> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    for &(a, b) in &edges {
        next[a].push(b);
    }
    let reaches_without = |from: usize, to: usize| {
        // Is `to` reachable from `from` through a path of two edges or more?
        let mut stack: Vec<usize> = next[from].iter().copied().filter(|&n| n != to).collect();
        let mut seen = vec![false; nodes];
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            stack.extend(next[n].iter().copied());
        }
        false
    };
    edges
        .iter()
        .copied()
        .filter(|&(a, b)| !reaches_without(a, b))
        .collect()
}

/// A system's short name: every path in it cut to its last segment
/// (`bevy_pbr::render::light::shadow_pass<bevy_pbr::Early>` → `shadow_pass<Early>`).
pub fn short_name(system: &str) -> String {
    let mut out = String::with_capacity(system.len());
    let mut segment = String::new();
    let mut chars = system.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            segment.clear();
        } else if c.is_alphanumeric() || c == '_' {
            segment.push(c);
        } else {
            out.push_str(&segment);
            segment.clear();
            out.push(c);
        }
    }
    out.push_str(&segment);
    out
}

/// The capture's description of the schedules' graphs (`(schedule label, graph)`).
pub fn topology(graphs: &[(String, ScheduleGraph)]) -> TopologyDesc {
    let mut desc = TopologyDesc::default();
    let mut count: HashMap<String, usize> = HashMap::new();
    for (_, graph) in graphs {
        for system in &graph.systems {
            *count.entry(short_name(system)).or_default() += 1;
        }
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (schedule, graph) in graphs {
        let first = desc.passes.len() as u32;
        for system in &graph.systems {
            // A name that is not unique gets its schedule, then its rank.
            let short = short_name(system);
            let label = if count[&short] > 1 {
                let rank = seen.entry(short.clone()).or_default();
                *rank += 1;
                format!("{short} ({schedule} #{rank})")
            } else {
                short
            };
            let mut pass = PassDesc::new(label, PassKind::Other);
            pass.scope = Some(system.clone());
            desc.passes.push(pass);
        }
        let mut by_writer: HashMap<usize, u32> = HashMap::new();
        for &(a, b) in &graph.edges {
            let (a_pass, b_pass) = (first + a as u32, first + b as u32);
            let resource = *by_writer.entry(a).or_insert_with(|| {
                let label = format!("after {}", desc.passes[a_pass as usize].label);
                let mut resource = ResourceDesc::new(label, ResourceKind::Other);
                resource.transient = true;
                resource.first_use = Some(a_pass);
                desc.resources.push(resource);
                let index = desc.resources.len() as u32 - 1;
                desc.edges.push(EdgeDesc {
                    pass: a_pass,
                    resource: index,
                    access: Access::Write,
                    version: 1,
                });
                index
            });
            let last = &mut desc.resources[resource as usize].last_use;
            *last = Some(last.map_or(b_pass, |l| l.max(b_pass)));
            desc.edges.push(EdgeDesc {
                pass: b_pass,
                resource,
                access: Access::Read,
                version: 1,
            });
        }
    }
    desc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_cut_every_path() {
        assert_eq!(short_name("a::b::c"), "c");
        assert_eq!(
            short_name("a::b::pass<x::Early, y::z::Late>"),
            "pass<Early, Late>"
        );
        assert_eq!(short_name("plain"), "plain");
    }

    #[test]
    fn implied_edges_are_removed() {
        let edges = BTreeSet::from([(0, 1), (1, 2), (0, 2), (2, 3), (0, 3)]);
        assert_eq!(reduce(4, edges), BTreeSet::from([(0, 1), (1, 2), (2, 3)]));
    }

    #[test]
    fn ordering_edges_become_resources_a_writes_and_b_reads() {
        let graph = ScheduleGraph {
            systems: vec![
                "bevy_core_pipeline::prepass::node::early_prepass".into(),
                "bevy_core_pipeline::core_3d::main_opaque_pass_3d".into(),
                "bevy_core_pipeline::tonemapping::tonemapping<T>".into(),
            ],
            edges: BTreeSet::from([(0, 1), (0, 2), (1, 2)]),
        };
        let desc = topology(&[("Core3d".into(), graph)]);
        let labels: Vec<&str> = desc.passes.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            ["early_prepass", "main_opaque_pass_3d", "tonemapping<T>"]
        );
        let resources: Vec<&str> = desc.resources.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            resources,
            ["after early_prepass", "after main_opaque_pass_3d"]
        );
        assert_eq!(desc.resources[0].first_use, Some(0));
        assert_eq!(desc.resources[0].last_use, Some(2));
        let edges: Vec<(u32, u32, Access)> = desc
            .edges
            .iter()
            .map(|e| (e.pass, e.resource, e.access))
            .collect();
        assert_eq!(
            edges,
            [
                (0, 0, Access::Write),
                (1, 0, Access::Read),
                (2, 0, Access::Read),
                (1, 1, Access::Write),
                (2, 1, Access::Read),
            ]
        );
    }
}
