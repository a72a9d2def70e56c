// The reference kernel of `tpb-emu bench pool`: copies `n` vec4<u32> words,
// one per invocation, so the Pool kernel's GB/s can be read against what the
// same adapter moves when it does nothing but move bytes.

struct CopyParams {
    n: u32,        // vec4 words to copy
    groups_x: u32, // workgroups along x of a 2-D dispatch
}

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> c: CopyParams;

@compute @workgroup_size(64)
fn copy(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * c.groups_x + wg.x) * 64u + li;
    if i < c.n {
        dst[i] = src[i];
    }
}
