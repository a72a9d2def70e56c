#!/usr/bin/env python3
"""Benchmark of the Python bindings (issue #34, "Performance"; not a timed test).

Two figures, each on the same float32 N×C×H×W array (default 1×128×720×720), all in one
process, the contenders interleaved round by round so that a slow spell of a shared machine
slows every side alike; each side's median of --repeat (and its best) is reported:

1. ``tpb_emu.max_pool2d(x, k)`` (in memory: array in, array out) beside ONNX Runtime's MaxPool
   (one CPU session, ``session.run`` on the array; its default thread pool, plus the best
   intra-op thread count when --ort-threads is given) and NumPy (the k×k window maximum:
   ``x.reshape(N, C, H/k, k, W/k, k).max(axis=(3, 5))``, NumPy's fastest form for a
   non-overlapping window; --numpy-sliding uses ``sliding_window_view`` instead). Target:
   tpb_emu ≤ 1.0× ONNX Runtime. The outputs must be identical.
2. ``tpb_emu.Neff(path).run(...)`` of the pool2d NEFF that ``tpb-emu pool2d --emit-neff``
   writes for the same job, beside the in-process time that ``tpb-emu run MODEL.neff`` reports
   ("wall time": load, input read, staging, run and output write, without process start).
   Target: Neff.run ≤ 1.1× the CLI's. The outputs must equal the CLI's bit for bit.

Besides each side's median and best, the median of the per-round ratios is printed: the sides
of one round run back to back, so that figure cancels most of a busy machine's slow spells.

Setup (README "From Python"):
    python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install maturin==1.16.0 numpy==2.4.6 onnxruntime onnx==1.23.2 \\
        ml_dtypes==0.7.0
    target/bench-venv/bin/maturin build --release -o target/wheels
    target/bench-venv/bin/pip install --force-reinstall --no-deps target/wheels/tpb_emu-*.whl
    cargo build --release --bin tpb-emu
Run:
    target/bench-venv/bin/python scripts/bench_python.py [--shape 1,128,720,720] [--kernel 2]
        [--repeat 7] [--backend cpu] [--json]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import tpb_emu


def ort_session(k, shape, threads):
    import onnxruntime as ort
    from onnx import TensorProto, helper

    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], strides=[k, k])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([node], "pool", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    so = ort.SessionOptions()
    if threads:
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])


def numpy_pool(x, k, sliding):
    n, c, h, w = x.shape
    if sliding or h % k or w % k:
        v = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::k, ::k]
        return v.max(axis=(-2, -1))
    return x.reshape(n, c, h // k, k, w // k, k).max(axis=(3, 5))


WALL = re.compile(r"wall time: ([0-9.]+) (ms|s)\b")


def cli_run(exe, neff, name, src, out, backend):
    """`tpb-emu run` of the NEFF: the in-process wall time it reports, in seconds."""
    p = subprocess.run([exe, "run", neff, "--input", f"{name}={src}", "--out", out,
                        "--backend", backend], check=True, capture_output=True, text=True)
    m = WALL.search(p.stdout + p.stderr)
    if not m:
        sys.exit(f"no 'wall time' in tpb-emu run's output:\n{p.stdout}{p.stderr}")
    return float(m.group(1)) * (1e-3 if m.group(2) == "ms" else 1.0)


def timed(f):
    t = time.perf_counter()
    r = f()
    return time.perf_counter() - t, r


def summary(ts):
    return {"median_ms": statistics.median(ts) * 1e3, "best_ms": min(ts) * 1e3,
            "runs": len(ts)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="1,128,720,720")
    ap.add_argument("--kernel", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--ort-threads", type=int, default=0,
                    help="ONNX Runtime intra-op threads (0: its default pool)")
    ap.add_argument("--numpy-sliding", action="store_true",
                    help="NumPy through sliding_window_view (slow) instead of reshape+max")
    ap.add_argument("--tpb", default="target/release/tpb-emu")
    ap.add_argument("--skip", default="", help="comma list of sides to skip: ort,numpy,neff")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    shape = tuple(int(s) for s in a.shape.split(","))
    k = a.kernel
    skip = set(filter(None, a.skip.split(",")))
    n = int(np.prod(shape))
    x = ((np.arange(n, dtype=np.int64) % 1013).astype(np.float32) * 0.5 - 200.0).reshape(shape)

    sides = {"tpb_emu.max_pool2d": lambda: tpb_emu.max_pool2d(x, k, backend=a.backend)}
    if "ort" not in skip:
        sess = ort_session(k, shape, a.ort_threads)
        sides["onnxruntime MaxPool"] = lambda: sess.run(None, {"x": x})[0]
    if "numpy" not in skip:
        sides["numpy"] = lambda: numpy_pool(x, k, a.numpy_sliding)

    with tempfile.TemporaryDirectory() as d:
        src, neff = os.path.join(d, "x.npy"), os.path.join(d, "pool.neff")
        np.save(src, x)
        if "neff" not in skip:
            subprocess.run([a.tpb, "pool2d", "--input", src, "--mode", "max", "--kernel",
                            f"{k},{k}", "--output", os.path.join(d, "y.npy"), "--backend",
                            "cpu", "--emit-neff", neff], check=True, capture_output=True)
            model = tpb_emu.Neff(neff)
            name = model.inputs[0][0]
            sides["Neff.run"] = lambda: model.run({name: x}, backend=a.backend)
        times = {s: [] for s in sides}
        cli = []
        results = {}
        for s, f in sides.items():  # warm: first-run allocations, thread pools
            results[s] = f()
        if "neff" not in skip:
            cli_run(a.tpb, neff, name, src, os.path.join(d, "out"), a.backend)
        for _ in range(a.repeat):
            for s, f in sides.items():
                t, _ = timed(f)
                times[s].append(t)
            if "neff" not in skip:
                cli.append(cli_run(a.tpb, neff, name, src, os.path.join(d, "out"), a.backend))

        # Same results: the pooled map bit for bit, and Neff.run equal to tpb-emu run's .npy.
        y = results["tpb_emu.max_pool2d"]
        for s in ("onnxruntime MaxPool", "numpy"):
            if s in results and not np.array_equal(results[s], y):
                sys.exit(f"{s} differs from tpb_emu.max_pool2d")
        if "neff" not in skip:
            (out_name, got), = results["Neff.run"].items()
            want = np.load(os.path.join(d, "out", f"{out_name}.npy"))
            if got.tobytes() != want.tobytes() or not np.array_equal(got.reshape(y.shape), y):
                sys.exit("Neff.run differs from tpb-emu run")

    report = {"shape": list(shape), "kernel": k, "backend": a.backend, "repeat": a.repeat,
              "cpus": os.cpu_count(), "sides": {s: summary(t) for s, t in times.items()}}
    if cli:
        report["sides"]["tpb-emu run (in-process wall time)"] = summary(cli)
    med = {s: v["median_ms"] for s, v in report["sides"].items()}
    ratios = {}
    if "onnxruntime MaxPool" in med:
        ratios["max_pool2d / onnxruntime"] = med["tpb_emu.max_pool2d"] / med["onnxruntime MaxPool"]
    if "numpy" in med:
        ratios["max_pool2d / numpy"] = med["tpb_emu.max_pool2d"] / med["numpy"]
    if cli:
        ratios["Neff.run / tpb-emu run"] = med["Neff.run"] / med["tpb-emu run (in-process wall time)"]
    report["ratios_of_medians"] = ratios
    # Per round, the sides ran back to back: the median of the per-round ratios cancels most
    # of a shared machine's slow spells (the figure to read when the machine is busy).
    paired = {}
    if "onnxruntime MaxPool" in times:
        paired["max_pool2d / onnxruntime"] = statistics.median(
            a / b for a, b in zip(times["tpb_emu.max_pool2d"], times["onnxruntime MaxPool"]))
    if cli:
        paired["Neff.run / tpb-emu run"] = statistics.median(
            a / b for a, b in zip(times["Neff.run"], cli))
    report["median_per_round_ratios"] = paired
    if a.json:
        print(json.dumps(report, indent=2))
        return
    print(f"max pool {k}x{k} stride {k} on {'x'.join(map(str, shape))} float32, backend "
          f"{a.backend}, {a.repeat} interleaved rounds, {os.cpu_count()} CPUs")
    for s, v in report["sides"].items():
        print(f"  {s:40s} median {v['median_ms']:9.1f} ms   best {v['best_ms']:9.1f} ms")
    targets = {"max_pool2d / onnxruntime": 1.0, "Neff.run / tpb-emu run": 1.1}
    for r, v in ratios.items():
        t = targets.get(r)
        print(f"  {r:40s} {v:6.3f}x of medians" + (f"   (target <= {t})" if t else ""))
    for r, v in paired.items():
        print(f"  {r:40s} {v:6.3f}x median of per-round ratios")


if __name__ == "__main__":
    main()
