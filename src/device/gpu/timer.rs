//! GPU timestamps around one compute pass, when the device has them.

use super::context::{DeviceError, Gpu};
use super::staging::read_buffer;
use std::time::Duration;

/// GPU timestamps around one compute pass, when the device has them.
pub(crate) struct Timer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
}

impl Timer {
    /// A timer, or `None` without timestamp queries.
    pub(crate) fn new(gpu: &Gpu) -> Option<Timer> {
        if !gpu.timestamps {
            return None;
        }
        let set = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass time"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Some(Timer { set, resolve })
    }

    /// The pass descriptor's timestamp writes.
    pub(crate) fn writes(&self) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        }
    }

    /// Records the query resolve after the pass.
    pub(crate) fn resolve(&self, enc: &mut wgpu::CommandEncoder) {
        enc.resolve_query_set(&self.set, 0..2, &self.resolve, 0);
    }

    /// The pass's duration (after the submission completed).
    pub(crate) fn read(&self, gpu: &Gpu) -> Result<Duration, DeviceError> {
        let b = read_buffer(gpu, &self.resolve)?;
        let t0 = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
        let t1 = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
        let ns = t1.saturating_sub(t0) as f64 * gpu.queue.get_timestamp_period() as f64;
        Ok(Duration::from_nanos(ns as u64))
    }
}
