#!/usr/bin/env python3
"""Generates tests/fixtures/cast/*.txt and tests/fixtures/tensor_tensor/*.txt:
element vectors for Cast (0x47, EC-46) and Tensor-Tensor (0x41, 0x51:
EC-50, EC-51, EC-52), computed with numpy, ml_dtypes and Python integers,
independently of the Rust and WGSL code they test (tests/device/elementwise_fixtures.rs).

Run once and commit the output; rerun only when the vectors should change:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy ml_dtypes
    /tmp/venv/bin/python scripts/gen_kernel_fixtures.py

Cast files are `<in>_to_<out>.txt` with lines `IN OUT`; Tensor-Tensor files
are `<opcode>_<op>_<src0>_<src1>_<out>.txt` with lines `SRC0 SRC1 OUT`: each
value is the element's bits in lower-case hex, two digits per byte.

Cast between different dtypes (EC-46) is SPEC §6's load to f32 then EC-13's
store; the load and store rules (and how numpy is checked or corrected where
it differs: EC-19 flush, EC-20 canonical NaN, trunc/saturate computed in
Python floats) are those of scripts/gen_conversion_fixtures.py, whose
functions this script imports.

Tensor-Tensor:
  0x41 base ADD/SUBTRACT/MULT, all operands integers (EC-51): the exact
      result of the values read with each dtype's signedness, in Python
      integers, then its low width(out) bits.
  0x41 base ADD/SUBTRACT/MULT with a float operand (EC-51): each source
      loaded to f32 (as Cast), one numpy float32 operation (IEEE, round to
      nearest even), the result flushed (EC-19), stored as Cast stores.
  0x41 int band on all-INT32 / all-UINT32 operands (EC-50): Python integers:
      add/sub/mul modulo 2^32, MAX/MIN and IS_* signed (_INT) or unsigned
      (_UINT), IS_* give 1 / 0, IS_EQUAL_INT / IS_NE_INT compare bits.
  0x51 (EC-52), src0 = src1 = out: BYPASS, NOT, AND, OR, XOR on bits; shifts
      by src1 read as unsigned; a count >= the width gives 0, or all sign bits
      for an arithmetic right shift of a negative signed value.
"""

import os
import random
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_conversion_fixtures as conv  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
rng = random.Random(20261201)

INTS = {  # name: (lo, hi, bytes, signed)
    "int8": (-(2**7), 2**7 - 1, 1, True),
    "uint8": (0, 2**8 - 1, 1, False),
    "int16": (-(2**15), 2**15 - 1, 2, True),
    "uint16": (0, 2**16 - 1, 2, False),
    "int32": (-(2**31), 2**31 - 1, 4, True),
    "uint32": (0, 2**32 - 1, 4, False),
}
NP_INT = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
          "int32": np.int32, "uint32": np.uint32}
FLOATS = {"fp32": 4, "fp16": 2, "bf16": 2}
SIZE = {**{k: v[2] for k, v in INTS.items()}, **FLOATS, "fp32r": 4}
CAST_IN = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "bf16", "fp16", "fp32"]
CAST_OUT = CAST_IN + ["fp32r"]
MAX_VECTORS = 2000


def sample(v, k):
    v = sorted(set(v))
    if len(v) <= k:
        return v
    # keep the first and last 10% (edges) and a random middle
    edge = k // 10
    mid = v[edge:-edge]
    return sorted(v[:edge] + rng.sample(mid, k - 2 * edge) + v[-edge:])


def raw_vectors(name):
    """Raw bit patterns of `name`."""
    if name in INTS:
        lo, hi, nbytes, _ = INTS[name]
        vals = list(range(lo, hi + 1)) if nbytes == 1 else conv.int_vectors(lo, hi, 8 * nbytes)
        return [x & ((1 << (8 * nbytes)) - 1) for x in sample(vals, 600)]
    if name == "fp32":
        return sample(conv.f32_vectors(), 900)
    if name == "fp16":
        return sample(conv.f16_vectors(), 600)
    return sample(conv.bf16_vectors(), 600)


def signed_value(raw, name):
    lo, hi, nbytes, signed = INTS[name]
    if signed and raw >= 1 << (8 * nbytes - 1):
        return raw - (1 << (8 * nbytes))
    return raw


