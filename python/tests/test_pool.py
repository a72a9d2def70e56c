"""pool against a plain NumPy loop (written here), the CLI, and the GPU."""

import itertools

import numpy as np
import pytest

import tpb_emu
from conftest import gpu_or_skip


def reference(x, mode, kernel, stride, pads, count_include_pad=False):
    """N×C×(spatial) pooling by loops. pads: begins then ends per axis;
    max over in-input taps; avg = sum of in-input taps / their count (or the
    whole window with count_include_pad); indices flat within each plane."""
    sp = x.shape[2:]
    nd = len(sp)
    begins, ends = pads[:nd], pads[nd:]
    out_sp = [(sp[i] + begins[i] + ends[i] - kernel[i]) // stride[i] + 1 for i in range(nd)]
    y = np.zeros(x.shape[:2] + tuple(out_sp), np.float64)
    idx = np.zeros(y.shape, np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*map(range, out_sp)):
            taps = []
            for k in itertools.product(*map(range, kernel)):
                p = [o[i] * stride[i] - begins[i] + k[i] for i in range(nd)]
                if all(0 <= p[i] < sp[i] for i in range(nd)):
                    taps.append((x[(n, c, *p)], int(np.ravel_multi_index(p, sp))))
            if mode == "max":
                v, i = max(taps, key=lambda t: t[0])  # first maximum wins
                y[(n, c, *o)], idx[(n, c, *o)] = v, i
            else:
                count = int(np.prod(kernel)) if count_include_pad else len(taps)
                y[(n, c, *o)] = sum(float(t[0]) for t in taps) / count
    return y, idx


def data(shape, seed):
    """Multiples of 1/64 in [-4, 4): every fp32 sum of a window is exact, so
    an average differs from the exact mean only by its final rounding."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-256, 256, size=shape) / 64).astype(np.float32)


CASES = [
    # shape, kernel, stride, padding (symmetric, per axis)
    ((2, 3, 7, 9), (2, 3), (2, 2), (1, 1)),
    ((1, 4, 8, 8), (3, 3), (1, 2), (0, 1)),
    ((1, 2, 5, 6, 7), (2, 2, 3), (2, 1, 2), (1, 0, 1)),
]


@pytest.mark.parametrize("shape,kernel,stride,padding", CASES)
def test_max_exact_with_indices(shape, kernel, stride, padding):
    x = data(shape, 1)
    y, idx = tpb_emu.pool(x, mode="max", kernel=kernel, stride=stride, padding=padding,
                          return_indices=True)
    want, want_idx = reference(x, "max", kernel, stride, padding + padding)
    assert y.dtype == np.float32 and y.shape == want.shape
    assert np.array_equal(y, want.astype(np.float32))
    assert idx.dtype == np.int64 and np.array_equal(idx, want_idx)


@pytest.mark.parametrize("shape,kernel,stride,padding", CASES)
@pytest.mark.parametrize("include", [False, True])
def test_avg_within_one_ulp(shape, kernel, stride, padding, include):
    x = data(shape, 2)
    y = tpb_emu.pool(x, mode="avg", kernel=kernel, stride=stride, padding=padding,
                     count_include_pad=include)
    want, _ = reference(x, "avg", kernel, stride, padding + padding, include)
    np.testing.assert_array_max_ulp(y, want.astype(np.float32), maxulp=1)


def test_onnx_pads_and_defaults():
    x = data((1, 2, 6, 7), 3)
    y = tpb_emu.pool(x, mode="max", kernel=2, pads=(1, 0, 0, 1))
    want, _ = reference(x, "max", (2, 2), (2, 2), (1, 0, 0, 1))
    assert np.array_equal(y, want.astype(np.float32))


def test_dtypes():
    x = data((1, 2, 4, 4), 4)
    h = tpb_emu.pool(x.astype(np.float16), mode="max", kernel=2)
    assert h.dtype == np.float16
    assert np.array_equal(h, reference(x, "max", (2, 2), (2, 2), (0,) * 4)[0].astype(np.float16))
    u = (np.arange(32, dtype=np.uint8) * 7).reshape(1, 2, 4, 4)
    got = tpb_emu.pool(u, mode="max", kernel=2)
    assert got.dtype == np.uint8
    assert np.array_equal(got, reference(u, "max", (2, 2), (2, 2), (0,) * 4)[0].astype(np.uint8))
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)  # exact in bf16: multiples of 1/64
    b = tpb_emu.pool(bits, mode="max", kernel=2, dtype="bf16")
    assert b.dtype.name == "bfloat16"  # ml_dtypes is importable (.ci/run installs it)
    want = reference(x, "max", (2, 2), (2, 2), (0,) * 4)[0].astype(np.float32)
    assert np.array_equal(b.view(np.uint16), (want.view(np.uint32) >> 16).astype(np.uint16))


def test_matches_cli(tmp_path, cli):
    x = data((1, 3, 9, 8), 5)
    np.save(tmp_path / "x.npy", x)
    cli("pool", "--input", tmp_path / "x.npy", "--mode", "avg", "--kernel", "3,2",
        "--stride", "2", "--padding", "1,0", "--ceil-mode", "--output", tmp_path / "y.npy",
        "--backend", "cpu")
    y = tpb_emu.pool(x, mode="avg", kernel=(3, 2), stride=2, padding=(1, 0), ceil_mode=True)
    assert y.tobytes() == np.load(tmp_path / "y.npy").tobytes()


def test_option_errors():
    x = data((1, 1, 4, 4), 6)
    with pytest.raises(tpb_emu.UsageError, match=r"kernel=\(2, 2, 2\): expected one or two"):
        tpb_emu.pool(x, mode="max", kernel=(2, 2, 2))
    with pytest.raises(tpb_emu.UsageError, match="needs mode"):
        tpb_emu.pool(x, mode="avg", kernel=2, return_indices=True)
    with pytest.raises(tpb_emu.UsageError):
        tpb_emu.pool(x, mode="max", kernel=2, padding=1, pads=(1, 1, 1, 1))
    with pytest.raises(tpb_emu.UsageError):
        tpb_emu.pool(x, mode="max", kernel=-1)
    with pytest.raises(tpb_emu.UsageError):
        tpb_emu.pool(x, mode="median", kernel=2)
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.pool(x, mode="max", kernel=2, padding=2)  # more than half the kernel
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.pool(x.astype(np.float64), mode="max", kernel=2)
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.pool(x.reshape(16), mode="max", kernel=2)


def test_gpu_equals_cpu():
    x = data((1, 3, 10, 12), 8)
    for mode in ("max", "avg"):
        cpu = tpb_emu.pool(x, mode=mode, kernel=3, stride=2, padding=1)
        gpu = gpu_or_skip(lambda: tpb_emu.pool(x, mode=mode, kernel=3, stride=2, padding=1,
                                               backend="gpu"))
        assert gpu.tobytes() == cpu.tobytes()
    x5 = data((1, 2, 4, 5, 6), 9)
    cpu = tpb_emu.pool(x5, mode="max", kernel=2, return_indices=True)
    gpu = gpu_or_skip(lambda: tpb_emu.pool(x5, mode="max", kernel=2, return_indices=True,
                                           backend="gpu"))
    assert all(g.tobytes() == c.tobytes() for g, c in zip(gpu, cpu))


def test_a_large_c_contiguous_array_is_lent_unchanged_and_gives_the_copied_result():
    """Arrays of 64 KiB or more in C order are lent to the run, not copied (docs/python.md,
    "Arrays"): the result equals the one of a Fortran-order copy (which takes the copying
    path) and of NumPy, the array is unchanged, and a read-only array is lent too."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 8, 64, 96)).astype(np.float32)  # 393 KiB
    before = x.copy()
    lent = tpb_emu.max_pool2d(x, 2, backend="cpu")
    copied = tpb_emu.max_pool2d(np.asfortranarray(x), 2, backend="cpu")
    want = x.reshape(2, 8, 32, 2, 48, 2).max(axis=(3, 5))
    assert np.array_equal(lent, want) and np.array_equal(copied, want)
    assert np.array_equal(x, before)
    ro = x.copy()
    ro.setflags(write=False)
    assert np.array_equal(tpb_emu.max_pool2d(ro, 2, backend="cpu"), want)
    # The input may go away while the result lives on.
    y = tpb_emu.max_pool2d(rng.standard_normal((1, 4, 128, 128)).astype(np.float32), 2,
                           backend="cpu")
    assert y.shape == (1, 4, 64, 64)
