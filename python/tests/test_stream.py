"""validate, check, disasm, asm against the CLI and hand-made records."""

import json

import pytest

import tpb_emu
from conftest import EXAMPLE

POOL_BIN = EXAMPLE / "pool.bin"


def flipped(tmp_path):
    """pool.bin with its second record's inst_word_len byte (byte 1 of the
    record) set to 17: SPEC's has_valid_inst_len needs 16."""
    b = bytearray(POOL_BIN.read_bytes())
    assert len(b) == 128 and b[65] == 16
    b[65] = 17
    p = tmp_path / "bad.bin"
    p.write_bytes(bytes(b))
    return p, bytes(b)


def test_validate_valid_any_source():
    data = POOL_BIN.read_bytes()
    for src in (POOL_BIN, str(POOL_BIN), data, bytearray(data), memoryview(data)):
        assert tpb_emu.validate(src) == 2
    assert tpb_emu.validate(b"") == 0


def test_validate_invalid_record_matches_cli(tmp_path, cli):
    path, data = flipped(tmp_path)
    r = cli("validate", path, check=False)
    assert r.returncode == 3
    line = r.stderr.strip().removeprefix("tpb-emu: ")
    for src in (path, data):
        with pytest.raises(tpb_emu.InvalidRecord) as e:
            tpb_emu.validate(src)
        err = e.value
        assert str(err) == line
        assert err.offset == 64
        assert err.opcode == data[64]
        assert err.predicate == "has_valid_inst_len"
        assert "17" in err.detail
        assert isinstance(err, tpb_emu.InvalidProgram)
        assert isinstance(err, tpb_emu.TpbEmuError)
        assert err.exit_code == 3
    assert line == (
        f"Found invalid instruction! opcode={data[64]}, offset=64: "
        f"has_valid_inst_len ({err.detail})"
    )


def test_check_matches_validate_json(tmp_path, cli):
    path, data = flipped(tmp_path)
    r = cli("validate", "--json", path, check=False)
    want = [json.loads(line) for line in r.stdout.splitlines()]
    got = tpb_emu.check(data)
    assert got == want
    assert [g["valid"] for g in got] == [True, False]
    assert got[0]["predicate"] is None and got[1]["predicate"] == "has_valid_inst_len"


def test_engine_and_arch(cli):
    data = POOL_BIN.read_bytes()
    r = cli("validate", "--engine", "pe", POOL_BIN, check=False)
    if r.returncode == 3:
        with pytest.raises(tpb_emu.InvalidRecord) as e:
            tpb_emu.validate(data, engine="pe")
        assert str(e.value) == r.stderr.strip().removeprefix("tpb-emu: ")
    else:
        assert tpb_emu.validate(data, engine="pe") == 2
    assert tpb_emu.validate(data, arch="mariana") == 2
    with pytest.raises(tpb_emu.UsageError, match="engine"):
        tpb_emu.validate(data, engine="tpu")
    with pytest.raises(tpb_emu.UsageError, match="arch"):
        tpb_emu.validate(data, arch="x")


def test_partial_record_and_bad_inputs(tmp_path):
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.validate(b"\0" * 65)
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.validate(tmp_path / "missing.bin")
    with pytest.raises(TypeError):
        tpb_emu.validate(5)


def test_disasm_asm_round_trip(tmp_path, cli):
    text = tpb_emu.disasm(POOL_BIN)
    assert text == cli("disasm", POOL_BIN).stdout
    assert tpb_emu.asm(text) == POOL_BIN.read_bytes()
    src = tmp_path / "p.tpbs"
    src.write_text(text)
    cli("asm", src, "-o", tmp_path / "p.bin")
    assert tpb_emu.asm(text) == (tmp_path / "p.bin").read_bytes()
    with pytest.raises(tpb_emu.InputError):
        tpb_emu.asm("NOT AN INSTRUCTION\n")
