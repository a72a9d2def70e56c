"""A Python ctypes client of tpb-emu's libnrt, written the way public wrappers call the real
runtime (SPEC-NRT §10 [C-CTY], [NRTPY]): CDLL("libnrt.so"), the §2.2 tensor-info layout as a
ctypes Structure walked entry by entry, one tensor per info entry allocated by its size, sets
filled by name, outputs compared byte for byte with `tpb-emu run MODEL.neff` on the same inputs.

    python nrt/tests/ctypes_client.py TARGET_DIR [BACKEND ...]

TARGET_DIR holds libnrt.so (scripts/build-libnrt.sh) and tpb-emu. Each backend (default cpu)
runs in its own process, since TPB_EMU_BACKEND is read at nrt_init. Exits 1 on any mismatch.
"""

import ctypes
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

NRT_SUCCESS = 0
USAGE_INPUT, USAGE_OUTPUT = 0, 1
PLACEMENT_DEVICE = 0
# SPEC-NRT §3.1, the [H28] numbering (the library's default, NRT-EC-1).
DTYPES = {0xA: np.float32, 0x7: np.float16, 0x6: np.uint16, 0x2: np.int8, 0x3: np.uint8,
          0x4: np.int16, 0x5: np.uint16, 0x8: np.int32, 0x9: np.uint32, 0xC: np.int64,
          0x1: np.uint64}


class TensorInfo(ctypes.Structure):
    """nrt_tensor_info_t (SPEC-NRT §2.2): 296 bytes."""
    _fields_ = [("name", ctypes.c_char * 256), ("usage", ctypes.c_int),
                ("size", ctypes.c_size_t), ("dtype", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_uint32)), ("ndim", ctypes.c_uint32)]


assert ctypes.sizeof(TensorInfo) == 296
assert [TensorInfo.__dict__[f].offset for f in ("usage", "size", "dtype", "shape", "ndim")] == \
    [256, 264, 272, 280, 288]


class TensorInfoArray(ctypes.Structure):
    _fields_ = [("tensor_count", ctypes.c_uint64)]


def check(status, what):
    if status != NRT_SUCCESS:
        raise RuntimeError(f"{what} -> {status}")


def client(target, neff_path, inputs):
    """Runs `neff_path` with `inputs` (name -> array) through the library; returns name -> bytes."""
    lib = ctypes.CDLL(os.path.join(target, "libnrt.so"))
    lib.nrt_get_status_as_str.restype = ctypes.c_char_p
    lib.nrt_tensor_get_size.restype = ctypes.c_size_t
    lib.nrt_close.restype = ctypes.c_int  # [C-CTY] reads an int (NRT-EC-6)
    check(lib.nrt_init(1, b"", b""), "nrt_init")
    neff = open(neff_path, "rb").read()
    model = ctypes.c_void_p()
    check(lib.nrt_load(neff, ctypes.c_size_t(len(neff)), -1, -1, ctypes.byref(model)), "nrt_load")
    info = ctypes.POINTER(TensorInfoArray)()
    check(lib.nrt_get_model_tensor_info(model, ctypes.byref(info)), "tensor info")
    count = info.contents.tensor_count
    base = ctypes.addressof(info.contents) + 8
    entries = [TensorInfo.from_address(base + 296 * i) for i in range(count)]
    sets = {USAGE_INPUT: ctypes.c_void_p(), USAGE_OUTPUT: ctypes.c_void_p()}
    for s in sets.values():
        check(lib.nrt_allocate_tensor_set(ctypes.byref(s)), "allocate set")
    tensors = []
    for e in entries:
        t = ctypes.c_void_p()
        check(lib.nrt_tensor_allocate(PLACEMENT_DEVICE, 0, ctypes.c_size_t(e.size), e.name,
                                      ctypes.byref(t)), "allocate")
        assert lib.nrt_tensor_get_size(t) == e.size
        tensors.append(t)
        name = e.name.decode()
        if e.usage == USAGE_INPUT:
            shape = tuple(e.shape[d] for d in range(e.ndim))
            data = np.ascontiguousarray(inputs[name])
            assert data.shape == shape and data.dtype == DTYPES[e.dtype], (name, shape, data.dtype)
            buf = data.tobytes()
            check(lib.nrt_tensor_write(t, buf, ctypes.c_size_t(0), ctypes.c_size_t(len(buf))),
                  "write")
        check(lib.nrt_add_tensor_to_tensor_set(sets[e.usage], e.name, t), "add")
    check(lib.nrt_execute(model, sets[USAGE_INPUT], sets[USAGE_OUTPUT]), "nrt_execute")
    outputs = {}
    for e, t in zip(entries, tensors):
        if e.usage == USAGE_OUTPUT:
            buf = ctypes.create_string_buffer(e.size)
            check(lib.nrt_tensor_read(t, buf, ctypes.c_size_t(0), ctypes.c_size_t(e.size)), "read")
            outputs[e.name.decode()] = buf.raw
    check(lib.nrt_unload(model), "unload")
    for t in tensors:
        lib.nrt_tensor_free(ctypes.byref(t))
        assert not t.value
    for s in sets.values():
        lib.nrt_destroy_tensor_set(ctypes.byref(s))
    check(lib.nrt_free_model_tensor_info(info), "free info")
    assert lib.nrt_close() == 0
    return outputs