def load(raws, name):
    """SPEC §6 loads of raw patterns to f32 bits (EC-19 flush applied)."""
    if name in INTS:
        vals = [signed_value(r, name) for r in raws]
        return conv.int_to_f32_bits(vals, NP_INT[name])  # numpy, checked exactly
    if name == "fp16":
        w = np.array(raws, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
        return [int(b) for b in w]
    if name == "bf16":
        w = np.array(raws, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float32).view(np.uint32)
        return [conv.flush(int(b)) for b in w]
    return [conv.flush(r) for r in raws]


def store(b, name):
    """EC-13/EC-20 store of f32 bits to `name`."""
    if name in ("fp32", "fp32r"):
        return conv.store_f32(b)
    if name == "fp16":
        return conv.store_f16(b)
    if name == "bf16":
        return conv.store_bf16(b)
    lo, hi, nbytes, _ = INTS[name]
    return conv.store_int(b, lo, hi, nbytes)


def write(path, header, rows, widths):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"# {header}\n")
        f.write("# Generated by scripts/gen_kernel_fixtures.py (numpy %s, ml_dtypes %s); do not edit.\n"
                % (np.__version__, ml_dtypes.__version__))
        for row in rows:
            f.write(" ".join(f"{v:0{2 * w}x}" for v, w in zip(row, widths)) + "\n")
    print(f"{path}: {len(rows)} vectors")


def gen_cast():
    for a in CAST_IN:
        raws = raw_vectors(a)
        loaded = load(raws, a)
        for b in CAST_OUT:
            if a == b:
                continue
            rows = [(r, store(l, b)) for r, l in zip(raws, loaded)]
            write(os.path.join(ROOT, "cast", f"{a}_to_{b}.txt"),
                  f"CAST {a} -> {b}: SPEC §6 load to f32 (EC-19), EC-13 store (EC-20)", rows,
                  (SIZE[a], SIZE[b]))


def int_specials(name):
    lo, hi, nbytes, signed = INTS[name]
    w = 8 * nbytes
    v = {0, 1, 2, 3, lo, hi, lo + 1, hi - 1, w - 1, w, w + 1, 2 * w, 7, 100}
    if signed:
        v |= {-1, -2, -w}
    v |= {rng.randrange(lo, hi + 1) for _ in range(12)}
    return sorted(x & ((1 << w) - 1) for x in v if lo <= x <= hi or x < 0)


def float_specials(name):
    if name == "fp32":
        base = [0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00001, 0x00000001,
                0x80800000, 0x00800000, 0x7F7FFFFF, 0x33800000, 0x4B800001, 0x3F800001, 0x00FFFFFF,
                0x4F000000, 0xCF000001, 0x3EAAAAAB]
        return base + [rng.getrandbits(32) for _ in range(14)]
    if name == "fp16":
        base = [0, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E01, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x3C01]
        return base + [rng.getrandbits(16) for _ in range(14)]
    base = [0, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC1, 0x0001, 0x0080, 0x8080, 0x7F7F, 0x3F81]
    return base + [rng.getrandbits(16) for _ in range(14)]


def specials(name):
    return int_specials(name) if name in INTS else float_specials(name)


def pairs(n0, n1):
    a, b = specials(n0), specials(n1)
    ps = [(x, y) for x in a for y in b]
    return ps if len(ps) <= MAX_VECTORS else rng.sample(ps, MAX_VECTORS)


BASE = {"add": 0x04, "subtract": 0x05, "mult": 0x06}


def base_op(op, n0, n1, out):
    rows = []
    ps = pairs(n0, n1)
    if all(n in INTS for n in (n0, n1, out)):
        mask = (1 << (8 * INTS[out][2])) - 1
        for x, y in ps:
            a, b = signed_value(x, n0), signed_value(y, n1)
            r = {"add": a + b, "subtract": a - b, "mult": a * b}[op]
            rows.append((x, y, r & mask))
    else:
        la = load([p[0] for p in ps], n0)
        lb = load([p[1] for p in ps], n1)
        fa = np.array(la, dtype=np.uint32).view(np.float32)
        fb = np.array(lb, dtype=np.uint32).view(np.float32)
        with np.errstate(all="ignore"):
            r = {"add": fa + fb, "subtract": fa - fb, "mult": fa * fb}[op]
        for (x, y), rb in zip(ps, r.view(np.uint32)):
            rows.append((x, y, store(conv.flush(int(rb)), out)))
    write(os.path.join(ROOT, "tensor_tensor", f"arith_{op}_{n0}_{n1}_{out}.txt"),
          f"TENSOR_TENSOR_ARITH {op.upper()} (0x{BASE[op]:02x}) {n0}, {n1} -> {out} (EC-51)", rows,
          (SIZE[n0], SIZE[n1], SIZE[out]))


