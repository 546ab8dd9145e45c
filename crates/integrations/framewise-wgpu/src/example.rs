//! A small, real GPU workload instrumented with the profiler: particles updated by a compute
//! pass and drawn, instanced, into an offscreen texture by a render pass, inside one encoder
//! scope. The demo (`framewise demo --gpu`), the tests and the benchmark all run it.
//!
//! Per frame it records, in this order and nesting:
//!
//! ```text
//! gpu.frame                 encoder scope (timed with TIMESTAMP_QUERY_INSIDE_ENCODERS)
//! ├─ particles.update       compute pass: 1 dispatch of ceil(particles / 64) workgroups
//! └─ particles.draw         render pass: 1 draw of 3 vertices × particles instances
//!    └─ particles.instances scope inside the pass (TIMESTAMP_QUERY_INSIDE_PASSES)
//! ```

use framewise::{
    Access, EdgeDesc, PassDesc, PassKind, PassLabel, ResourceDesc, ResourceKind, Session,
    TopologyDesc,
};

use crate::pass::EncoderScope;
use crate::pipeline::{ComputePipeline, ComputePipelineInfo, RenderPipeline, RenderPipelineInfo};
use crate::profiler::GpuProfiler;

/// Workgroup size of the update shader (a literal in its WGSL).
pub const UPDATE_WORKGROUP_SIZE: u32 = 64;

const UPDATE_WGSL: &str = r"
struct Particle {
    position: vec2<f32>,
    velocity: vec2<f32>,
}

@group(0) @binding(0) var<storage, read_write> particles: array<Particle>;

@compute @workgroup_size(64)
fn update(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= arrayLength(&particles) {
        return;
    }
    var p = particles[i];
    p.velocity.y = p.velocity.y - 9.81 * 0.001;
    p.position = p.position + p.velocity * 0.016;
    if p.position.y < -1.0 {
        p.position.y = 1.0;
        p.velocity.y = 0.0;
    }
    particles[i] = p;
}
";

const DRAW_WGSL: &str = r"
struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) shade: f32,
}

@vertex
fn vs(@builtin(vertex_index) corner: u32, @location(0) center: vec2<f32>) -> VertexOut {
    var offsets = array<vec2<f32>, 3>(
        vec2<f32>(-0.01, -0.01),
        vec2<f32>(0.01, -0.01),
        vec2<f32>(0.0, 0.01),
    );
    var out: VertexOut;
    out.position = vec4<f32>(center + offsets[corner], 0.0, 1.0);
    out.shade = 0.5 + 0.5 * center.y;
    return out;
}

@fragment
fn fs(in: VertexOut) -> @location(0) vec4<f32> {
    return vec4<f32>(in.shade, 0.4, 1.0 - in.shade, 1.0);
}
";

/// Sizes of the [`ExampleWorkload`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExampleConfig {
    /// Particles updated and drawn each frame.
    pub particles: u32,
    /// Offscreen target width × height in pixels.
    pub target_size: (u32, u32),
}

impl Default for ExampleConfig {
    fn default() -> Self {
        Self {
            particles: 16_384,
            target_size: (256, 256),
        }
    }
}

impl ExampleConfig {
    /// The default configuration with `particles` particles.
    pub fn with_particles(particles: u32) -> Self {
        Self {
            particles,
            ..Self::default()
        }
    }
}

/// The pass labels the workload records under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExampleLabels {
    /// The encoder scope around the frame's GPU work.
    pub frame: PassLabel,
    /// The compute pass.
    pub update: PassLabel,
    /// The render pass.
    pub draw: PassLabel,
    /// The scope inside the render pass.
    pub instances: PassLabel,
}

/// Particles: a compute pass updates them, a render pass draws them offscreen.
#[derive(Debug)]
pub struct ExampleWorkload {
    config: ExampleConfig,
    labels: ExampleLabels,
    update: ComputePipeline,
    draw: RenderPipeline,
    particles: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    target: wgpu::TextureView,
}

