//! Workload counts equal exactly what the test issued; anything the profiler cannot see is
//! unknown, never zero.

use std::collections::HashMap;

use framewise::{CaptureLevel, Session, Workload};
use framewise_format::read::Capture;
use framewise_wgpu::{
    ComputePipeline, ComputePipelineInfo, GpuProfiler, GpuSetup, HeadlessGpu, RenderPipeline,
    RenderPipelineInfo, TIMER_FEATURES,
};

use crate::common::{self, Recording};

const LITERAL_WGSL: &str = "@compute @workgroup_size(8, 4) fn main() {}";
const OVERRIDE_WGSL: &str = "override size: u32 = 16u; @compute @workgroup_size(size) fn grow() {}";
const DRAW_WGSL: &str = "
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4<f32>(f32(i) * 0.1, 0.0, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";

struct Kit {
    literal: ComputePipeline,
    overridden: ComputePipeline,
    plain: wgpu::ComputePipeline,
    draw: RenderPipeline,
    target: wgpu::TextureView,
    index: wgpu::Buffer,
    indirect: wgpu::Buffer,
}

fn buffer(gpu: &HeadlessGpu, words: &[u32], usage: wgpu::BufferUsages) -> wgpu::Buffer {
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: (words.len() * 4) as u64,
        usage,
        mapped_at_creation: true,
    });
    let bytes: Vec<u8> = words.iter().flat_map(|word| word.to_le_bytes()).collect();
    buffer
        .slice(..)
        .get_mapped_range_mut()
        .unwrap()
        .copy_from_slice(&bytes);
    buffer.unmap();
    buffer
}

fn compute(gpu: &HeadlessGpu, wgsl: &str, entry: &str) -> wgpu::ComputePipeline {
    let module = gpu
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(wgsl.into()),
        });
    gpu.device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
}

fn kit(gpu: &HeadlessGpu, session: &Session) -> Kit {
    let module = gpu
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(DRAW_WGSL.into()),
        });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let draw = gpu
        .device
        .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("draw"),
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
    let target = gpu
        .device
        .create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: 4,
                height: 4,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        })
        .create_view(&Default::default());
    Kit {
        literal: ComputePipeline {
            raw: compute(gpu, LITERAL_WGSL, "main"),
            info: ComputePipelineInfo::from_wgsl(session, "literal", LITERAL_WGSL, None).unwrap(),
        },
        overridden: ComputePipeline {
            raw: compute(gpu, OVERRIDE_WGSL, "grow"),
            info: ComputePipelineInfo::from_wgsl(session, "overridden", OVERRIDE_WGSL, None)
                .unwrap(),
        },
        plain: compute(gpu, LITERAL_WGSL, "main"),
        draw: RenderPipeline {
            raw: draw,
            info: RenderPipelineInfo::new(
                session,
                "triangles",
                Some("vs"),
                Some(wgpu::PrimitiveTopology::TriangleList),
            ),
        },
        target,
        index: buffer(gpu, &[0; 16], wgpu::BufferUsages::INDEX),
        // Dispatch (1, 1, 1) at 0; draw (3 vertices, 1 instance) at 16; indexed draw
        // (3 indices, 1 instance) at 32.
        indirect: buffer(
            gpu,
            &[1, 1, 1, 0, 3, 1, 0, 0, 3, 1, 0, 0, 0, 0, 0, 0],
            wgpu::BufferUsages::INDIRECT,
        ),
    }
}

fn render_desc(target: &wgpu::TextureView) -> [Option<wgpu::RenderPassColorAttachment<'_>>; 1] {
    [Some(wgpu::RenderPassColorAttachment {
        view: target,
        depth_slice: None,
        resolve_target: None,
        ops: wgpu::Operations {
            load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
            store: wgpu::StoreOp::Store,
        },
    })]
}

