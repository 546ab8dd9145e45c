//! What the profiler knows about a pipeline: its label, entry point and (compute) workgroup
//! size, and the primitive topology of a render pipeline. wgpu does not let anyone read these
//! back from a pipeline object, so the host describes each pipeline once, when it makes it.

use framewise::{Label, Session};

use crate::error::WgslError;

/// A compute pipeline as the workload records it. Describe it once, when the pipeline is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputePipelineInfo {
    pub(crate) label: Label,
    pub(crate) entry_point: Option<Label>,
    pub(crate) workgroup_size: Option<[u32; 3]>,
}

impl ComputePipelineInfo {
    /// A pipeline whose workgroup size the host states (`None`: unknown, never zero).
    pub fn new(
        session: &Session,
        label: &str,
        entry_point: Option<&str>,
        workgroup_size: Option<[u32; 3]>,
    ) -> Self {
        Self {
            label: session.pipeline_label(label),
            entry_point: entry_point.map(|name| session.label(name)),
            workgroup_size,
        }
    }

    /// A pipeline whose workgroup size is read from its WGSL: known when `@workgroup_size`
    /// is a literal (or a `const` expression the compiler folds to one), unknown when any
    /// dimension is a pipeline-overridable constant. `entry_point` may be `None` when the
    /// module has exactly one compute entry point.
    pub fn from_wgsl(
        session: &Session,
        label: &str,
        wgsl: &str,
        entry_point: Option<&str>,
    ) -> Result<Self, WgslError> {
        let (name, workgroup_size) = workgroup_size_from_wgsl(wgsl, entry_point)?;
        Ok(Self::new(session, label, Some(&name), workgroup_size))
    }

    /// The workgroup size, when known.
    pub fn workgroup_size(&self) -> Option<[u32; 3]> {
        self.workgroup_size
    }

    /// The pipeline label's symbol.
    pub fn label(&self) -> Label {
        self.label
    }
}

/// A compute pipeline and its description, for
/// [`TimedComputePass::set_pipeline`](crate::TimedComputePass::set_pipeline).
#[derive(Clone, Debug)]
pub struct ComputePipeline {
    /// The wgpu pipeline.
    pub raw: wgpu::ComputePipeline,
    /// What the workload records about it.
    pub info: ComputePipelineInfo,
}

/// A render pipeline as the workload records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderPipelineInfo {
    pub(crate) label: Label,
    pub(crate) entry_point: Option<Label>,
    pub(crate) topology: Option<wgpu::PrimitiveTopology>,
}

impl RenderPipelineInfo {
    /// A render pipeline: its label, vertex entry point, and primitive topology (`None`:
    /// unknown, and the pass's primitive count is then unknown).
    pub fn new(
        session: &Session,
        label: &str,
        vertex_entry_point: Option<&str>,
        topology: Option<wgpu::PrimitiveTopology>,
    ) -> Self {
        Self {
            label: session.pipeline_label(label),
            entry_point: vertex_entry_point.map(|name| session.label(name)),
            topology,
        }
    }

    /// The pipeline label's symbol.
    pub fn label(&self) -> Label {
        self.label
    }
}

/// A render pipeline and its description, for
/// [`TimedRenderPass::set_pipeline`](crate::TimedRenderPass::set_pipeline).
#[derive(Clone, Debug)]
pub struct RenderPipeline {
    /// The wgpu pipeline.
    pub raw: wgpu::RenderPipeline,
    /// What the workload records about it.
    pub info: RenderPipelineInfo,
}

/// Primitives one instance of a draw of `count` vertices (or indices) assembles.
pub(crate) fn primitives(topology: wgpu::PrimitiveTopology, count: u64) -> u64 {
    match topology {
        wgpu::PrimitiveTopology::PointList => count,
        wgpu::PrimitiveTopology::LineList => count / 2,
        wgpu::PrimitiveTopology::LineStrip => count.saturating_sub(1),
        wgpu::PrimitiveTopology::TriangleList => count / 3,
        wgpu::PrimitiveTopology::TriangleStrip => count.saturating_sub(2),
    }
}

