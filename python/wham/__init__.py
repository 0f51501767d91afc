"""wham: Walsh-Hadamard, IQP-encoding and FMM kernels on GPU arrays of any framework.

Pure Python over the shared library libwham.so (include/wham/wham.h) through ctypes. The
library is loaded on first use: ``import wham`` works without it (argument checks, the QML
parameter mappings of ``wham.qml``), and the first operator call raises a RuntimeError
saying how to build or point to it (``WHAM_LIBRARY=/path/to/libwham.so``).

Arrays: anything exposing ``__cuda_array_interface__`` or ``__dlpack__`` on a CUDA device
(PyTorch, CuPy, JAX, Numba), C-contiguous. See python/README.md.
"""

from ._lib import (WhamError, InvalidArgument, CudaError, NotSupported, NoDevice,
                   LibraryNotFoundError, available, version)
from .ops import (fwht, hadamard, hadamard_factor, hadamard_matrix, iqp_encode, iqp_num_params,
                  m2l_num_coeffs)
from ._m2l import (m2l, m2l_accumulate, m2l_accumulate_centers, m2l_accumulate_classes,
                   check_interaction_list)
from ._fmm_ops import m2m, l2l, m2m_accumulate, l2l_accumulate, p2m, l2p, p2p

__version__ = "0.3.0"

__all__ = [
    "fwht", "hadamard", "hadamard_factor", "hadamard_matrix", "iqp_encode", "iqp_num_params", "m2l", "m2l_num_coeffs", "m2l_accumulate",
    "m2l_accumulate_centers", "m2l_accumulate_classes", "check_interaction_list",
    "m2m", "l2l", "m2m_accumulate", "l2l_accumulate", "p2m", "l2p", "p2p",
    "WhamError", "InvalidArgument", "CudaError", "NotSupported", "NoDevice", "LibraryNotFoundError",
    "available", "version",
]

import sys as _sys

from . import _common


def _register_torch_ops():
    from . import torch_ops  # noqa: F401


# The operator modules reach torch_ops through this hook, so that none of them imports it.
_common.register_torch_ops = _register_torch_ops

if hasattr(getattr(_sys.modules.get("torch"), "library", None), "custom_op"):
    # PyTorch is loaded already: register torch.ops.wham.* now, so that torch.compile
    # traces wham's functions through them from the first call.
    from . import torch_ops as _torch_ops  # noqa: F401,E402