def main():
    target = os.path.abspath(sys.argv[1])
    backends = sys.argv[2:] or ["cpu"]
    if os.environ.get("NRT_CTYPES_CHILD"):
        # One backend in this process: argv = target neff inputs.npz out.json
        neff, npz, out = sys.argv[2], sys.argv[3], sys.argv[4]
        got = client(target, neff, dict(np.load(npz)))
        json.dump({k: v.hex() for k, v in got.items()}, open(out, "w"))
        return 0
    tpb = os.path.join(target, "tpb-emu")
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        rng = np.random.default_rng(7)
        x = (rng.standard_normal((1, 6, 10, 12)) * 8).astype(np.float32)
        np.save(os.path.join(d, "pool_x.npy"), x)
        pool = os.path.join(d, "pool.neff")
        subprocess.run([tpb, "pool2d", "--input", os.path.join(d, "pool_x.npy"), "--mode", "avg",
                        "--kernel", "2,2", "--output", os.path.join(d, "pool_y.npy"),
                        "--backend", "cpu", "--emit-neff", pool], check=True)
        packed = os.path.join(d, "packed.neff")
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        subprocess.run([tpb, "pack", os.path.join(root, "examples/program/program.toml"),
                        "-o", packed], check=True)
        for neff in (pool, packed):
            j = json.loads(subprocess.run([tpb, "inspect", neff, "--json"], check=True,
                                          capture_output=True).stdout)
            inputs = {}
            for t in j["inputs"]:
                inputs[t["name"]] = (rng.standard_normal(t["shape"]) * 4).astype(np.float32)
            npz = os.path.join(d, "in.npz")
            np.savez(npz, **inputs)
            args = []
            for name, a in inputs.items():
                p = os.path.join(d, f"in_{name}.npy")
                np.save(p, a)
                args += ["--input", f"{name}={p}"]
            for backend in backends:
                out = os.path.join(d, f"cli_{backend}")
                subprocess.run([tpb, "run", neff, *args, "--out", out, "--backend", backend],
                               check=True)
                res = os.path.join(d, "got.json")
                env = dict(os.environ, NRT_CTYPES_CHILD="1", TPB_EMU_BACKEND=backend)
                subprocess.run([sys.executable, __file__, target, neff, npz, res], check=True,
                               env=env)
                got = {k: bytes.fromhex(v) for k, v in json.load(open(res)).items()}
                assert set(got) == {t["name"] for t in j["outputs"]}, got.keys()
                for name, b in got.items():
                    want = np.load(os.path.join(out, f"{name}.npy"))
                    ok = want.tobytes() == b
                    failed += not ok
                    print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(neff)} {backend} {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