/// Reads a compute entry point's `@workgroup_size` from WGSL with naga, the front end wgpu
/// compiles the same source with. Returns the entry point's name and its size: `Some` when
/// every dimension is a literal or a constant expression, `None` when any is a
/// pipeline-overridable constant (unknown until the pipeline is made, never zero).
pub fn workgroup_size_from_wgsl(
    wgsl: &str,
    entry_point: Option<&str>,
) -> Result<(String, Option<[u32; 3]>), WgslError> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|error| WgslError::Parse {
        message: error.message().to_owned(),
    })?;
    let mut compute = module
        .entry_points
        .iter()
        .filter(|entry| entry.stage == naga::ShaderStage::Compute);
    let entry = match entry_point {
        Some(name) => compute
            .clone()
            .find(|entry| entry.name == name)
            .ok_or_else(|| WgslError::NoSuchEntryPoint {
                entry_point: name.to_owned(),
                found: compute
                    .map(|entry| entry.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?,
        None => {
            let count = compute.clone().count();
            match (compute.next(), count) {
                (Some(entry), 1) => entry,
                _ => return Err(WgslError::AmbiguousEntryPoint { count }),
            }
        }
    };
    let overridden = entry
        .workgroup_size_overrides
        .is_some_and(|dims| dims.iter().any(Option::is_some));
    let size = (!overridden).then_some(entry.workgroup_size);
    Ok((entry.name.clone(), size))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly by design")]

    use super::*;

    #[test]
    fn literal_sizes_are_read_and_missing_dimensions_are_one() {
        let wgsl = "@compute @workgroup_size(64) fn main() {}";
        assert_eq!(
            workgroup_size_from_wgsl(wgsl, None).unwrap(),
            ("main".to_owned(), Some([64, 1, 1]))
        );
        let wgsl = "@compute @workgroup_size(8u, 0x4, 2i) fn tile() {}";
        assert_eq!(
            workgroup_size_from_wgsl(wgsl, Some("tile")).unwrap().1,
            Some([8, 4, 2])
        );
    }

    #[test]
    fn const_expressions_fold_and_overrides_are_unknown_not_zero() {
        let wgsl = "const W: u32 = 16u; @compute @workgroup_size(W, W / 2) fn main() {}";
        assert_eq!(
            workgroup_size_from_wgsl(wgsl, None).unwrap().1,
            Some([16, 8, 1])
        );
        let wgsl = "override W: u32 = 64u; @compute @workgroup_size(W) fn main() {}";
        assert_eq!(workgroup_size_from_wgsl(wgsl, None).unwrap().1, None);
        let wgsl = "override H: u32 = 4u; @compute @workgroup_size(8, H) fn main() {}";
        assert_eq!(workgroup_size_from_wgsl(wgsl, None).unwrap().1, None);
    }

    #[test]
    fn entry_points_are_chosen_by_name_or_uniqueness() {
        let wgsl = "@compute @workgroup_size(1) fn a() {} @compute @workgroup_size(2) fn b() {}";
        assert_eq!(
            workgroup_size_from_wgsl(wgsl, Some("b")).unwrap().1,
            Some([2, 1, 1])
        );
        assert!(matches!(
            workgroup_size_from_wgsl(wgsl, None),
            Err(WgslError::AmbiguousEntryPoint { count: 2 })
        ));
        let error = workgroup_size_from_wgsl(wgsl, Some("c")).unwrap_err();
        assert!(error.to_string().contains("a, b"), "{error}");
        assert!(matches!(
            workgroup_size_from_wgsl("fn (", None),
            Err(WgslError::Parse { .. })
        ));
    }

    #[test]
    fn primitive_counts_follow_the_topology() {
        use wgpu::PrimitiveTopology as T;
        assert_eq!(primitives(T::TriangleList, 9), 3);
        assert_eq!(primitives(T::TriangleStrip, 5), 3);
        assert_eq!(primitives(T::TriangleStrip, 1), 0);
        assert_eq!(primitives(T::LineList, 4), 2);
        assert_eq!(primitives(T::LineStrip, 4), 3);
        assert_eq!(primitives(T::PointList, 4), 4);
    }
}
