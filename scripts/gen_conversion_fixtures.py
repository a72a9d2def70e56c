#!/usr/bin/env python3
"""Generates tests/fixtures/conversions/*.txt: element conversion vectors for
SPEC §6 (EC-13, EC-19, EC-20), computed with numpy and ml_dtypes, independently
of the Rust code they test (tests/device/cpu_convert.rs).

Run once and commit the output; rerun only when the vectors should change:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy ml_dtypes
    /tmp/venv/bin/python scripts/gen_conversion_fixtures.py

Each file is `<in>_to_<out>.txt`: comment lines start with `#`; every other
line is `IN OUT`, the input element's bits and the expected output element's
bits in lower-case hex (two hex digits per byte of the dtype). A vector means:
load one element of <in> to f32 as the POOL engine does, then store that f32
as <out>:

  load  - integers round to nearest, ties to even (numpy's cast, checked here
          against exact integer arithmetic); fp16 and bf16 widen exactly.
          EC-19: an f32 subnormal is flushed to zero of the same sign. numpy
          and ml_dtypes do NOT flush, so this script applies the flush itself
          (`flush`), to fp32 inputs and to bf16 inputs (a bf16 subnormal widens
          to an f32 subnormal); fp16 never widens to an f32 subnormal.
  store - fp16 / bf16: round to nearest even, overflow to +-inf (numpy's
          float16 cast, ml_dtypes' bfloat16 cast); fp16 subnormals kept.
          fp32: the bits. EC-20: any NaN is stored as the canonical positive
          quiet NaN of the format (fp32 0x7fc00000, fp16 0x7e00, bf16 0x7fc0);
          the script replaces NaNs itself, since numpy keeps payloads and signs.
          integers: truncate toward zero, then saturate to the type's range,
          NaN -> 0. numpy's float->int cast of out-of-range values is undefined
          behaviour in C, so the script computes trunc and clip itself in
          Python floats (exact for every f32) and never casts out of range.
"""

import math
import os
import random

import ml_dtypes
import numpy as np

OUT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "conversions"))
rng = random.Random(20240517)

F32_NAN = 0x7FC00000
F16_NAN = 0x7E00
BF16_NAN = 0x7FC0


def f32_from_bits(b):
    return np.array([b], dtype=np.uint32).view(np.float32)[0]


