"""Skip rules and framework adapters of the GPU tests: each test runs only where a CUDA GPU,
libwham.so and the framework it uses are present, and says which is missing otherwise."""

import importlib
import os

import numpy as np
import pytest

import wham


def _missing(reason):
    """Skips; fails instead under WHAM_REQUIRE_GPU=1 (a GPU machine where they must run)."""
    if os.environ.get("WHAM_REQUIRE_GPU") == "1":
        pytest.fail(reason + " (WHAM_REQUIRE_GPU=1)")
    pytest.skip(reason)


def require_library():
    if not wham.available():
        _missing("libwham.so not found (set WHAM_LIBRARY; python/README.md)")


def _torch():
    try:
        import torch
    except ImportError:
        pytest.skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        _missing("PyTorch sees no CUDA GPU")
    return torch


def _cupy():
    try:
        import cupy
    except ImportError:
        pytest.skip("CuPy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError
    except Exception:
        _missing("CuPy sees no CUDA GPU")
    return cupy


def _jax():
    try:
        import jax
    except ImportError:
        pytest.skip("JAX is not installed")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        _missing("JAX sees no GPU")
    jax.config.update("jax_enable_x64", True)  # float64 / complex128 arrays
    return jax


class Framework:
    """to(numpy array) -> device array; back(device array) -> numpy array."""

    def __init__(self, name):
        self.name = name
        if name == "torch":
            self.mod = _torch()
        elif name == "cupy":
            self.mod = _cupy()
        else:
            self.mod = _jax()

    def to(self, a):
        a = np.ascontiguousarray(a)
        if self.name == "torch":
            return self.mod.as_tensor(a, device="cuda")
        if self.name == "cupy":
            return self.mod.asarray(a)
        return self.mod.device_put(a, self.mod.devices("gpu")[0])

    def back(self, x):
        if self.name == "torch":
            return x.cpu().numpy()
        if self.name == "cupy":
            return self.mod.asnumpy(x)
        return np.asarray(x)

    def is_native(self, x):
        module = type(x).__module__.split(".")[0]
        return module == self.name or (self.name == "jax" and module == "jaxlib")

    def synchronize(self):
        if self.name == "torch":
            self.mod.cuda.synchronize()
        elif self.name == "cupy":
            self.mod.cuda.Device().synchronize()


FRAMEWORKS = ["torch", "cupy", "jax"]


def rel_err(got, want, axis=-1):
    """Largest relative error of a row (norm of the difference over the norm of the row)."""
    got = np.asarray(got, dtype=np.complex128)
    want = np.asarray(want, dtype=np.complex128)
    num = np.linalg.norm(got - want, axis=axis)
    den = np.maximum(np.linalg.norm(want, axis=axis), 1e-300)
    return float(np.max(num / den)) if num.size else 0.0


def module_available(name):
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False
