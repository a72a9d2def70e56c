"""Device: write, exec, read against `tpb-emu exec --load/--dump` and NumPy."""

import numpy as np
import pytest

import tpb_emu
from conftest import EXAMPLE, gpu_or_skip

# examples/program/pool.bin without its semaphore wait and update, which
# `exec` refuses: per lane a 4×4 fp32 map at SBUF 0, 2×2 windows with
# stride 2; the averages to SBUF 0x100, the maxima to 0x200.
TEXT = """\
POOL func=avg dim=xy in=fp32 out=fp32 ch=128 scale=0.25 src=sbuf[0]+0x0{2:1 2:4 2:2 2:8} dst=sbuf[0]+0x100{2:1 2:2 1:1 1:1}
POOL func=max dim=xy in=fp32 out=fp32 ch=128 scale=1 src=sbuf[0]+0x0{2:1 2:4 2:2 2:8} dst=sbuf[0]+0x200{2:1 2:2 1:1 1:1}
"""


def x():
    rng = np.random.default_rng(3)
    return (rng.integers(-256, 256, size=(128, 16)) / 64).astype(np.float32)


def numpy_2x2(a):
    blocks = a.reshape(-1, 2, 2, 2, 2).transpose(0, 1, 3, 2, 4).reshape(-1, 4, 4)
    return blocks.mean(axis=-1).reshape(128, 4), blocks.max(axis=-1).reshape(128, 4)


@pytest.fixture(scope="module")
def stream(tmp_path_factory, cli):
    d = tmp_path_factory.mktemp("dev")
    (d / "p.tpbs").write_text(TEXT)
    cli("asm", d / "p.tpbs", "-o", d / "p.bin")
    return d / "p.bin"


def cli_exec(cli, tmp_path, stream, a, *extra):
    np.save(tmp_path / "x.npy", a)
    r = cli("exec", stream, "--backend", "cpu", "--load", f"sbuf:0:0={tmp_path / 'x.npy'}",
            "--dump", f"sbuf:0:0x100:fp32:128x4={tmp_path / 'avg.npy'}",
            "--dump", f"psum:0:0:fp32:128x4={tmp_path / 'p.npy'}",
            "--dump", f"0x00000200:fp32:128x4={tmp_path / 'max.npy'}", *extra)
    return r, np.load(tmp_path / "avg.npy"), np.load(tmp_path / "max.npy")


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_matches_cli_and_numpy(tmp_path, cli, stream, backend):
    a = x()
    r, avg, mx = cli_exec(cli, tmp_path, stream, a)
    dev = tpb_emu.Device(backend=backend)
    dev.write("sbuf:0:0", a)
    assert gpu_or_skip(lambda: dev.exec(stream)) == []
    for addr in ("sbuf:0:0x100", ("sbuf", 0, 0x100), "0x00000100"):
        got = dev.read(addr, "fp32", (128, 4))
        assert got.dtype == np.float32 and got.tobytes() == avg.tobytes()
    assert dev.read("sbuf:0:512", "fp32", "128x4").tobytes() == mx.tobytes()
    want_avg, want_max = numpy_2x2(a)
    assert np.array_equal(avg, want_avg)  # sums of multiples of 1/64 are exact
    assert np.array_equal(mx, want_max)
    # Memory outlives a call: the input is still there, PSUM is still zero.
    assert dev.read("sbuf:0:0", "fp32", (128, 16)).tobytes() == a.tobytes()
    assert not dev.read("psum:0:0", "fp32", (128, 4)).any()


def test_trace_is_the_clis(tmp_path, cli, stream):
    r, _, _ = cli_exec(cli, tmp_path, stream, x(), "--trace")
    want = [line for line in r.stdout.splitlines()
            if not line.startswith(("ok: ", "wrote "))]
    dev = tpb_emu.Device(backend="cpu")
    dev.write("sbuf:0:0", x())
    assert dev.exec(stream.read_bytes(), trace=True) == want
    assert len(want) >= 2


def test_layouts_and_dtypes_in_and_out():
    dev = tpb_emu.Device(backend="cpu")
    a = x()
    for arr in (np.asfortranarray(a), np.repeat(a, 2, axis=1)[:, ::2], a.astype(">f4")):
        dev.write("sbuf:0:0", arr)
        assert dev.read("sbuf:0:0", "fp32", (128, 16)).tobytes() == a.tobytes()
    ro = a.copy()
    ro.flags.writeable = False
    dev.write(("psum", 2, 0), ro[:4])
    assert np.array_equal(dev.read("psum:2:0", "fp32", (4, 16)), a[:4])
    i16 = np.arange(-8, 8, dtype=np.int16).reshape(2, 8)
    dev.write("sbuf:5:0x40", i16)
    assert np.array_equal(dev.read("sbuf:5:0x40", "int16", (2, 8)), i16)
    # Bytes as another dtype: the little-endian bits, as the CLI's dumps.
    assert np.array_equal(dev.read("sbuf:5:0x40", "uint8", (2, 16)),
                          i16.astype("<i2").view(np.uint8))
    bf = dev.read("sbuf:0:0", "bf16", (128, 2))
    assert bf.dtype.name == "bfloat16"
    assert np.array_equal(bf.view(np.uint16), a.view(np.uint16)[:, :2])


def test_errors(stream):
    dev = tpb_emu.Device(backend="cpu")
    with pytest.raises(tpb_emu.UsageError, match="bad ADDR `dram:0:0`"):
        dev.write("dram:0:0", x())
    with pytest.raises(tpb_emu.UsageError, match="partition must be < 128"):
        dev.read(("sbuf", 128, 0), "fp32", (1, 1))
    with pytest.raises(tpb_emu.UsageError):
        dev.read(("dram", 0, 0), "fp32", (1, 1))
    with pytest.raises(tpb_emu.UsageError, match="unknown DTYPE"):
        dev.read("sbuf:0:0", "float32", (1, 1))
    with pytest.raises(tpb_emu.UsageError, match="bad SHAPE"):
        dev.read("sbuf:0:0", "fp32", "4x0")
    with pytest.raises(tpb_emu.UsageError):
        dev.read("sbuf:0:0", "fp32", ())
    with pytest.raises(tpb_emu.InputError, match=r"read\(sbuf:100:0\)"):
        dev.read("sbuf:100:0", "fp32", (64, 1))  # past the last partition
    with pytest.raises(tpb_emu.InputError, match="not one of uint8"):
        dev.write("sbuf:0:0", x().astype(np.float64))
    with pytest.raises(tpb_emu.InputError, match="0-d"):
        dev.write("sbuf:0:0", np.float32(1))
    with pytest.raises(tpb_emu.InputError, match="stream"):
        dev.exec(b"\0" * 65)
    with pytest.raises(tpb_emu.UsageError, match="arch"):
        tpb_emu.Device(arch="x")
    with pytest.raises(tpb_emu.UsageError, match="backend"):
        tpb_emu.Device(backend="tpu")
    # Records with a semaphore wait need `run`; nothing runs.
    with pytest.raises(tpb_emu.ExecutionError, match="wait/update"):
        dev.exec(EXAMPLE / "pool.bin")
    with pytest.raises(tpb_emu.ExecutionError, match="work budget of 10 elements"):
        dev.exec(stream, max_work=10)
    bad = bytearray(stream.read_bytes())
    bad[65] = 17
    with pytest.raises(tpb_emu.InvalidRecord) as e:
        dev.exec(bytes(bad))
    assert e.value.offset == 64 and e.value.predicate == "has_valid_inst_len"
    assert dev.exec(b"") == []
