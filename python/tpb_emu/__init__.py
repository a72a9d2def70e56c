"""tpb-emu from Python: NEFF models, programs, instruction streams and
pooling with NumPy arrays in and out. Everything is the compiled module's
(`tpb_emu.tpb_emu`, built from python/src by maturin); see README "From
Python" and the type stub beside this file."""

from .tpb_emu import *  # noqa: F401,F403
from .tpb_emu import __version__  # noqa: F401
from . import tpb_emu as _native

__doc__ = _native.__doc__ or __doc__
__all__ = [n for n in dir(_native) if not n.startswith("_")]
