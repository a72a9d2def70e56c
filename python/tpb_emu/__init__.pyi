"""tpb-emu from Python: NEFF models, programs, instruction streams and
pooling with NumPy arrays in and out (the same library the `tpb-emu` CLI is
built on, with the CLI's checks and messages)."""

import os
from typing import Any, Literal, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str

StreamLike = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", Any]
"""bytes, any buffer, or a path to a raw stream of 64-byte records."""

Engine = Literal["pe", "act", "pool", "dve", "sp"]
Arch = Literal["sunda", "cayman", "mariana"]
BackendName = Literal["cpu", "gpu", "auto"]
Axes = Union[int, Sequence[int]]
TensorSpec = Tuple[str, str, Tuple[int, ...]]
"""(name, dtype as the CLI names it, shape)."""

class TpbEmuError(Exception):
    """Every error tpb_emu raises."""
    exit_code: Optional[int]

class ExecutionError(TpbEmuError):
    """A run stopped: a deadlock, a spent budget, a backend failure (CLI exit 1)."""

class UsageError(TpbEmuError):
    """Arguments that do not fit: an unknown name, a bad option value (CLI exit 2)."""

class InvalidProgram(TpbEmuError):
    """A program rejected before it ran (CLI exit 3)."""

class InvalidRecord(InvalidProgram):
    """An invalid instruction record; the message is the CLI's line."""
    offset: int
    opcode: int
    predicate: str
    detail: str

class InputError(TpbEmuError):
    """An input that cannot be used: unreadable, malformed, wrong dtype or shape (CLI exit 4)."""

class NoGpuError(TpbEmuError):
    """backend="gpu" and no GPU adapter (CLI exit 5)."""

def validate(stream: StreamLike, *, engine: Engine = "pool", arch: Arch = "cayman") -> int:
    """Validates every record as `tpb-emu validate` does; returns the number
    of records, raises InvalidRecord at the first invalid one."""

def check(stream: StreamLike, *, engine: Engine = "pool", arch: Arch = "cayman") -> list[dict[str, Any]]:
    """One dict per record with the keys of `validate --json`: offset,
    opcode, valid, predicate, detail."""

def disasm(stream: StreamLike) -> str:
    """The text of a stream, one line per record (`tpb-emu disasm`)."""

def asm(text: str) -> bytes:
    """Assembles text (what disasm prints) into records (`tpb-emu asm`)."""

class Neff:
    """A NEFF model, loaded as `tpb-emu inspect`/`run` load it."""
    def __init__(
        self,
        path_or_bytes: Union[str, "os.PathLike[str]", bytes, bytearray, memoryview],
        *,
        verify: bool = True,
        strict: bool = False,
        arch: Optional[Arch] = None,
    ) -> None: ...
    @property
    def inputs(self) -> list[TensorSpec]: ...
    @property
    def outputs(self) -> list[TensorSpec]: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def arch(self) -> str: ...
    def run(
        self,
        inputs: Optional[Mapping[str, npt.ArrayLike]] = None,
        /,
        *,
        backend: BackendName = "cpu",
        max_work: Optional[int] = None,
        **named: npt.ArrayLike,
    ) -> dict[str, np.ndarray]:
        """Runs the model with every input by name; returns the outputs by name."""

class Program:
    """A TOML manifest program, loaded as `tpb-emu run PROGRAM.toml` loads it."""
    def __init__(self, manifest_path: Union[str, "os.PathLike[str]"]) -> None: ...
    @property
    def inputs(self) -> list[TensorSpec]: ...
    @property
    def outputs(self) -> list[TensorSpec]: ...
    @property
    def arch(self) -> str: ...
    def run(
        self,
        inputs: Optional[Mapping[str, npt.ArrayLike]] = None,
        /,
        *,
        backend: BackendName = "cpu",
        max_work: Optional[int] = None,
        **named: npt.ArrayLike,
    ) -> dict[str, np.ndarray]:
        """Runs the program; an input given by name replaces the manifest's data."""

@overload
def pool(
    x: npt.ArrayLike,
    *,
    mode: Literal["max", "avg"],
    kernel: Axes,
    stride: Optional[Axes] = None,
    padding: Optional[Axes] = None,
    pads: Optional[Sequence[int]] = None,
    dilation: Optional[Axes] = None,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
    return_indices: Literal[False] = False,
    dtype: Optional[Literal["bf16"]] = None,
    backend: BackendName = "cpu",
    max_work: Optional[int] = None,
) -> np.ndarray: ...
@overload
def pool(
    x: npt.ArrayLike,
    *,
    mode: Literal["max"],
    kernel: Axes,
    stride: Optional[Axes] = None,
    padding: Optional[Axes] = None,
    pads: Optional[Sequence[int]] = None,
    dilation: Optional[Axes] = None,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
    return_indices: Literal[True],
    dtype: Optional[Literal["bf16"]] = None,
    backend: BackendName = "cpu",
    max_work: Optional[int] = None,
) -> Tuple[np.ndarray, np.ndarray]: ...
