#!/usr/bin/env python3
"""Generates tests/fixtures/cross_lane/*.txt: CrossLaneReduce (0x7C, 0x7D,
EC-54) cases computed with numpy, ml_dtypes and Python integers,
independently of the Rust and WGSL code they test
(tests/device/cross_lane_fixtures.rs).

Run once and commit the output; rerun only when the vectors should change:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy ml_dtypes
    /tmp/venv/bin/python scripts/gen_clr_fixtures.py

A file `<op>_<axis>_<in>_<out>.txt` is one record over LANES lanes of M
elements: a `scale` line (f32 bits), LANES `src` lines (lane p's M raw
elements), one `out` line (M results for the partitions axis, 1 for all).
Values are the elements' bits in lower-case hex.

EC-54 as computed here:
  float in, ADD: numpy float32 sequential left fold from the first element
      (lanes in order; all axis: lane-major), each sum flushed (EC-19).
  AVERAGE (any in): each element loaded to f32, times the flushed scale in
      numpy float32, flushed, then the ADD fold.
  MAX (any in): f32 fold; x replaces acc when x > acc or acc is NaN and x
      is not.
  integer in, ADD: the exact Python-integer sum; integer out saturates;
      float out rounds the exact value once (numpy float64 -> float32 /
      float16 are single roundings of an exact double; bf16 by a nearest-even
      search over neighbouring bf16 values).
  bitvec: OR/AND/XOR of the raw bits.
Loads and stores of f32 bits are gen_kernel_fixtures.py's (SPEC §6, EC-13,
EC-19, EC-20).
"""

import os
import random
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_conversion_fixtures as conv  # noqa: E402
import gen_kernel_fixtures as kf  # noqa: E402

OUT_DIR = os.path.join(kf.ROOT, "cross_lane")
rng = random.Random(20261202)
LANES = 16
M = 32
FLOATS = ("fp32", "fp16", "bf16")
ALL_IN = list(kf.INTS) + list(FLOATS)
ALL_OUT = ALL_IN + ["fp32r"]


def f32(b):
    return np.frombuffer(np.uint32(b).tobytes(), dtype=np.float32)[0]


def bits(x):
    return int(np.float32(x).view(np.uint32))


def add(a, b):
    with np.errstate(all="ignore"):
        return conv.flush(bits(np.float32(f32(a)) + np.float32(f32(b))))


def mul(a, b):
    with np.errstate(all="ignore"):
        return conv.flush(bits(np.float32(f32(a)) * np.float32(f32(b))))


def fmax(acc, x):
    a, v = f32(acc), f32(x)
    if v > a or (np.isnan(a) and not np.isnan(v)):
        return x
    return acc


def bf16_of_int(v):
    """The bf16 nearest the integer v, ties to even, by search."""
    c = int(np.array([float(v)], dtype=np.float64).astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)[0])
    best = None
    for cand in (c - 1, c, c + 1):
        cand &= 0xFFFF
        val = np.array([cand], dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)[0]
        if not np.isfinite(val):
            continue
        d = abs(Fraction(float(val)) - v)
        key = (d, cand & 1)
        if best is None or key < best[0]:
            best = (key, cand)
    return best[1]


def store_exact(v, out):
    if out in kf.INTS:
        lo, hi, nbytes, _ = kf.INTS[out]
        return max(lo, min(hi, v)) & ((1 << (8 * nbytes)) - 1)
    if out in ("fp32", "fp32r"):
        return int(np.array([float(v)], dtype=np.float64).astype(np.float32).view(np.uint32)[0])
    if out == "fp16":
        with np.errstate(over="ignore"):
            return int(np.array([float(v)], dtype=np.float64).astype(np.float16).view(np.uint16)[0])
    return bf16_of_int(v)


def fold(op, inn, xs, scale):
    """EC-54's fold of raw elements xs (in order); returns the accumulator."""
    if op in ("or", "and", "xor"):
        acc = xs[0]
        for x in xs[1:]:
            acc = acc | x if op == "or" else acc & x if op == "and" else acc ^ x
        return ("bits", acc)
    if op == "add" and inn in kf.INTS:
        return ("int", sum(kf.signed_value(x, inn) for x in xs))
    vals = kf.load(xs, inn)
    if op == "average":
        vals = [mul(v, scale) for v in vals]
    acc = vals[0]
    for v in vals[1:]:
        acc = fmax(acc, v) if op == "max" else add(acc, v)
    return ("f32", acc)


def store(acc, out):
    kind, v = acc
    if kind == "bits":
        return v
    if kind == "int":
        return store_exact(v, out)
    return kf.store(v, out)


def raws(inn, n):
    pool = kf.raw_vectors(inn)
    if inn in kf.INTS and rng.random() < 0.5:
        # extremes, so that integer sums saturate
        lo, hi, nbytes, _ = kf.INTS[inn]
        pool = [lo & ((1 << (8 * nbytes)) - 1), hi, hi - 1] + pool[:20]
    return [rng.choice(pool) for _ in range(n)]


def case(op, axis, inn, out):
    scale = rng.choice([bits(0.5), bits(1 / 16), bits(0.1), 0x00000400, bits(-3.0), bits(1e30),
                        bits(1 / LANES)])
    src = [raws(inn, M) for _ in range(LANES)]
    sflush = conv.flush(scale)
    if axis == "partitions":
        res = [store(fold(op, inn, [src[p][k] for p in range(LANES)], sflush), out) for k in range(M)]
    else:
        res = [store(fold(op, inn, [x for lane in src for x in lane], sflush), out)]
    w = kf.SIZE[inn]
    wo = kf.SIZE[out]
    path = os.path.join(OUT_DIR, f"{op}_{axis}_{inn}_{out}.txt")
    os.makedirs(OUT_DIR, exist_ok=True)
    with open(path, "w") as f:
        f.write(f"# CrossLaneReduce {op}, {axis} axis, {inn} -> {out}, {LANES} lanes x {M}\n")
        f.write("# Generated by scripts/gen_clr_fixtures.py (numpy %s, ml_dtypes %s); do not edit.\n"
                % (np.__version__, ml_dtypes.__version__))
        f.write(f"scale {scale:08x}\n")
        for lane in src:
            f.write("src " + " ".join(f"{x:0{2 * w}x}" for x in lane) + "\n")
        f.write("out " + " ".join(f"{x:0{2 * wo}x}" for x in res) + "\n")


def main():
    for axis in ("partitions", "all"):
        for op in ("add", "average", "max"):
            for inn in ALL_IN:
                for out in rng.sample(ALL_OUT, 3):
                    case(op, axis, inn, out)
        for op in ("or", "and", "xor"):
            for inn in kf.INTS:
                case(op, axis, inn, inn)
    print(f"{len(os.listdir(OUT_DIR))} files in {OUT_DIR}")


if __name__ == "__main__":
    main()
