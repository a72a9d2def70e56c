#!/usr/bin/env python3
"""Generates tests/fixtures/pool2d/: pooling answers from an implementation
nobody on this project wrote (onnx's ReferenceEvaluator), for
tests/programs/frontend_fixtures.rs.

Run once, review, commit the output with this script:

    python3 -m venv /tmp/fx && /tmp/fx/bin/pip install onnx numpy
    /tmp/fx/bin/python scripts/gen_pool2d_fixtures.py

Each case is `<name>.x.npy` (input), `<name>.y.npy` (output) and, for max
pooling with indices, `<name>.idx.npy` (int64, PyTorch's convention: the flat
index h*W + w within each H*W plane; ONNX counts across the whole tensor, so
the plane's offset is subtracted). `cases.json` lists every case's parameters
in PyTorch's terms. bf16 cases are fp32 values exactly representable in bf16,
pooled in fp32 and stored as uint16 bits (NumPy has no bf16).

Inputs for max pooling come from a small set of values, so ties are common
and the first-maximum rule is exercised. Inputs for average pooling are
multiples of 1/16 in [-8, 8], so every partial sum is exact in fp32 and the
only difference left between the engine (sum * fp32(1/n)) and the reference
(sum / n) is the final rounding: at most 1 ulp.

Known quirks of the reference, avoided by the grid: AveragePool with
ceil_mode splits the extra padding it needs between both ends, which shifts
windows when the extra is 2 or more (stride >= 3); the stride-1,
dilation-1 MaxPool path returns no indices and cannot pad uint8.
"""

import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "pool2d")
ONNX_TYPES = {"fp32": TensorProto.FLOAT, "fp16": TensorProto.FLOAT16, "uint8": TensorProto.UINT8}
NP_TYPES = {"fp32": np.float32, "fp16": np.float16, "uint8": np.uint8}


def case(name, shape, mode, k, s=None, pads=(0, 0, 0, 0), d=(1, 1), ceil=False, cip=True,
         indices=False, dtype="fp32"):
    return dict(name=name, shape=list(shape), mode=mode, kernel=list(k),
                stride=list(s if s is not None else k), pads=list(pads), dilation=list(d),
                ceil_mode=ceil, count_include_pad=cip, return_indices=indices, dtype=dtype)


CASES = [
    # max: kernel / stride / padding / dilation / ceil_mode, with indices
    case("max_k2", (1, 3, 6, 6), "max", (2, 2), indices=True),
    case("max_k3_s2_p1", (2, 2, 7, 7), "max", (3, 3), (2, 2), (1, 1, 1, 1), indices=True),
    case("max_k3_s1_p1_values", (1, 2, 5, 6), "max", (3, 3), (1, 1), (1, 1, 1, 1)),
    case("max_k3_s2_d2", (1, 2, 9, 9), "max", (3, 3), (2, 2), d=(2, 2), indices=True),
    case("max_k2_s2_ceil", (1, 2, 5, 7), "max", (2, 2), (2, 2), ceil=True, indices=True),
    case("max_k3_s2_p1_ceil", (1, 2, 8, 6), "max", (3, 3), (2, 2), (1, 1, 1, 1), ceil=True,
         indices=True),
    case("max_k3x2_s3x1_d1x2", (1, 2, 10, 9), "max", (3, 2), (3, 1), (1, 1, 1, 1), (1, 2),
         ceil=True, indices=True),
    case("max_k3_s3_p1_ceil", (1, 1, 8, 8), "max", (3, 3), (3, 3), (1, 1, 1, 1), ceil=True,
         indices=True),
    case("max_asym_pads", (1, 2, 6, 7), "max", (3, 3), (2, 2), (1, 0, 0, 1), indices=True),
    case("max_k1x3_row", (1, 2, 4, 9), "max", (1, 3), (1, 2), (0, 1, 0, 1), indices=True),
    case("max_global", (1, 3, 5, 4), "max", (5, 4), indices=True),
    # 1-D (N x C x L)
    case("max1d_k3_s2_p1", (2, 3, 11), "max", (1, 3), (1, 2), (0, 1, 0, 1), indices=True),
    case("max1d_k2_d3_ceil", (1, 2, 12), "max", (1, 2), (1, 3), d=(1, 3), ceil=True,
         indices=True),
    case("avg1d_k3_s2_p1_excl", (2, 2, 9), "avg", (1, 3), (1, 2), (0, 1, 0, 1), cip=False),
    # avg: count_include_pad both ways, ceil_mode clipping
    case("avg_k2", (1, 3, 6, 6), "avg", (2, 2)),
    case("avg_k3_s2_p1_incl", (2, 2, 7, 7), "avg", (3, 3), (2, 2), (1, 1, 1, 1), cip=True),
    case("avg_k3_s2_p1_excl", (2, 2, 7, 7), "avg", (3, 3), (2, 2), (1, 1, 1, 1), cip=False),
    case("avg_k3_s1_p1_excl", (1, 2, 5, 6), "avg", (3, 3), (1, 1), (1, 1, 1, 1), cip=False),
    case("avg_k2_s2_ceil_incl", (1, 2, 5, 7), "avg", (2, 2), (2, 2), ceil=True, cip=True),
    case("avg_k3_s2_p1_ceil_incl", (1, 2, 8, 6), "avg", (3, 3), (2, 2), (1, 1, 1, 1),
         ceil=True, cip=True),
    case("avg_k3_s2_p1_ceil_excl", (1, 2, 8, 6), "avg", (3, 3), (2, 2), (1, 1, 1, 1),
         ceil=True, cip=False),
    case("avg_k3_s2_d2", (1, 2, 9, 9), "avg", (3, 3), (2, 2), d=(2, 2)),
    case("avg_k3x2_p1x0_excl", (1, 2, 7, 8), "avg", (3, 2), (2, 2), (1, 0, 1, 0), cip=False),
    # more planes than partitions: N=2, C=70 -> 140 planes
    case("max_planes140", (2, 70, 6, 6), "max", (3, 3), (2, 2), (1, 1, 1, 1), indices=True),
    case("avg_planes140", (2, 70, 6, 6), "avg", (2, 2), cip=True),
    # other dtypes
    case("max_fp16", (1, 3, 6, 6), "max", (3, 3), (2, 2), (1, 1, 1, 1), indices=True,
         dtype="fp16"),
    case("max_bf16", (1, 3, 6, 6), "max", (3, 3), (2, 2), (1, 1, 1, 1), indices=True,
         dtype="bf16"),
    case("max_uint8", (1, 3, 6, 6), "max", (3, 3), (2, 2), (1, 1, 1, 1), indices=True,
         dtype="uint8"),
    case("avg_fp16", (1, 2, 6, 6), "avg", (2, 2), dtype="fp16"),
    case("avg_bf16_excl", (1, 2, 6, 6), "avg", (3, 3), (2, 2), (1, 1, 1, 1), cip=False,
         dtype="bf16"),
]


