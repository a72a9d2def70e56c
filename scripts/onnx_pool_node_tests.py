#!/usr/bin/env python3
"""ONNX's own MaxPool / AveragePool node tests through `tpb-emu pool`.

The `onnx` package ships the generators of its backend node tests (the
models, inputs and expected outputs, built in memory by
onnx.backend.test.case.node); nothing of them is copied into this
repository. Each case's attributes become `tpb-emu pool` options (explicit
`pads` as `--pads`, `auto_pad` SAME_UPPER/SAME_LOWER as the pads ONNX
computes for them, `strides` always given since ONNX's default is 1), the
input is written as an .npy, and the output (and ONNX's Indices, made
per-volume as PyTorch's) is compared with ONNX's expected values at the
case's own tolerances (rtol, atol), on each backend asked for.

Setup and run (PyPI):
    python3 -m venv /tmp/fx && /tmp/fx/bin/pip install onnx numpy
    cargo build --release
    /tmp/fx/bin/python scripts/onnx_pool_node_tests.py [--backend cpu --backend gpu]
        [--only pads,3d]

Exit 0 when every case that ran passed; cases the emulator cannot take
(storage_order=1 indices, a window wholly in padding) are listed as skipped
with the reason.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import helper, numpy_helper  # noqa: F401  (numpy_helper: the data sets)
from onnx.backend.test.case import node as node_cases


def cases():
    # One collection of every node test (the generators run once per process).
    out = []
    for c in node_cases.collect_testcases(None):
        if c.model.graph.node[0].op_type in ("MaxPool", "AveragePool"):
            out.append(c)
    return out


def attrs(n):
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


def same_pads(auto, shape, k, s, d):
    """ONNX's pads for auto_pad SAME_UPPER / SAME_LOWER (begins, then ends)."""
    begins, ends = [], []
    for size, kk, ss, dd in zip(shape, k, s, d):
        out = math.ceil(size / ss)
        total = max((out - 1) * ss + (kk - 1) * dd + 1 - size, 0)
        small, big = total // 2, total - total // 2
        begins.append(small if auto == "SAME_UPPER" else big)
        ends.append(big if auto == "SAME_UPPER" else small)
    return begins + ends


def translate(c, x):
    """`tpb-emu pool` options for the case, or (None, reason)."""
    n = c.model.graph.node[0]
    a = attrs(n)
    spatial = x.ndim - 2
    k = list(a["kernel_shape"])
    s = list(a.get("strides", [1] * spatial))
    d = list(a.get("dilations", [1] * spatial))
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads = same_pads(auto, x.shape[2:], k, s, d)
    elif auto == "VALID" or "pads" not in a:
        pads = [0] * (2 * spatial)
    else:
        pads = list(a["pads"])
    if a.get("storage_order", 0) != 0:
        return None, "storage_order=1 (column-major indices)"
    mode = "max" if n.op_type == "MaxPool" else "avg"
    opts = ["--mode", mode, "--kernel", ",".join(map(str, k)),
            "--stride", ",".join(map(str, s)), "--dilation", ",".join(map(str, d)),
            "--pads", ",".join(map(str, pads))]
    if a.get("ceil_mode", 0):
        opts.append("--ceil-mode")
    if mode == "avg" and a.get("count_include_pad", 0):
        opts.append("--count-include-pad")
    return opts, len(n.output) == 2


def run_case(exe, c, backend, d):
    inputs, outputs = c.data_sets[0]
    x = inputs[0]
    opts, with_idx = translate(c, x)
    if opts is None:
        return "skipped", with_idx
    src, dst, idx = (os.path.join(d, f) for f in ("x.npy", "y.npy", "i.npy"))
    np.save(src, x)
    cmd = [exe, "pool", "--input", src, "--output", dst, "--backend", backend] + opts
    if with_idx:
        cmd += ["--indices", idx]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return "FAILED", f"exit {r.returncode}: {r.stderr.strip()}"
    y = np.load(dst)
    try:
        np.testing.assert_allclose(y, outputs[0], rtol=c.rtol, atol=c.atol)
    except AssertionError as e:
        return "FAILED", str(e).strip().splitlines()[-1]
    if with_idx:
        want = outputs[1].astype(np.int64)
        volume = int(np.prod(x.shape[2:]))
        offs = (np.arange(x.shape[0] * x.shape[1], dtype=np.int64) * volume).reshape(
            x.shape[0], x.shape[1], *([1] * (want.ndim - 2)))
        if not np.array_equal(np.load(idx), want - offs):
            return "FAILED", "indices differ"
    return "passed", f"rtol {c.rtol}, atol {c.atol}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", action="append", help="cpu, gpu (default: both)")
    ap.add_argument("--only", help="comma-separated substrings of case names")
    ap.add_argument("--exe", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "tpb-emu"))
    a = ap.parse_args()
    backends = a.backend or ["cpu", "gpu"]
    only = a.only.split(",") if a.only else None
    failed = ran = 0
    with tempfile.TemporaryDirectory() as d:
        for c in cases():
            if only and not any(o in c.name for o in only):
                continue
            for b in backends:
                status, detail = run_case(a.exe, c, b, d)
                ran += status != "skipped"
                failed += status == "FAILED"
                print(f"{c.name:52} {b:4} {status}: {detail}")
    print(f"{ran - failed} passed, {failed} failed")
    sys.exit(1 if failed or not ran else 0)


if __name__ == "__main__":
    main()
