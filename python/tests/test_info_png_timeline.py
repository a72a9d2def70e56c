"""Neff.info() against `inspect --json`, to_png against `viz`, and
Neff.run(timeline=) against `run --timeline`."""

import json
import struct
import zlib

import numpy as np
import pytest

import tpb_emu
from conftest import EXAMPLE

MANIFEST = EXAMPLE / "program.toml"


@pytest.fixture(scope="module")
def neff(tmp_path_factory, cli):
    d = tmp_path_factory.mktemp("neff")
    cli("pack", MANIFEST, "-o", d / "prog.neff")
    return d / "prog.neff"


def test_info_is_inspect_json(neff, cli):
    want = json.loads(cli("inspect", "--json", neff).stdout)
    assert tpb_emu.Neff(neff).info() == want
    assert tpb_emu.Neff(str(neff)).info() == want
    by_bytes = tpb_emu.Neff(neff.read_bytes()).info()
    assert by_bytes["file"] == "NEFF"
    assert {k: v for k, v in by_bytes.items() if k != "file"} == \
        {k: v for k, v in want.items() if k != "file"}
    # Independent facts: the example's streams hold 2 pool records, its
    # input is x, its outputs y_avg and y_max.
    pool = next(e for e in want["engines"] if e["engine"] == "pool")
    assert pool["records"] == 2
    assert [t["name"] for t in want["outputs"]] == ["y_avg", "y_max"]


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def png_pixels(data):
    """The RGB rows of an 8-bit, non-interlaced PNG (filters undone)."""
    w, h = png_size(data)
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = 3 * w
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b = prev[i]
            c = prev[i - 3] if i >= 3 else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return np.frombuffer(b"".join(rows), np.uint8).reshape(h, w, 3)


@pytest.mark.parametrize("opts,flags", [
    ({}, ["--cmap", "viridis"]),
    ({"cmap": None}, []),
    ({"cmap": "magma", "normalize": "global"}, ["--cmap", "magma", "--normalize", "global"]),
    ({"argmax": True}, ["--argmax"]),
])
def test_to_png_is_viz(tmp_path, cli, opts, flags):
    rng = np.random.default_rng(1)
    a = rng.integers(-8, 8, size=(2, 3, 5, 7)).astype(np.float32)
    if opts.get("argmax"):
        a = np.abs(a).astype(np.int32)
    np.save(tmp_path / "a.npy", a)
    cli("viz", tmp_path / "a.npy", "-o", tmp_path / "cli.png", *flags)
    tpb_emu.to_png(a, tmp_path / "py.png", **opts)
    want = (tmp_path / "cli.png").read_bytes()
    got = (tmp_path / "py.png").read_bytes()
    assert got == want
    w, h = png_size(got)
    assert w > 7 * 3 and h > 5 * 2  # six planes of 5×7, with gaps and labels


def test_to_png_draws_values_and_bf16(tmp_path):
    import ml_dtypes

    # One 1×2 plane, 0 and 1, on viridis: the ends of the colormap.
    a = np.array([[0.0, 1.0]], np.float32)
    tpb_emu.to_png(a, tmp_path / "a.png")
    px = png_pixels((tmp_path / "a.png").read_bytes())
    colors = {tuple(c) for c in px.reshape(-1, 3)}
    assert (68, 1, 84) in colors or any(abs(c[0] - 68) + abs(c[1] - 1) + abs(c[2] - 84) < 12
                                        for c in colors)  # viridis(0), dark purple
    assert any(c[0] > 240 and c[1] > 220 and c[2] < 60 for c in colors)  # viridis(1), yellow
    tpb_emu.to_png(a.astype(ml_dtypes.bfloat16), tmp_path / "b.png")
    assert (tmp_path / "b.png").read_bytes() == (tmp_path / "a.png").read_bytes()


def test_to_png_errors(tmp_path):
    a = np.zeros((2, 2), np.float32)
    with pytest.raises(tpb_emu.UsageError, match="cmap"):
        tpb_emu.to_png(a, tmp_path / "x.png", cmap="jet")
    with pytest.raises(tpb_emu.UsageError, match="normalize"):
        tpb_emu.to_png(a, tmp_path / "x.png", normalize="plane")
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.to_png(np.zeros(4, np.float32), tmp_path / "x.png")  # 1-D: not planes
    with pytest.raises(tpb_emu.InputError, match="not one of"):
        tpb_emu.to_png(a.astype(np.float64), tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
    with pytest.raises(tpb_emu.UsageError, match="folder|directory"):
        tpb_emu.to_png(a, tmp_path)  # the output policy refuses a folder, as the CLI's


def test_timeline_is_the_clis(tmp_path, neff, cli):
    x = np.load(EXAMPLE / "x.npy")
    cli("run", neff, "--input", f"x={EXAMPLE / 'x.npy'}", "--out", tmp_path / "out",
        "--backend", "cpu", "--timeline", tmp_path / "cli.json")
    out = tpb_emu.Neff(neff).run(x=x, backend="cpu", timeline=tmp_path / "py.json")
    assert set(out) == {"y_avg", "y_max"}
    want = json.loads((tmp_path / "cli.json").read_text())
    got = json.loads((tmp_path / "py.json").read_text())
    assert got == want
    events = got["traceEvents"] if isinstance(got, dict) else got
    assert any(e.get("ph") == "X" for e in events)  # slices of executed records
    p = tpb_emu.Program(MANIFEST)
    p.run(backend="cpu", timeline=str(tmp_path / "prog.json"))
    assert json.loads((tmp_path / "prog.json").read_text())