def make_input(c, rng):
    shape = c["shape"]
    if c["dtype"] == "uint8":
        return rng.integers(0, 6, size=shape).astype(np.uint8) * 40
    if c["mode"] == "max":
        vals = np.array([-3.5, -1.0, 0.0, 0.25, 2.0, 2.0, 7.75], dtype=np.float32)
        x = rng.choice(vals, size=shape).astype(np.float32)
    else:
        x = (rng.integers(-128, 129, size=shape) / 16.0).astype(np.float32)
    if c["dtype"] == "fp16":
        return x.astype(np.float16)
    return x  # fp32, and bf16 (these values are exact in bf16)


def run_onnx(c, x):
    one_d = len(c["shape"]) == 3
    k, s, d, p = c["kernel"], c["stride"], c["dilation"], c["pads"]
    if one_d:
        attrs = dict(kernel_shape=[k[1]], strides=[s[1]], dilations=[d[1]], pads=[p[1], p[3]])
    else:
        attrs = dict(kernel_shape=k, strides=s, dilations=d, pads=[p[0], p[1], p[2], p[3]])
    attrs["ceil_mode"] = int(c["ceil_mode"])
    return evaluate(c, attrs, x)


def evaluate(c, attrs, x):
    """Runs case `c` (its mode, indices, count_include_pad, dtype) with the
    pooling attributes `attrs` on `x` through onnx's ReferenceEvaluator."""
    onnx_dtype = ONNX_TYPES["fp32" if c["dtype"] == "bf16" else c["dtype"]]
    outputs = ["Y"]
    if c["mode"] == "max":
        op = "MaxPool"
        if c["return_indices"]:
            outputs.append("I")
    else:
        op = "AveragePool"
        attrs["count_include_pad"] = int(c["count_include_pad"])
    node = helper.make_node(op, ["X"], outputs, **attrs)
    out_infos = [helper.make_tensor_value_info("Y", onnx_dtype, None)]
    if len(outputs) == 2:
        out_infos.append(helper.make_tensor_value_info("I", TensorProto.INT64, None))
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("X", onnx_dtype, None)],
                              out_infos)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    res = ReferenceEvaluator(model).run(None, {"X": x})
    return res


def bf16_bits(x):
    b = x.astype(np.float32).view(np.uint32)
    assert np.all(b & 0xFFFF == 0), "bf16 case values must be exact in bf16"
    return (b >> 16).astype(np.uint16)


def save_case(out, c, x, res):
    """Writes one case's `.x.npy`, `.y.npy` and (with indices) `.idx.npy` to
    `out`: bf16 as uint16 bits rounded to nearest even, indices made
    per-plane (per-volume in 3-D) as PyTorch's."""
    y = res[0]
    name = c["name"]
    if c["dtype"] == "bf16":
        y = y.astype(np.float32)
        yb = y.view(np.uint32)
        # Round to nearest even, as the engine's store does (max results are exact).
        rounded = ((yb + 0x7FFF + ((yb >> 16) & 1)) >> 16).astype(np.uint16)
        np.save(os.path.join(out, f"{name}.x.npy"), bf16_bits(x))
        np.save(os.path.join(out, f"{name}.y.npy"), rounded)
    else:
        np.save(os.path.join(out, f"{name}.x.npy"), x)
        np.save(os.path.join(out, f"{name}.y.npy"), y.astype(x.dtype))
    if len(res) == 2:
        idx = res[1].astype(np.int64)
        plane = int(np.prod(c["shape"][2:]))
        nplanes = c["shape"][0] * c["shape"][1]
        offs = (np.arange(nplanes, dtype=np.int64) * plane).reshape(
            c["shape"][0], c["shape"][1], *([1] * (idx.ndim - 2)))
        np.save(os.path.join(out, f"{name}.idx.npy"), idx - offs)
    print(f"{name}: x{list(x.shape)} -> y{list(y.shape)}")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20240607)
    cases = []
    for c in CASES:
        x = make_input(c, rng)
        save_case(OUT, c, x, run_onnx(c, x))
        cases.append(c)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump({"generator": f"onnx {onnx.__version__} ReferenceEvaluator, numpy {np.__version__}",
                   "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
