#!/usr/bin/env python3
"""Generates tests/fixtures/pool3d/: 3-D pooling answers (N×C×D×H×W) and 2-D
ones with ONNX's explicit pads, from onnx's ReferenceEvaluator, for
tests/programs/frontend_fixtures.rs. The inputs, bf16 handling and quirks
avoided are those of gen_pool2d_fixtures.py (its docstring), whose helpers
this script reuses:

    python3 -m venv /tmp/fx && /tmp/fx/bin/pip install onnx numpy
    /tmp/fx/bin/python scripts/gen_pool3d_fixtures.py

Each case lists its parameters per spatial axis, outermost first: `kernel`,
`stride` and `dilation` have one number per axis (D,H,W or H,W), `pads` the
begin values then the end values (ONNX's order), and `pad_rule` says which
form the front end is given: "torch" (PyTorch's symmetric padding, each pad
at most half the effective kernel) or "onnx" (explicit pads, each smaller
than the kernel). Indices are PyTorch's: flat over D×H×W within each volume.
"""

import json
import os
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(__file__))
from gen_pool2d_fixtures import evaluate, make_input, save_case  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "pool3d")


def case(name, shape, mode, k, s=None, pads=None, d=None, ceil=False, cip=True, indices=False,
         dtype="fp32", rule="torch"):
    rank = len(shape) - 2
    return dict(name=name, shape=list(shape), mode=mode, kernel=list(k),
                stride=list(s if s is not None else k),
                pads=list(pads if pads is not None else [0] * (2 * rank)),
                dilation=list(d if d is not None else [1] * rank),
                ceil_mode=ceil, count_include_pad=cip, return_indices=indices, dtype=dtype,
                pad_rule=rule)


CASES = [
    # 3-D max: kernel / stride / padding / dilation / ceil_mode, with indices.
    case("max3d_k2", (1, 3, 4, 6, 6), "max", (2, 2, 2), indices=True),
    case("max3d_k3_s2_p1", (2, 2, 5, 7, 7), "max", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1),
         indices=True),
    case("max3d_k2_s2_ceil", (1, 2, 5, 5, 7), "max", (2, 2, 2), (2, 2, 2), ceil=True,
         indices=True),
    case("max3d_k3_s2_d2", (1, 2, 7, 9, 9), "max", (3, 3, 3), (2, 2, 2), d=(2, 2, 2),
         indices=True),
    case("max3d_k3x2x3_s2x1x2_p1", (1, 2, 6, 5, 8), "max", (3, 2, 3), (2, 1, 2),
         (1, 0, 1, 1, 1, 1), indices=True),
    case("max3d_k1x3x3", (1, 2, 3, 6, 6), "max", (1, 3, 3), (1, 2, 2), (0, 1, 1, 0, 1, 1),
         indices=True),
    # ONNX's explicit pads, past PyTorch's half-kernel limit.
    case("max3d_k3_s2_pads2_onnx", (1, 2, 5, 6, 7), "max", (3, 3, 3), (2, 2, 2),
         (2, 2, 2, 2, 2, 2), indices=True, rule="onnx"),
    case("max3d_k3_s2_pads_asym_onnx", (1, 2, 6, 6, 6), "max", (3, 3, 3), (2, 2, 2),
         (0, 2, 1, 2, 0, 1), indices=True, rule="onnx"),
    # 3-D average.
    case("avg3d_k2", (1, 3, 4, 6, 6), "avg", (2, 2, 2)),
    case("avg3d_k3_s2_p1_incl", (2, 2, 5, 7, 7), "avg", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1)),
    case("avg3d_k3_s2_p1_excl", (2, 2, 5, 7, 7), "avg", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1),
         cip=False),
    case("avg3d_k2_s2_ceil_excl", (1, 2, 5, 5, 7), "avg", (2, 2, 2), (2, 2, 2), ceil=True,
         cip=False),
    case("avg3d_k3_s2_d2", (1, 2, 7, 9, 9), "avg", (3, 3, 3), (2, 2, 2), d=(2, 2, 2)),
    case("avg3d_k3_s2_pads2_onnx_incl", (1, 2, 5, 6, 7), "avg", (3, 3, 3), (2, 2, 2),
         (2, 2, 2, 2, 2, 2), rule="onnx"),
    case("avg3d_k3_s2_pads2_onnx_excl", (1, 2, 5, 6, 7), "avg", (3, 3, 3), (2, 2, 2),
         (2, 2, 2, 2, 2, 2), cip=False, rule="onnx"),
    # The other dtypes.
    case("max3d_fp16", (1, 2, 5, 6, 6), "max", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1),
         indices=True, dtype="fp16"),
    case("avg3d_fp16_excl", (1, 2, 5, 6, 6), "avg", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1),
         cip=False, dtype="fp16"),
    case("max3d_bf16", (1, 2, 5, 6, 6), "max", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1),
         indices=True, dtype="bf16"),
    case("avg3d_bf16_incl", (1, 2, 5, 6, 6), "avg", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1),
         dtype="bf16"),
    case("max3d_uint8", (1, 2, 5, 6, 6), "max", (2, 2, 2), (2, 2, 2), indices=True,
         dtype="uint8"),
    case("max3d_uint8_p1", (1, 2, 5, 6, 6), "max", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1),
         indices=True, dtype="uint8"),
    # 2-D with ONNX's explicit pads (the shapes of ONNX's node tests
    # test_maxpool_2d_pads, test_averagepool_2d_pads and ..._count_include_pad).
    case("max2d_k3_pads2_onnx", (1, 3, 28, 28), "max", (3, 3), (1, 1), (2, 2, 2, 2), rule="onnx"),
    case("avg2d_k3_pads2_onnx_excl", (1, 3, 28, 28), "avg", (3, 3), (1, 1), (2, 2, 2, 2),
         cip=False, rule="onnx"),
    case("avg2d_k3_pads2_onnx_incl", (1, 3, 28, 28), "avg", (3, 3), (1, 1), (2, 2, 2, 2),
         rule="onnx"),
    case("max2d_k3_s2_pads_asym_onnx", (1, 2, 9, 8), "max", (3, 3), (2, 2), (2, 0, 1, 2),
         indices=True, rule="onnx"),
]


def run_onnx(c, x):
    attrs = dict(kernel_shape=c["kernel"], strides=c["stride"], dilations=c["dilation"],
                 pads=c["pads"], ceil_mode=int(c["ceil_mode"]))
    return evaluate(c, attrs, x)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261206)
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
