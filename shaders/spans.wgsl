// Moving bytes between device memory and a batch's staging buffer for the
// host, in program order with the kernels (src/device/gpu/batch.rs): a DMA's
// bytes going up (`upload`), a capture of bytes for the host to read later
// (`capture`). A DMA's footprint is one span per partition it touches; one
// dispatch moves all of them, one workgroup per span, instead of one copy
// command each. Standalone: it binds device memory as plain words (whole
// words move, so no atomics are needed, and plain loads and stores
// vectorise on CPU drivers).

@group(0) @binding(0) var<storage, read_write> words: array<u32>;

const WORKGROUP: u32 = 64u;

// As in memory.wgsl: a loop bound lavapipe cannot specialise on (`z` is
// workgroup_id.z, always 0).
fn opaque(v: u32, z: u32) -> u32 {
    return v + z;
}

// Each span: (memory word, staging word, words, 0).
@group(0) @binding(3) var<storage, read_write> staged: array<u32>;
@group(0) @binding(4) var<storage, read> spans: array<vec4<u32>>;

struct SpanParams {
    // The dispatch's first span and its number of spans.
    first: u32,
    count: u32,
    // Workgroups per grid row (`invocation` in memory.wgsl).
    groups_x: u32,
    pad: u32,
}
@group(0) @binding(1) var<uniform> sp: SpanParams;

fn span_of(wg: vec3<u32>) -> vec4<u32> {
    let k = wg.y * sp.groups_x + wg.x;
    if k >= sp.count {
        return vec4<u32>(0u);
    }
    return spans[sp.first + k];
}

@compute @workgroup_size(64)
fn upload(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let s = span_of(wg);
    for (var i = li; i < opaque(s.z, wg.z); i += WORKGROUP) {
        words[s.x + i] = staged[s.y + i];
    }
}

@compute @workgroup_size(64)
fn capture(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let s = span_of(wg);
    for (var i = li; i < opaque(s.z, wg.z); i += WORKGROUP) {
        staged[s.y + i] = words[s.x + i];
    }
}