INT_BAND = {  # name: (byte, signedness it applies to, function of (a, b) as values)
    "add_int": (0xC4, "both", lambda a, b: a + b),
    "mult_int": (0xC5, "both", lambda a, b: a * b),
    "subtract_int": (0xC6, "both", lambda a, b: a - b),
    "is_equal_int": (0xC9, "both", lambda a, b: int(a == b)),
    "is_ne_int": (0xCA, "both", lambda a, b: int(a != b)),
    "max_int": (0xCF, "int32", max),
    "min_int": (0xD0, "int32", min),
    "is_gt_int": (0xD1, "int32", lambda a, b: int(a > b)),
    "is_ge_int": (0xD2, "int32", lambda a, b: int(a >= b)),
    "is_le_int": (0xD3, "int32", lambda a, b: int(a <= b)),
    "is_lt_int": (0xD4, "int32", lambda a, b: int(a < b)),
    "max_uint": (0xD5, "uint32", max),
    "min_uint": (0xD6, "uint32", min),
    "is_gt_uint": (0xD7, "uint32", lambda a, b: int(a > b)),
    "is_ge_uint": (0xD8, "uint32", lambda a, b: int(a >= b)),
    "is_le_uint": (0xD9, "uint32", lambda a, b: int(a <= b)),
    "is_lt_uint": (0xDA, "uint32", lambda a, b: int(a < b)),
    "mult_uint": (0xDB, "uint32", lambda a, b: a * b),
}


def int_band():
    for op, (byte, which, f) in INT_BAND.items():
        for t in ("int32", "uint32"):
            if which not in ("both", t):
                continue
            rows = []
            for x, y in pairs(t, t):
                r = f(signed_value(x, t), signed_value(y, t))
                rows.append((x, y, r & 0xFFFFFFFF))
            write(os.path.join(ROOT, "tensor_tensor", f"arith_{op}_{t}_{t}_{t}.txt"),
                  f"TENSOR_TENSOR_ARITH {op.upper()} (0x{byte:02x}) {t} (EC-50)", rows, (4, 4, 4))


BITVEC = {"bypass": 0x00, "bitwise_not": 0x01, "arith_shift_left": 0x02, "arith_shift_right": 0x03,
          "bitwise_and": 0x0A, "bitwise_or": 0x0B, "bitwise_xor": 0x0C,
          "logical_shift_left": 0x10, "logical_shift_right": 0x11}


def bitvec():
    for op, byte in BITVEC.items():
        for t in INTS:
            w = 8 * INTS[t][2]
            mask = (1 << w) - 1
            signed = INTS[t][3]
            rows = []
            for x, y in pairs(t, t):
                count = y  # src1 read as unsigned: its raw bits
                if op == "bypass":
                    r = x
                elif op == "bitwise_not":
                    r = ~x
                elif op == "bitwise_and":
                    r = x & y
                elif op == "bitwise_or":
                    r = x | y
                elif op == "bitwise_xor":
                    r = x ^ y
                elif op in ("arith_shift_left", "logical_shift_left"):
                    r = 0 if count >= w else x << count
                elif op == "logical_shift_right":
                    r = 0 if count >= w else x >> count
                else:  # arith_shift_right
                    v = signed_value(x, t) if signed else x
                    r = v >> min(count, w)  # Python's >> is arithmetic; >= w gives 0 or -1
                rows.append((x, y, r & mask))
            write(os.path.join(ROOT, "tensor_tensor", f"bitvec_{op}_{t}_{t}_{t}.txt"),
                  f"TENSOR_TENSOR_BITVEC {op.upper()} (0x{byte:02x}) {t} (EC-52)", rows,
                  (SIZE[t],) * 3)


def main():
    gen_cast()
    for op in BASE:
        for n0, n1, out in (("int8", "int8", "int8"), ("uint8", "int16", "int32"), ("int32", "uint32", "uint16"),
                            ("uint32", "uint32", "uint32"), ("int16", "uint16", "uint8"), ("int32", "int32", "int32"),
                            ("fp32", "fp32", "fp32"), ("bf16", "bf16", "bf16"), ("fp16", "fp32", "bf16"),
                            ("int32", "fp32", "int32"), ("fp32", "int8", "fp16"), ("bf16", "uint16", "int16"),
                            ("fp16", "fp16", "fp32r")):
            base_op(op, n0, n1, out)
    int_band()
    bitvec()


if __name__ == "__main__":
    main()