/// Issues one frame of known work. Does not call `resolve`: `end_frame` must do it.
fn issue(session: &Session, gpu: &HeadlessGpu, profiler: &mut GpuProfiler, kit: &Kit) {
    let label = |name: &str| session.pass_label(name);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = profiler.compute_pass(&mut encoder, label("direct"), &Default::default());
        pass.set_pipeline(&kit.literal);
        pass.dispatch_workgroups(2, 3, 1);
        pass.dispatch_workgroups(1, 1, 1);
        pass.dispatch_workgroups(4, 1, 2);
    }
    {
        let mut pass = profiler.compute_pass(&mut encoder, label("indirect"), &Default::default());
        pass.set_pipeline(&kit.literal);
        pass.dispatch_workgroups(1, 1, 1);
        pass.dispatch_workgroups_indirect(&kit.indirect, 0);
    }
    {
        let mut pass = profiler.compute_pass(&mut encoder, label("override"), &Default::default());
        pass.set_pipeline(&kit.overridden);
        pass.dispatch_workgroups(5, 1, 1);
    }
    {
        let mut pass = profiler.compute_pass(&mut encoder, label("mixed"), &Default::default());
        pass.set_pipeline(&kit.literal);
        pass.dispatch_workgroups(1, 1, 1);
        pass.set_raw_pipeline(&kit.plain);
        pass.dispatch_workgroups(2, 1, 1);
    }
    {
        let mut pass = profiler.compute_pass(&mut encoder, label("escaped"), &Default::default());
        pass.set_pipeline(&kit.literal);
        pass.dispatch_workgroups(1, 1, 1);
        pass.raw().dispatch_workgroups(7, 1, 1);
    }
    drop(profiler.compute_pass(&mut encoder, label("idle"), &Default::default()));
    let attachments = render_desc(&kit.target);
    {
        let mut pass = profiler.render_pass(
            &mut encoder,
            label("draws"),
            wgpu::RenderPassDescriptor {
                color_attachments: &attachments,
                ..Default::default()
            },
        );
        pass.set_pipeline(&kit.draw);
        pass.set_index_buffer(kit.index.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw(0..6, 0..2);
        {
            let mut inner = pass.scope(label("draws.inner"));
            inner.draw_indexed(0..3, 0, 0..5);
        }
        pass.draw(0..3, 1..4);
    }
    {
        let mut pass = profiler.render_pass(
            &mut encoder,
            label("draws.indirect"),
            wgpu::RenderPassDescriptor {
                color_attachments: &attachments,
                ..Default::default()
            },
        );
        pass.set_pipeline(&kit.draw);
        pass.set_index_buffer(kit.index.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw(0..3, 0..1);
        pass.draw_indirect(&kit.indirect, 16);
        pass.draw_indexed_indirect(&kit.indirect, 32);
    }
    {
        let mut pass = profiler.render_pass(
            &mut encoder,
            label("draws.raw_pipeline"),
            wgpu::RenderPassDescriptor {
                color_attachments: &attachments,
                ..Default::default()
            },
        );
        pass.set_raw_pipeline(&kit.draw.raw);
        pass.draw(0..3, 0..2);
    }
    profiler.submit(session, [encoder.finish()]);
    profiler.end_frame(session);
}

fn workloads(
    capture: &Capture,
    frame: &framewise_format::model::Frame,
) -> HashMap<String, Workload> {
    let mut by_name = HashMap::new();
    for recorded in &frame.workloads {
        let previous = by_name.insert(
            common::name(capture, recorded.pass),
            recorded.workload.clone(),
        );
        assert!(previous.is_none(), "one workload per pass");
    }
    by_name
}

#[test]
fn workload_counts_exactly_what_was_issued() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    let recording = Recording::start(
        GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue),
        |builder| builder.level(CaptureLevel::Workload),
    );
    let session = &recording.session;
    let mut profiler = GpuProfiler::new(session, &recording.setup).unwrap();
    let kit = kit(&gpu, session);
    const FRAMES: u64 = 3;
    for frame in 0..FRAMES {
        let _frame = session.frame();
        issue(session, &gpu, &mut profiler, &kit);
        if frame == FRAMES - 1 {
            profiler
                .flush(session, std::time::Duration::from_secs(30))
                .unwrap();
        }
    }
    assert_eq!(
        profiler.stats().resolve_fallbacks,
        FRAMES,
        "end_frame resolved"
    );
    drop(profiler);
    let (report, capture, _dir) = recording.finish();
    assert_eq!(report.gpu_results_missing, 0);

    let symbol = |name: &str| {
        capture
            .symbols()
            .iter_sorted()
            .into_iter()
            .find(|symbol| symbol.name == name)
            .map(|symbol| symbol.id)
            .unwrap_or_else(|| panic!("no symbol {name}"))
    };
    let frames = common::frames(&capture);
    assert_eq!(frames.len() as u64, FRAMES);
    for frame in &frames {
        let got = workloads(&capture, frame);
        let compute = |dispatches, indirect, workgroups| Workload {
            dispatches: Some(dispatches),
            indirect_dispatches: Some(indirect),
            workgroups: Some(workgroups),
            ..Workload::default()
        };
        let literal = |mut w: Workload| {
            w.workgroup_size = Some([8, 4, 1]);
            w.pipeline = Some(symbol("literal"));
            w.entry_point = Some(symbol("main"));
            w
        };
        let mut direct = literal(compute(3, 0, 6 + 1 + 8));
        direct.invocations = Some((6 + 1 + 8) * 32);
        assert_eq!(got["direct"], direct);
        // An indirect dispatch's workgroups live on the GPU: invocations unknown.
        assert_eq!(got["indirect"], literal(compute(2, 1, 1)));
        // An override-sized workgroup is unknown, not zero, and so are its invocations.
        let mut overridden = compute(1, 0, 5);
        overridden.pipeline = Some(symbol("overridden"));
        overridden.entry_point = Some(symbol("grow"));
        assert_eq!(got["override"], overridden);
        // Two pipelines, one undescribed: no single pipeline, invocations unknown.
        assert_eq!(got["mixed"], compute(2, 0, 3));
        // Work issued around the guard cannot be counted: everything unknown.
        assert_eq!(got["escaped"], Workload::default());
        let mut idle = compute(0, 0, 0);
        idle.invocations = Some(0);
        assert_eq!(got["idle"], idle);

        let draws = |draws, indexed, indirect| Workload {
            draws: Some(draws),
            indexed_draws: Some(indexed),
            indirect_draws: Some(indirect),
            ..Workload::default()
        };
        let triangles = |mut w: Workload| {
            w.pipeline = Some(symbol("triangles"));
            w.entry_point = Some(symbol("vs"));
            w
        };
        // Work inside an in-pass scope counts towards its pass.
        let mut direct_draws = triangles(draws(3, 1, 0));
        direct_draws.instances = Some(2 + 5 + 3);
        direct_draws.vertices = Some(6 * 2 + 3 * 5 + 3 * 3);
        direct_draws.primitives = Some(2 * 2 + 5 + 3);
        assert_eq!(got["draws"], direct_draws);
        assert_eq!(got["draws.indirect"], triangles(draws(3, 1, 2)));
        let mut undescribed = draws(1, 0, 0);
        undescribed.instances = Some(2);
        undescribed.vertices = Some(6);
        assert_eq!(got["draws.raw_pipeline"], undescribed);
        assert!(!got.contains_key("draws.inner"), "scopes carry no workload");
        assert_eq!(got.len(), 9);

        // Every pass (and the in-pass scope) is in the GPU track, timed.
        let passes: Vec<(String, u32)> = frame
            .gpu
            .passes
            .iter()
            .map(|pass| {
                assert!(pass.timing.is_some());
                (common::name(&capture, pass.pass), pass.depth)
            })
            .collect();
        assert_eq!(passes.len(), 10);
        assert!(passes.contains(&("draws.inner".to_owned(), 1)));
    }
}
