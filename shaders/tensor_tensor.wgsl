// Tensor-Tensor on POOL (0x41 arith, 0x51 bitvec), EC-49 … EC-52: the
// family function of elementwise.wgsl. `extend`, `int_op` and the f32 path
// mirror `extend`, `int_op` and `f32_op` in src/device/ops/tensor_tensor.rs.

override ALU: u32 = 4u;        // the ALU_OP byte
override F32_PATH: bool = false; // EC-51's f32 path (a float operand)
override IN0_DTYPE: u32 = 8u;
override IN1_DTYPE: u32 = 8u;
override OUT_DTYPE: u32 = 8u;
// ADD/SUBTRACT on the f32 path: 1 in integer arithmetic (`add_f32_bits`), 0
// with the adapter's add (`add_f32_hw`, software rasterizers): the host's
// `add_by_bits` (src/device/gpu/params.rs), as for Pool AVG.
override ADD_BY_BITS: u32 = 1u;

// A raw element of dtype `d` as a 32-bit pattern: sign-extended for the
// signed integer types.
fn extend(v: u32, d: u32) -> u32 {
    switch d {
        case 2u: { return bitcast<u32>(bitcast<i32>(v << 24u) >> 24u); }
        case 4u: { return bitcast<u32>(bitcast<i32>(v << 16u) >> 16u); }
        default: { return v; }
    }
}

// EC-50, EC-51 (all-integer), EC-52 on 32-bit patterns; `width` the element
// bits, `signed` whether src0's dtype is signed.
fn int_op(a: u32, b: u32, width: u32, signed: bool) -> u32 {
    let sa = bitcast<i32>(a);
    let sb = bitcast<i32>(b);
    let mask = select((1u << (width & 31u)) - 1u, 0xFFFFFFFFu, width >= 32u);
    let count = b & mask; // EC-52: src1 read as unsigned
    let big = count >= width;
    let c = min(count, 31u);
    switch ALU {
        case 0x04u, 0xC4u: { return a + b; }
        case 0x05u, 0xC6u: { return a - b; }
        case 0x06u, 0xC5u, 0xDBu: { return a * b; }
        case 0xCFu: { return bitcast<u32>(max(sa, sb)); }
        case 0xD0u: { return bitcast<u32>(min(sa, sb)); }
        case 0xD5u: { return max(a, b); }
        case 0xD6u: { return min(a, b); }
        case 0xC9u: { return select(0u, 1u, a == b); }
        case 0xCAu: { return select(0u, 1u, a != b); }
        case 0xD1u: { return select(0u, 1u, sa > sb); }
        case 0xD2u: { return select(0u, 1u, sa >= sb); }
        case 0xD3u: { return select(0u, 1u, sa <= sb); }
        case 0xD4u: { return select(0u, 1u, sa < sb); }
        case 0xD7u: { return select(0u, 1u, a > b); }
        case 0xD8u: { return select(0u, 1u, a >= b); }
        case 0xD9u: { return select(0u, 1u, a <= b); }
        case 0xDAu: { return select(0u, 1u, a < b); }
        case 0x00u: { return a; }
        case 0x01u: { return ~a; }
        case 0x0Au: { return a & b; }
        case 0x0Bu: { return a | b; }
        case 0x0Cu: { return a ^ b; }
        case 0x02u, 0x10u: { return select(a << c, 0u, big); }
        case 0x11u: { return select((a & mask) >> c, 0u, big); }
        case 0x03u: {
            if signed {
                return bitcast<u32>(sa >> c); // c is 31 when count >= width
            }
            return select((a & mask) >> c, 0u, big);
        }
        default: { return 0u; }
    }
}

fn element(lane_base: u32, g: i32, a: u32, b: u32) -> u32 {
    if F32_PATH {
        // EC-51: SPEC §6 loads (EC-19), one f32 operation, flushed, EC-13 store.
        let x = to_f32_bits(a, IN0_DTYPE);
        let y = to_f32_bits(b, IN1_DTYPE);
        var r: u32;
        if ALU == 0x06u {
            r = mul_f32_bits(x, y);
        } else {
            // SUBTRACT adds -y (a NaN stays a NaN).
            let yy = y ^ select(0u, SIGN, ALU == 0x05u);
            if ADD_BY_BITS == 1u {
                r = add_f32_bits(x, yy);
            } else {
                r = add_f32_hw(x, yy);
            }
        }
        return out_bits(r, OUT_DTYPE);
    }
    let signed = IN0_DTYPE == 2u || IN0_DTYPE == 4u || IN0_DTYPE == 8u;
    return int_op(extend(a, IN0_DTYPE), extend(b, IN1_DTYPE), 8u * dtype_size(IN0_DTYPE), signed);
}
