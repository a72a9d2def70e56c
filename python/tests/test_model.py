"""Neff and Program: examples/program, packed by the CLI, run both ways and
compared with the CLI's .npy files and with NumPy."""

import numpy as np
import pytest

import tpb_emu
from conftest import EXAMPLE, bits, gpu_or_skip

MANIFEST = EXAMPLE / "program.toml"


@pytest.fixture(scope="module")
def packed(tmp_path_factory, cli):
    """The example packed as a NEFF, and the CLI's run of it."""
    d = tmp_path_factory.mktemp("neff")
    neff = d / "prog.neff"
    cli("pack", MANIFEST, "-o", neff)
    cli("run", neff, "--input", f"x={EXAMPLE / 'x.npy'}", "--out", d / "out", "--backend", "cpu")
    return neff, {n: np.load(d / "out" / f"{n}.npy") for n in ("y_avg", "y_max")}


def x():
    return np.load(EXAMPLE / "x.npy")


def numpy_2x2(a):
    """The example's program: per lane a 4×4 map, 2×2 windows, stride 2."""
    blocks = a.reshape(-1, 2, 2, 2, 2).transpose(0, 1, 3, 2, 4).reshape(-1, 4, 4)
    return blocks.mean(axis=-1, dtype=np.float64).astype(np.float32), blocks.max(axis=-1)


def bf16_bits(f32):
    """fp32 → bf16 bits, round to nearest even (finite values)."""
    u = f32.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_neff_describes_itself(packed):
    neff, _ = packed
    m = tpb_emu.Neff(neff)
    assert m.inputs == [("x", "fp32", (128, 16))]
    assert m.outputs == [("y_avg", "fp32", (128, 4)), ("y_max", "bf16", (128, 4))]
    assert m.arch == "cayman"


def test_neff_run_matches_cli_and_numpy(packed):
    neff, want = packed
    for m in (tpb_emu.Neff(neff), tpb_emu.Neff(str(neff)), tpb_emu.Neff(neff.read_bytes())):
        a = x()
        before = a.copy()
        out = m.run(x=a)
        assert np.array_equal(a, before)  # inputs are not modified
        assert list(out) == ["y_avg", "y_max"]
        for k, v in want.items():
            assert bits(out[k]).dtype == v.dtype and out[k].shape == v.shape
            assert out[k].tobytes() == v.tobytes()
        # bf16 comes back as ml_dtypes.bfloat16 (installed by .ci/run).
        assert out["y_max"].dtype.name == "bfloat16"
        by_dict = m.run({"x": a})
        assert all(by_dict[k].tobytes() == out[k].tobytes() for k in out)
    avg, mx = numpy_2x2(x())
    # The example's values cancel (-2.79 + 1.28 ...): an fp32 sum of four
    # taps is within 3 roundings of the taps' magnitude, then one more.
    taps = np.abs(x()).reshape(-1, 2, 2, 2, 2).transpose(0, 1, 3, 2, 4).reshape(-1, 4, 4)
    bound = 3 * 2.0**-24 * taps.mean(axis=-1) + np.spacing(np.abs(avg))
    assert np.all(np.abs(out["y_avg"].reshape(-1, 4) - avg.reshape(-1, 4)) <= bound.reshape(-1, 4))
    assert np.array_equal(bits(out["y_max"]).reshape(-1, 4), bf16_bits(mx).reshape(-1, 4))


def test_program_run_and_replaced_input(packed):
    _, want = packed
    p = tpb_emu.Program(MANIFEST)
    assert p.inputs == [("x", "fp32", (128, 16))]
    out = p.run()
    for k, v in want.items():
        assert out[k].tobytes() == v.tobytes()
    rng = np.random.default_rng(7)
    x2 = (rng.integers(-512, 512, size=(128, 16)) / 64).astype(np.float32)
    out2 = p.run(x=x2)
    avg, mx = numpy_2x2(x2)
    np.testing.assert_array_max_ulp(out2["y_avg"], avg, maxulp=1)
    assert np.array_equal(bits(out2["y_max"]), bf16_bits(mx))


def test_any_layout_is_accepted(packed):
    neff, want = packed
    m = tpb_emu.Neff(neff)
    f = np.asfortranarray(x())
    strided = np.repeat(x(), 2, axis=1)[:, ::2]
    big_endian = x().astype(">f4")
    for a in (f, strided, big_endian):
        assert m.run(x=a)["y_avg"].tobytes() == want["y_avg"].tobytes()
    ro = x()
    ro.flags.writeable = False
    assert m.run(x=ro)["y_max"].tobytes() == want["y_max"].tobytes()


def test_input_errors(packed):
    neff, _ = packed
    m = tpb_emu.Neff(neff)
    # float64 is not an array the CLI reads (its .npy rule), float16 is but not x's dtype.
    with pytest.raises(tpb_emu.InputError, match=r"input x: dtype `<f8` is not one of uint8"):
        m.run(x=x().astype(np.float64))
    with pytest.raises(tpb_emu.InputError, match=r"holds <f2, the input needs <f4 \(fp32\)"):
        m.run(x=x().astype(np.float16))
    with pytest.raises(tpb_emu.InputError, match=r"has shape \[16, 128\], the input needs \[128, 16\]"):
        m.run(x=x().T.copy())
    with pytest.raises(tpb_emu.InputError):
        m.run(x=np.zeros((0,), np.float32))
    with pytest.raises(tpb_emu.UsageError, match="no input of that name"):
        m.run(x=x(), y=x())
    with pytest.raises(tpb_emu.UsageError, match="missing --input x"):
        m.run()
    with pytest.raises(tpb_emu.UsageError, match="given twice"):
        m.run({"x": x()}, x=x())
    with pytest.raises(tpb_emu.UsageError, match="backend"):
        m.run(x=x(), backend="tpu")
    with pytest.raises(tpb_emu.InputError):
        m.run(x=np.array(["a"] * 2048).reshape(128, 16))


def test_load_errors(tmp_path):
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.Neff(b"not a neff")
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.Neff(tmp_path / "missing.neff")
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.Program(tmp_path / "missing.toml")
    with pytest.raises(tpb_emu.UsageError):
        tpb_emu.Program(tmp_path / "m.neff")
    with pytest.raises(tpb_emu.UsageError):
        tpb_emu.Neff(b"", arch="x")


def test_budget_stops_a_run(packed):
    neff, _ = packed
    with pytest.raises(tpb_emu.ExecutionError):
        tpb_emu.Neff(neff).run(x=x(), max_work=1)


def test_gpu_matches_cpu(packed):
    neff, want = packed
    out = gpu_or_skip(lambda: tpb_emu.Neff(neff).run(x=x(), backend="gpu"))
    for k, v in want.items():
        assert out[k].tobytes() == v.tobytes()
