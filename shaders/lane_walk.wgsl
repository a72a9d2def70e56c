// One operand's TENSOR walk for the kernels that are not elementwise
// (CrossLaneReduce, NonzeroWithCount, GetSequenceBounds): mirrors
// `WalkParams` in src/device/gpu/lane_kernels.rs. Composed after
// memory.wgsl, convert.wgsl and walk.wgsl.

struct Walk {
    num: vec4<u32>,
    step: vec4<i32>,
    base: u32,        // byte offset in `mem` of lane 0's element index 0
    lane_stride: u32, // bytes between consecutive lanes (one partition)
    size: u32,        // element bytes
    pad: u32,
}

// The byte of the element at coordinates `c` of walk `o` in lane `lane`.
fn walk_byte(o: Walk, lane: u32, c: vec4<u32>) -> u32 {
    return o.base + lane * o.lane_stride + bitcast<u32>(dot(vec4<i32>(c), o.step) * i32(o.size));
}

// The element of `size` bytes at `byte`, in the low bits (higher bits zero).
fn load_raw(byte: u32, size: u32) -> u32 {
    let w = load_word(byte);
    let mask = select(select(0xFFFFu, 0xFFu, size == 1u), 0xFFFFFFFFu, size == 4u);
    return (w >> ((byte & 3u) * 8u)) & mask;
}
