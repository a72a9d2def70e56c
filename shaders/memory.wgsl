// Device memory as every kernel of the POOL engine sees it: SBUF (128
// partitions × active bytes) then PSUM, one storage buffer bound twice —
// as atomic u32 words and as 16-byte words — and the grid layout shared by
// every kernel. Composed in front of each kernel's source (see
// src/device/gpu/kernels.rs); binding 1 is each kernel's own parameter block.
//
// Words are atomic because 1- and 2-byte outputs of different invocations
// can share a word; EC-21 guarantees no two outputs share a byte, so a
// clear-then-set of one output's bytes is race-free.

@group(0) @binding(0) var<storage, read_write> mem: array<atomic<u32>>;
// The same memory as 16-byte words, for `pool_rows`' vector loads and stores
// (each entry point uses one view; the host binds the same buffer to both).
@group(0) @binding(2) var<storage, read_write> memv: array<vec4<u32>>;

const WORKGROUP: u32 = 64u;

fn load_word(byte: u32) -> u32 {
    return atomicLoad(&mem[byte >> 2u]);
}

fn store_bits(byte: u32, size: u32, v: u32) {
    let i = byte >> 2u;
    if size == 4u {
        atomicStore(&mem[i], v);
        return;
    }
    let sh = (byte & 3u) * 8u;
    let mask = select(0xFFu, 0xFFFFu, size == 2u) << sh;
    atomicAnd(&mem[i], ~mask);
    atomicOr(&mem[i], (v << sh) & mask);
}

// A loop bound the shader compiler cannot see through. lavapipe (Mesa's
// software Vulkan, which CI runs) specializes a shader on the uniform values
// that bound its loops and recompiles it for every dispatch whose values
// change — a millisecond per record. `z` is workgroup_id.z, always 0 (the
// host dispatches one layer), so the value is unchanged but no longer a
// pure uniform.
fn opaque(v: u32, z: u32) -> u32 {
    return v + z;
}

// This invocation's number within its dispatch: the host lays the grid out
// in rows of `groups_x` workgroups (at most 65,535 per dimension); ids past
// the work have nothing to do.
fn invocation(groups_x: u32, wg: vec3<u32>, li: u32) -> u32 {
    return (wg.y * groups_x + wg.x) * WORKGROUP + li;
}
