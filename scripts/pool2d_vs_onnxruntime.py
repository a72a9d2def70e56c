#!/usr/bin/env python3
"""`tpb-emu pool` end to end beside ONNX Runtime (CPU) doing the same job,
on an N×C×L, N×C×H×W or N×C×D×H×W map (a k×…×k window, stride k).

Both sides do the whole job: read the input .npy, pool, write the output .npy.
ONNX Runtime runs MaxPool/AveragePool with np.load + session.run + np.save in
this process; each thread count from 1 up to the CPU count (powers of two) is
tried and the best kept. tpb-emu runs as a subprocess and is timed by wall
clock, start to exit (process start and exit included). ONNX Runtime is
also timed once per round in a fresh Python process (the job alone, after
imports): the same cold address space a command-line tool starts from. The
runs of both
sides are interleaved; each side's best of --repeat is reported, and the
ratio tpb-emu / ONNX Runtime (the issue's target: <= 1.2). The results are
compared: max must be identical, avg within float32 rounding.

Setup (PyPI):
    python3 -m venv /tmp/venv3 && /tmp/venv3/bin/pip install numpy onnx onnxruntime
Run:
    cargo build --release
    /tmp/venv3/bin/python scripts/pool2d_vs_onnxruntime.py [--shape 1,128,720,720]
        [--mode max|avg|both] [--kernel 2] [--backend cpu] [--repeat 3] [--json]
    3-D (issue #33's figure):
    /tmp/venv3/bin/python scripts/pool2d_vs_onnxruntime.py --shape 1,32,64,128,128 --mode max
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper


def model(mode, k, shape):
    op = "MaxPool" if mode == "max" else "AveragePool"
    spatial = len(shape) - 2
    node = helper.make_node(op, ["x"], ["y"], kernel_shape=[k] * spatial, strides=[k] * spatial)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([node], "pool", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    return m.SerializeToString()


def ort_job(sess, src, dst):
    t = time.perf_counter()
    x = np.load(src)
    (y,) = sess.run(None, {"x": x})
    np.save(dst, y)
    return time.perf_counter() - t


def ort_sessions(mode, k, shape):
    raw = model(mode, k, shape)
    n, out = 1, []
    while n <= (os.cpu_count() or 1):
        so = ort.SessionOptions()
        so.intra_op_num_threads = n
        so.inter_op_num_threads = 1
        out.append((n, ort.InferenceSession(raw, so, providers=["CPUExecutionProvider"])))
        n *= 2
    return out


def ort_fresh(mode, k, shape, threads, src, dst):
    """One job in a new Python process (imports and session creation not
    timed): ONNX Runtime's time from a fresh address space, as tpb-emu runs."""
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--fresh-child", f"{mode},{k},{threads}",
         "--shape", ",".join(map(str, shape)), "--src", src, "--dst", dst],
        check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def fresh_child(a, shape):
    mode, k, threads = a.fresh_child.split(",")
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model(mode, int(k), shape), so,
                                providers=["CPUExecutionProvider"])
    print(ort_job(sess, a.src, a.dst))


def tpb_job(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def measure(exe, mode, k, backend, shape, src, y_ort, y_tpb, repeat):
    """Best of `repeat` for each side, the runs interleaved (ONNX Runtime at
    each thread count, then tpb-emu) so that a slow spell of a shared machine
    slows both sides alike."""
    sessions = ort_sessions(mode, k, shape)
    cmd = [exe, "pool", "--input", src, "--mode", mode, "--kernel", str(k),
           "--output", y_tpb, "--backend", backend]
    for _, sess in sessions:  # warm: page cache, first-run allocations
        ort_job(sess, src, y_ort)
    tpb_job(cmd)
    best_ort = {n: float("inf") for n, _ in sessions}
    best_tpb = best_fresh = float("inf")
    for _ in range(repeat):
        for n, sess in sessions:
            best_ort[n] = min(best_ort[n], ort_job(sess, src, y_ort))
        n = min(best_ort, key=best_ort.get)
        best_fresh = min(best_fresh, ort_fresh(mode, k, shape, n, src, y_ort))
        best_tpb = min(best_tpb, tpb_job(cmd))
    n = min(best_ort, key=best_ort.get)
    return best_tpb, best_ort[n], n, best_fresh


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="1,128,720,720")
    ap.add_argument("--mode", choices=["max", "avg", "both"], default="both")
    ap.add_argument("--kernel", type=int, default=2)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--exe", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "tpb-emu"))
    ap.add_argument("--json", action="store_true", help="one JSON object per mode")
    ap.add_argument("--fresh-child", help=argparse.SUPPRESS)
    ap.add_argument("--src", help=argparse.SUPPRESS)
    ap.add_argument("--dst", help=argparse.SUPPRESS)
    a = ap.parse_args()
    shape = tuple(int(s) for s in a.shape.split(","))
    if a.fresh_child:
        fresh_child(a, shape)
        return
    modes = ["max", "avg"] if a.mode == "both" else [a.mode]
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "x.npy")
        rng = np.random.default_rng(0)
        np.save(src, rng.standard_normal(shape, dtype=np.float32))
        size_mb = os.path.getsize(src) / 1e6
        for mode in modes:
            y_ort, y_tpb = os.path.join(d, "ort.npy"), os.path.join(d, "tpb.npy")
            t_tpb, t_ort, n, t_fresh = measure(a.exe, mode, a.kernel, a.backend, shape, src,
                                      y_ort, y_tpb, a.repeat)
            yo, yt = np.load(y_ort), np.load(y_tpb)
            if mode == "max":
                same = yo.shape == yt.shape and np.array_equal(yo, yt)
            else:
                same = yo.shape == yt.shape and np.allclose(yo, yt, rtol=2e-7, atol=1e-7)
            ratio = t_tpb / t_ort
            if a.json:
                print(json.dumps({"mode": mode, "shape": list(shape), "kernel": a.kernel,
                                  "backend": a.backend, "tpb_s": t_tpb, "ort_s": t_ort,
                                  "ort_threads": n, "ratio": ratio, "ort_fresh_s": t_fresh,
                                  "ratio_fresh": t_tpb / t_fresh, "match": bool(same)}))
            else:
                window = "x".join([str(a.kernel)] * (len(shape) - 2))
                print(f"{mode} {window} on {list(shape)} fp32 ({size_mb:.0f} MB in): "
                      f"tpb-emu ({a.backend}) {t_tpb * 1e3:.1f} ms, onnxruntime ({n} threads) "
                      f"{t_ort * 1e3:.1f} ms, ratio {ratio:.2f}; onnxruntime in a fresh "
                      f"process {t_fresh * 1e3:.1f} ms, ratio {t_tpb / t_fresh:.2f}; results "
                      f"{'match' if same else 'DIFFER'}")
            if not same:
                sys.exit(1)


if __name__ == "__main__":
    main()
