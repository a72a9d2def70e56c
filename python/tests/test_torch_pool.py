"""max_pool1d/2d/3d and avg_pool1d/2d/3d (torch.nn.functional's names and
defaults) against a NumPy reference of PyTorch's definition written here,
against `tpb-emu pool` bit for bit, and on the GPU."""

import itertools
import math

import numpy as np
import pytest

import tpb_emu
from conftest import bits, gpu_or_skip

FNS = {
    ("max", 1): tpb_emu.max_pool1d, ("max", 2): tpb_emu.max_pool2d, ("max", 3): tpb_emu.max_pool3d,
    ("avg", 1): tpb_emu.avg_pool1d, ("avg", 2): tpb_emu.avg_pool2d, ("avg", 3): tpb_emu.avg_pool3d,
}


def out_size(n, k, s, p, d, ceil):
    """PyTorch's pooling output size (pooling_output_shape)."""
    span = n + 2 * p - d * (k - 1) - 1
    o = (span + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def torch_ref(x, mode, k, s, p, d=None, ceil=False, include=True):
    """PyTorch's max/avg pooling by loops: max over the taps inside the input
    (first maximum wins, flat index within the plane); average over the taps
    inside the input, divided by the window clipped to the padded input
    (count_include_pad) or by the taps inside the input."""
    sp = x.shape[2:]
    nd = len(sp)
    d = d or (1,) * nd
    osz = [out_size(sp[i], k[i], s[i], p[i], d[i], ceil) for i in range(nd)]
    y = np.zeros(x.shape[:2] + tuple(osz), np.float64)
    idx = np.zeros(y.shape, np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*map(range, osz)):
            taps = []
            for t in itertools.product(*map(range, k)):
                q = [o[i] * s[i] - p[i] + t[i] * d[i] for i in range(nd)]
                if all(0 <= q[i] < sp[i] for i in range(nd)):
                    taps.append((x[(n, c, *q)], int(np.ravel_multi_index(q, sp))))
            if mode == "max":
                v, j = max(taps, key=lambda t: t[0])
                y[(n, c, *o)], idx[(n, c, *o)] = v, j
            else:
                if include:
                    count = math.prod(
                        min(o[i] * s[i] - p[i] + k[i], sp[i] + p[i]) - (o[i] * s[i] - p[i])
                        for i in range(nd))
                else:
                    count = len(taps)
                y[(n, c, *o)] = sum(float(t[0]) for t in taps) / count
    return y, idx


def data(shape, seed):
    """Multiples of 1/64 in [-4, 4): window sums are exact in fp32."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-256, 256, size=shape) / 64).astype(np.float32)


# (shape, kernel, stride (None: the kernel), padding, dilation, ceil_mode)
CASES = [
    ((2, 3, 11), (3,), (2,), (1,), (1,), False),
    ((1, 2, 10), (2,), None, (0,), (2,), True),
    ((2, 3, 7, 9), (2, 3), (2, 2), (1, 1), (1, 1), False),
    ((1, 4, 8, 8), (3, 3), (2, 1), (1, 0), (1, 1), True),
    ((1, 2, 9, 9), (2, 2), (1, 2), (0, 1), (2, 1), False),
    ((1, 2, 5, 6, 7), (2, 2, 3), (2, 1, 2), (1, 0, 1), (1, 1, 1), False),
    ((1, 1, 5, 5, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), True),
]


def call(mode, case, x, **kw):
    shape, k, s, p, d, ceil = case
    f = FNS[(mode, len(k))]
    args = dict(stride=s, padding=p, ceil_mode=ceil)
    if mode == "max":
        args["dilation"] = d
    return f(x, k, **args, **kw)


@pytest.mark.parametrize("case", CASES)
def test_max_against_numpy(case):
    shape, k, s, p, d, ceil = case
    x = data(shape, 1)
    y, idx = call("max", case, x, return_indices=True, backend="cpu")
    want, want_idx = torch_ref(x, "max", k, s or k, p, d, ceil)
    assert y.dtype == np.float32 and y.shape == want.shape
    assert np.array_equal(y, want.astype(np.float32))
    assert idx.dtype == np.int64 and np.array_equal(idx, want_idx)
    assert call("max", case, x, backend="cpu").tobytes() == y.tobytes()


@pytest.mark.parametrize("case", [c for c in CASES if c[4] == (1,) * len(c[1])])
@pytest.mark.parametrize("include", [True, False])
def test_avg_against_numpy(case, include):
    shape, k, s, p, d, ceil = case
    x = data(shape, 2)
    y = call("avg", case, x, count_include_pad=include, backend="cpu")
    want, _ = torch_ref(x, "avg", k, s or k, p, None, ceil, include)
    assert y.shape == want.shape
    np.testing.assert_array_max_ulp(y, want.astype(np.float32), maxulp=1)


def test_defaults_are_torchs():
    x = data((1, 2, 6, 6), 3)
    # stride=None is the kernel; padding 0; count_include_pad=True.
    assert np.array_equal(tpb_emu.max_pool2d(x, 2), torch_ref(x, "max", (2, 2), (2, 2), (0, 0))[0])
    y = tpb_emu.avg_pool2d(x, 3, 1, 1)
    np.testing.assert_array_max_ulp(
        y, torch_ref(x, "avg", (3, 3), (1, 1), (1, 1), include=True)[0].astype(np.float32), maxulp=1)
    # Unbatched (C×H×W) as PyTorch takes it.
    assert tpb_emu.max_pool2d(x[0], 2).tobytes() == tpb_emu.max_pool2d(x, 2)[0].tobytes()
    y1, i1 = tpb_emu.max_pool1d(x[0, :, 0], 2, return_indices=True)
    assert y1.shape == (2, 3) and i1.shape == (2, 3)
    assert tpb_emu.max_pool2d(x, 2, stride=()).tobytes() == tpb_emu.max_pool2d(x, 2).tobytes()


def cli_pool(cli, tmp_path, x, mode, case, include=False, dtype=None, backend="cpu"):
    shape, k, s, p, d, ceil = case
    j = lambda v: ",".join(map(str, v))  # noqa: E731
    np.save(tmp_path / "x.npy", x)
    args = ["pool", "--input", tmp_path / "x.npy", "--mode", mode, "--kernel", j(k),
            "--padding", j(p), "--output", tmp_path / "y.npy", "--backend", backend]
    if s:
        args += ["--stride", j(s)]
    if ceil:
        args.append("--ceil-mode")
    if mode == "max":
        args += ["--dilation", j(d), "--indices", tmp_path / "i.npy"]
    if include:
        args.append("--count-include-pad")
    if dtype:
        args += ["--dtype", dtype]
    cli(*args)
    y = np.load(tmp_path / "y.npy")
    return (y, np.load(tmp_path / "i.npy")) if mode == "max" else y


@pytest.mark.parametrize("case", CASES)
def test_equal_to_the_cli(tmp_path, cli, case):
    x = data(case[0], 4)
    y, idx = cli_pool(cli, tmp_path, x, "max", case)
    got, got_idx = call("max", case, x, return_indices=True, backend="cpu")
    assert got.tobytes() == y.tobytes() and got_idx.tobytes() == idx.tobytes()
    if case[4] == (1,) * len(case[1]):
        y = cli_pool(cli, tmp_path, x, "avg", case, include=True)
        assert call("avg", case, x, backend="cpu").tobytes() == y.tobytes()
        y = cli_pool(cli, tmp_path, x, "avg", case)
        assert call("avg", case, x, count_include_pad=False, backend="cpu").tobytes() == y.tobytes()


@pytest.mark.parametrize("dtype", ["float16", "uint8", "bfloat16"])
def test_every_dtype_equal_to_the_cli(tmp_path, cli, dtype):
    import ml_dtypes

    case = CASES[3]
    x = data(case[0], 5)
    if dtype == "uint8":
        x = (x * 16 + 64).astype(np.uint8)
        a, on_disk, flag = x, x, None
    elif dtype == "float16":
        a = on_disk = x.astype(np.float16)
        flag = None
    else:
        a = x.astype(ml_dtypes.bfloat16)
        on_disk, flag = a.view(np.uint16), "bf16"
    y, idx = cli_pool(cli, tmp_path, on_disk, "max", case, dtype=flag)
    got, got_idx = call("max", case, a, return_indices=True, backend="cpu")
    assert got.dtype == a.dtype
    assert bits(got).tobytes() == y.tobytes() and got_idx.tobytes() == idx.tobytes()
    # Max of exactly representable values is exact in every dtype.
    want, _ = torch_ref(a.astype(np.float64), "max", case[1], case[2], case[3], case[4], case[5])
    assert np.array_equal(got.astype(np.float64), want)
    y = cli_pool(cli, tmp_path, on_disk, "avg", case, include=True, dtype=flag)
    assert bits(call("avg", case, a, backend="cpu")).tobytes() == y.tobytes()
    # uint16 bits with dtype="bf16" are the same pooling as bfloat16 arrays.
    if flag:
        same = call("max", case, on_disk, dtype="bf16", backend="cpu")
        assert bits(same).tobytes() == bits(got).tobytes()


@pytest.mark.parametrize("case", [CASES[0], CASES[3], CASES[5]])
def test_gpu_equals_cpu_and_the_cli(tmp_path, cli, case):
    x = data(case[0], 6)
    cpu = call("max", case, x, return_indices=True, backend="cpu")
    gpu = gpu_or_skip(lambda: call("max", case, x, return_indices=True, backend="gpu"))
    assert all(g.tobytes() == c.tobytes() for g, c in zip(gpu, cpu))
    y, idx = cli_pool(cli, tmp_path, x, "max", case, backend="gpu")
    assert gpu[0].tobytes() == y.tobytes() and gpu[1].tobytes() == idx.tobytes()
    if case[4] == (1,) * len(case[1]):
        g = call("avg", case, x, backend="gpu")
        assert g.tobytes() == call("avg", case, x, backend="cpu").tobytes()


def test_any_layout_and_inputs_untouched():
    x = data((1, 3, 8, 10), 7)
    want = tpb_emu.max_pool2d(x, 2, backend="cpu").tobytes()
    f = np.asfortranarray(x)
    strided = np.repeat(x, 2, axis=3)[..., ::2]
    ro = x.copy()
    ro.flags.writeable = False
    for a in (f, strided, x.astype(">f4"), ro):
        before = np.array(a, copy=True)
        assert tpb_emu.max_pool2d(a, 2, backend="cpu").tobytes() == want
        assert np.array_equal(np.asarray(a), before)
    # A list is taken as NumPy takes it: float64 here, which the CLI refuses too.
    with pytest.raises(tpb_emu.InputError, match="<f8"):
        tpb_emu.max_pool2d(x.tolist(), 2)


def test_errors():
    x = data((1, 1, 4, 4), 8)
    with pytest.raises(tpb_emu.UsageError, match="divisor_override=3 is not supported"):
        tpb_emu.avg_pool2d(x, 2, divisor_override=3)
    with pytest.raises(tpb_emu.UsageError, match=r"kernel_size=\(2, 2, 2\): expected one or two"):
        tpb_emu.max_pool2d(x, (2, 2, 2))
    with pytest.raises(tpb_emu.UsageError, match="stride"):
        tpb_emu.avg_pool3d(x[None], 2, stride=(1, 1))
    with pytest.raises(tpb_emu.UsageError, match="not a non-negative integer"):
        tpb_emu.max_pool2d(x, -1)
    with pytest.raises(tpb_emu.UsageError, match="backend"):
        tpb_emu.max_pool2d(x, 2, backend="tpu")
    with pytest.raises(tpb_emu.InputError, match=r"max_pool2d takes an N×C×H×W \(or C×H×W\) array"):
        tpb_emu.max_pool2d(x.reshape(16), 2)
    with pytest.raises(tpb_emu.InputError, match="max_pool1d"):
        tpb_emu.max_pool1d(x, 2)
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.max_pool2d(x, 2, padding=2)  # more than half the kernel
    with pytest.raises(tpb_emu.InputError, match="not one of uint8"):
        tpb_emu.max_pool2d(x.astype(np.float64), 2)
    with pytest.raises(tpb_emu.InputError, match="uint16"):
        tpb_emu.max_pool2d(x.view(np.uint16), 2)  # bf16 bits need dtype="bf16"
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.max_pool2d(np.zeros((1, 1, 0, 4), np.float32), 2)
    with pytest.raises(tpb_emu.TpbEmuError):
        tpb_emu.avg_pool2d(np.zeros((0, 1, 4, 4), np.float32), 2)