impl ExampleWorkload {
    /// Makes the pipelines, buffers and offscreen target on `device`, and interns the labels
    /// in `session`.
    pub fn new(session: &Session, device: &wgpu::Device, config: ExampleConfig) -> Self {
        let labels = ExampleLabels {
            frame: session.pass_label("gpu.frame"),
            update: session.pass_label("particles.update"),
            draw: session.pass_label("particles.draw"),
            instances: session.pass_label("particles.instances"),
        };
        let particle_count = config.particles.max(1);
        let mut initial = Vec::with_capacity(particle_count as usize * 16);
        for i in 0..particle_count {
            // A deterministic spread over the target, with small sideways velocities.
            let x = (i % 256) as f32 / 128.0 - 1.0;
            let y = ((i / 256) % 256) as f32 / 128.0 - 1.0;
            let vx = ((i % 7) as f32 - 3.0) * 0.001;
            for value in [x, y, vx, 0.0f32] {
                initial.extend_from_slice(&value.to_le_bytes());
            }
        }
        let particles = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("particles"),
            size: initial.len() as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::VERTEX,
            mapped_at_creation: true,
        });
        if let Ok(mut mapped) = particles.slice(..).get_mapped_range_mut() {
            mapped.copy_from_slice(&initial);
        }
        particles.unmap();

        let update_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("particles.update"),
            source: wgpu::ShaderSource::Wgsl(UPDATE_WGSL.into()),
        });
        let update_raw = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("particles.update"),
            layout: None,
            module: &update_module,
            entry_point: Some("update"),
            compilation_options: Default::default(),
            cache: None,
        });
        // The literal is in the source above; reading it back cannot fail, but an unknown
        // size is the honest fallback.
        let update_info = ComputePipelineInfo::from_wgsl(
            session,
            "particles.update",
            UPDATE_WGSL,
            Some("update"),
        )
        .unwrap_or_else(|_| {
            ComputePipelineInfo::new(session, "particles.update", Some("update"), None)
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("particles"),
            layout: &update_raw.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: particles.as_entire_binding(),
            }],
        });

        let draw_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("particles.draw"),
            source: wgpu::ShaderSource::Wgsl(DRAW_WGSL.into()),
        });
        let format = wgpu::TextureFormat::Rgba8Unorm;
        let draw_raw = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("particles.draw"),
            layout: None,
            vertex: wgpu::VertexState {
                module: &draw_module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: 16,
                    step_mode: wgpu::VertexStepMode::Instance,
                    attributes: &[wgpu::VertexAttribute {
                        format: wgpu::VertexFormat::Float32x2,
                        offset: 0,
                        shader_location: 0,
                    }],
                })],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &draw_module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let draw_info = RenderPipelineInfo::new(
            session,
            "particles.draw",
            Some("vs"),
            Some(wgpu::PrimitiveTopology::TriangleList),
        );
        let (width, height) = config.target_size;
        let target = device
            .create_texture(&wgpu::TextureDescriptor {
                label: Some("particles.target"),
                size: wgpu::Extent3d {
                    width: width.max(1),
                    height: height.max(1),
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            })
            .create_view(&wgpu::TextureViewDescriptor::default());

        Self {
            config: ExampleConfig {
                particles: particle_count,
                ..config
            },
            labels,
            update: ComputePipeline {
                raw: update_raw,
                info: update_info,
            },
            draw: RenderPipeline {
                raw: draw_raw,
                info: draw_info,
            },
            particles,
            bind_group,
            target,
        }
    }

    /// The labels the workload records under.
    pub fn labels(&self) -> ExampleLabels {
        self.labels
    }

    /// The configuration (particles at least 1).
    pub fn config(&self) -> ExampleConfig {
        self.config
    }

    /// Workgroups the update pass dispatches each frame.
    pub fn update_workgroups(&self) -> u32 {
        self.config.particles.div_ceil(UPDATE_WORKGROUP_SIZE)
    }

    /// The workload's frame graph: the two passes and the two resources they touch. GPU
    /// passes carry the same labels, so the capture maps each timed pass onto its node.
    /// Register it once with `Session::register_topology`, then `set_topology` each frame.
    pub fn topology(&self) -> TopologyDesc {
        let (width, height) = self.config.target_size;
        let mut particles = ResourceDesc::new("particles", ResourceKind::Buffer);
        particles.declared_bytes = Some(u64::from(self.config.particles) * 16);
        particles.usage = Some("STORAGE | VERTEX".to_owned());
        particles.first_use = Some(0);
        particles.last_use = Some(1);
        let mut target = ResourceDesc::new("particles.target", ResourceKind::Texture);
        target.format = Some("Rgba8Unorm".to_owned());
        target.usage = Some("RENDER_ATTACHMENT".to_owned());
        target.declared_bytes = Some(u64::from(width.max(1)) * u64::from(height.max(1)) * 4);
        target.transient = true;
        target.first_use = Some(1);
        target.last_use = Some(1);
        let edge = |pass, resource, access, version| EdgeDesc {
            pass,
            resource,
            access,
            version,
        };
        TopologyDesc {
            passes: vec![
                PassDesc::new("particles.update", PassKind::Compute),
                PassDesc::new("particles.draw", PassKind::Render),
            ],
            resources: vec![particles, target],
            edges: vec![
                edge(0, 0, Access::ReadWrite, 1),
                edge(1, 0, Access::Read, 1),
                edge(1, 1, Access::Write, 1),
            ],
        }
    }

    /// Records one frame's GPU work into `encoder` through `gpu`.
    pub fn encode(&self, gpu: &mut GpuProfiler, encoder: &mut wgpu::CommandEncoder) {
        let mut frame = gpu.scope(encoder, self.labels.frame);
        self.encode_in(&mut frame);
    }

    fn encode_in(&self, frame: &mut EncoderScope<'_>) {
        {
            let mut update = frame.compute_pass(
                self.labels.update,
                &wgpu::ComputePassDescriptor {
                    label: Some("particles.update"),
                    timestamp_writes: None,
                },
            );
            update.set_pipeline(&self.update);
            update.set_bind_group(0, &self.bind_group, &[]);
            update.dispatch_workgroups(self.update_workgroups(), 1, 1);
        }
        let mut draw = frame.render_pass(
            self.labels.draw,
            wgpu::RenderPassDescriptor {
                label: Some("particles.draw"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &self.target,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                ..Default::default()
            },
        );
        draw.set_pipeline(&self.draw);
        draw.set_vertex_buffer(0, self.particles.slice(..));
        let mut instances = draw.scope(self.labels.instances);
        instances.draw(0..3, 0..self.config.particles);
    }

    /// One whole frame of GPU work: encode, resolve, submit and end the profiler's frame.
    /// Call it inside an open session frame. Returns how many earlier frames' results were
    /// delivered.
    pub fn run_frame(
        &self,
        session: &Session,
        gpu: &mut GpuProfiler,
        device: &wgpu::Device,
    ) -> usize {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("framewise-wgpu example"),
        });
        self.encode(gpu, &mut encoder);
        gpu.resolve(&mut encoder);
        gpu.submit(session, [encoder.finish()]);
        gpu.end_frame(session)
    }
}