def bits_of_f32(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def flush(b):
    """EC-19 on f32 bits: exponent field zero -> zero of the same sign."""
    return b & 0x80000000 if b & 0x7F800000 == 0 else b


def is_nan32(b):
    return (b & 0x7FFFFFFF) > 0x7F800000


# --- exact reference for integer -> f32, to check numpy's cast -----------------


def exact_int_to_f32_bits(v):
    """Round-to-nearest-even of an integer to binary32, with Python integers only."""
    if v == 0:
        return 0
    sign = 0x80000000 if v < 0 else 0
    m = abs(v)
    e = m.bit_length() - 1  # leading one at bit e
    if e <= 23:
        mant = m << (23 - e)
    else:
        shift = e - 23
        mant = m >> shift
        rest = m & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if rest > half or (rest == half and mant & 1):
            mant += 1
            if mant == 1 << 24:
                mant >>= 1
                e += 1
    return sign | ((e + 127) << 23) | (mant & 0x7FFFFF)


def int_to_f32_bits(values, np_dtype):
    got = np.array(values, dtype=np_dtype).astype(np.float32).view(np.uint32)
    out = []
    for v, g in zip(values, got):
        want = exact_int_to_f32_bits(int(v))
        assert int(g) == want, (v, hex(int(g)), hex(want))
        out.append(want)
    return out


# --- f32 -> outputs --------------------------------------------------------------


def store_f32(b):
    return F32_NAN if is_nan32(b) else b


def store_f16(b):
    if is_nan32(b):
        return F16_NAN
    with np.errstate(over="ignore"):
        return int(np.array([f32_from_bits(b)], dtype=np.float32).astype(np.float16).view(np.uint16)[0])


def store_bf16(b):
    if is_nan32(b):
        return BF16_NAN
    x = np.array([f32_from_bits(b)], dtype=np.float32).astype(ml_dtypes.bfloat16)
    return int(x.view(np.uint16)[0])


def store_int(b, lo, hi, nbytes):
    if is_nan32(b):
        v = 0
    else:
        x = float(f32_from_bits(b))  # exact
        if math.isinf(x):
            v = hi if x > 0 else lo
        else:
            v = min(max(math.trunc(x), lo), hi)
    return v & ((1 << (8 * nbytes)) - 1)


INT_OUTS = {
    "int8": (-(2**7), 2**7 - 1, 1),
    "uint8": (0, 2**8 - 1, 1),
    "int16": (-(2**15), 2**15 - 1, 2),
    "uint16": (0, 2**16 - 1, 2),
    "int32": (-(2**31), 2**31 - 1, 4),
    "uint32": (0, 2**32 - 1, 4),
}

# --- input vectors -----------------------------------------------------------------


def around(p, k=4):
    return [p + d for d in range(-k, k + 1)]


def int_vectors(lo, hi, nbits):
    v = {lo, hi, 0, 1, -1 if lo < 0 else 2}
    for e in range(1, nbits):
        for base in (1 << e, -(1 << e)):
            for d in range(-3, 4):
                v.add(base + d)
            if e > 24:
                ulp = 1 << (e - 23)
                for k in (ulp // 2 - 1, ulp // 2, ulp // 2 + 1, ulp + ulp // 2, 3 * ulp // 2 + 1):
                    v.add(base + k)
                    v.add(base - k)
    for _ in range(500):
        bits = rng.randrange(1, nbits + 1)
        v.add(rng.randrange(-(1 << bits), 1 << bits))
    return sorted(x for x in v if lo <= x <= hi)


def f32_vectors():
    v = {0, 0x80000000, 0x7F800000, 0xFF800000, F32_NAN, 0xFFC00001, 0x7F800001, 0x7FFFFFFF}
    # subnormals (flushed), the smallest normals
    v |= {1, 2, 0x007FFFFF, 0x80000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x00400000}
    # fp16 range edges: 65504, 65519.99, 65520 (tie to inf), 2^-14, 2^-24, 2^-25 (tie to 0)
    for x in (65504.0, 65519.996, 65520.0, 65536.0, 2.0**-14, 2.0**-24, 2.0**-25, 3 * 2.0**-25,
              2.0**-26, 1.5 * 2.0**-24, 2.5 * 2.0**-24, 6.1e-5, 1e-8, 3.4028235e38):
        for s in (1, -1):
            b = bits_of_f32(np.float32(s * x))
            v |= {b - 1, b, b + 1}
    # ties of every format at many exponents
    for e in range(1, 255, 3):
        for m in (0x000000, 0x001000, 0x003000, 0x001001, 0x000FFF, 0x008000, 0x018000, 0x008001,
                  0x007FFF, 0x7FFFFF, 0x7FF000, 0x7F8000):
            v.add((e << 23) | m)
            v.add(0x80000000 | (e << 23) | m)
    # integer boundaries
    for x in (0.5, 0.99, 1.0, 1.5, 2.5, 127.5, 128.0, 128.5, 255.5, 256.0, 32767.5, 32768.0,
              65535.5, 65536.0, 2147483520.0, 2147483648.0, 4294967040.0, 4294967296.0, 1e20):
        for s in (1, -1):
            v.add(bits_of_f32(np.float32(s * x)))
    for _ in range(1500):
        v.add(rng.getrandbits(32))
    for _ in range(500):
        v.add(bits_of_f32(np.float32(rng.uniform(-70000, 70000))))
    return sorted(v)


def f16_vectors():
    v = set()
    for e in range(32):
        for m in (0, 1, 2, 0x155, 0x200, 0x2AA, 0x3FE, 0x3FF):
            v.add((e << 10) | m)
            v.add(0x8000 | (e << 10) | m)
    for _ in range(700):
        v.add(rng.getrandbits(16))
    return sorted(v)


def bf16_vectors():
    v = set()
    for e in range(0, 256, 5):
        for m in (0, 1, 0x40, 0x55, 0x7F):
            v.add((e << 7) | m)
            v.add(0x8000 | (e << 7) | m)
    for e in (0, 1, 254, 255):
        for m in (0, 1, 0x40, 0x7F):
            v.add((e << 7) | m)
            v.add(0x8000 | (e << 7) | m)
    for _ in range(700):
        v.add(rng.getrandbits(16))
    return sorted(v)


# --- writing -------------------------------------------------------------------------


def write(name, width_in, width_out, pairs, note):
    path = os.path.join(OUT_DIR, name + ".txt")
    with open(path, "w") as f:
        f.write(f"# {name}: {note}\n")
        f.write("# Generated by scripts/gen_conversion_fixtures.py (numpy %s, ml_dtypes %s); do not edit.\n"
                % (np.__version__, ml_dtypes.__version__))
        f.write("# IN OUT (hex bits)\n")
        for a, b in pairs:
            f.write(f"{a:0{2 * width_in}x} {b:0{2 * width_out}x}\n")
    print(f"{path}: {len(pairs)} vectors")


def main():
    os.makedirs(OUT_DIR, exist_ok=True)

    # integer loads, stored as fp32 (f32 bits; integers never give NaN)
    for name, np_t, lo, hi, nbits, width in (
        ("int8", np.int8, -(2**7), 2**7 - 1, 8, 1),
        ("uint8", np.uint8, 0, 2**8 - 1, 8, 1),
        ("int16", np.int16, -(2**15), 2**15 - 1, 16, 2),
        ("uint16", np.uint16, 0, 2**16 - 1, 16, 2),
        ("int32", np.int32, -(2**31), 2**31 - 1, 32, 4),
        ("uint32", np.uint32, 0, 2**32 - 1, 32, 4),
        ("int64", np.int64, -(2**63), 2**63 - 1, 64, 8),
    ):
        vals = list(range(lo, hi + 1)) if nbits == 8 else int_vectors(lo, hi, nbits)
        out = int_to_f32_bits(vals, np_t)
        mask = (1 << (8 * width)) - 1
        write(f"{name}_to_fp32", width, 4, [(x & mask, b) for x, b in zip(vals, out)],
              "integer load to f32, round to nearest ties to even; stored as fp32")

    # fp16 load: exact widening (numpy), stored as fp32
    h = f16_vectors()
    wide = np.array(h, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    write("fp16_to_fp32", 2, 4, [(a, store_f32(int(b))) for a, b in zip(h, wide)],
          "fp16 load widens exactly; stored as fp32 (NaN canonical)")

    # bf16 load: widening (ml_dtypes), then the EC-19 flush, stored as fp32
    b16 = bf16_vectors()
    wide = np.array(b16, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float32).view(np.uint32)
    write("bf16_to_fp32", 2, 4, [(a, store_f32(flush(int(b)))) for a, b in zip(b16, wide)],
          "bf16 load widens, subnormals flushed (EC-19); stored as fp32 (NaN canonical)")

    # fp32 load (EC-19 flush), then every store
    f = f32_vectors()
    loaded = [flush(b) for b in f]
    write("fp32_to_fp32", 4, 4, [(a, store_f32(b)) for a, b in zip(f, loaded)],
          "fp32 load (subnormals flushed, EC-19); stored as fp32 (NaN canonical, EC-20)")
    write("fp32_to_fp16", 4, 2, [(a, store_f16(b)) for a, b in zip(f, loaded)],
          "fp32 load (EC-19); stored as fp16: RNE, overflow to inf, subnormals kept, NaN 0x7e00")
    write("fp32_to_bf16", 4, 2, [(a, store_bf16(b)) for a, b in zip(f, loaded)],
          "fp32 load (EC-19); stored as bf16: RNE, overflow to inf, NaN 0x7fc0")
    for name, (lo, hi, nbytes) in INT_OUTS.items():
        write(f"fp32_to_{name}", 4, nbytes,
              [(a, store_int(b, lo, hi, nbytes)) for a, b in zip(f, loaded)],
              f"fp32 load (EC-19); stored as {name}: truncate toward zero, saturate, NaN -> 0")


if __name__ == "__main__":
    main()
