"""Loading libwham.so and calling its C interface (include/wham/wham.h) through ctypes.

The library is looked up on first use, not at import, so that ``import wham`` works on a
machine without it (argument checks, the QML mappings and the documentation need none).
"""

import ctypes
import ctypes.util
import glob
import os
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))

# wham_status values (wham.h).
SUCCESS = 0
ERROR_INVALID_ARGUMENT = 1
ERROR_CUDA = 2
ERROR_INTERNAL = 3
ERROR_NOT_SUPPORTED = 4
ERROR_NO_DEVICE = 5

# The library version this package was written against (wham/__init__.py's __version__,
# wham.h's WHAM_VERSION_STRING); a libwham.so of another version is refused at load.
PACKAGE_VERSION = "0.3.0"


class WhamError(RuntimeError):
    """A wham C call returned a non-zero wham_status; the text is wham_last_error()'s."""

    def __init__(self, message, status=ERROR_INTERNAL, function=None):
        super().__init__(message)
        self.status = status
        self.function = function


class InvalidArgument(WhamError, ValueError):
    """WHAM_ERROR_INVALID_ARGUMENT: an argument outside its documented range."""


class CudaError(WhamError):
    """WHAM_ERROR_CUDA: a CUDA call failed (the message names it)."""


class NotSupported(WhamError):
    """WHAM_ERROR_NOT_SUPPORTED: valid arguments this GPU or build cannot serve (an explicit
    path beyond what it serves here); path="automatic" always serves."""


class NoDevice(WhamError):
    """WHAM_ERROR_NO_DEVICE: no CUDA GPU is visible, or no NVIDIA driver able to run
    libwham.so (the message says which)."""


_EXCEPTIONS = {ERROR_INVALID_ARGUMENT: InvalidArgument, ERROR_CUDA: CudaError,
               ERROR_NOT_SUPPORTED: NotSupported, ERROR_NO_DEVICE: NoDevice}


class LibraryNotFoundError(RuntimeError):
    """libwham.so could not be found or loaded (or only one of another version was)."""


def _version_number(text):
    """MAJOR * 10000 + MINOR * 100 + PATCH (wham.h's WHAM_VERSION) of "MAJOR.MINOR.PATCH"."""
    major, minor, patch = (int(part) for part in text.split("-")[0].split(".")[:3])
    return major * 10000 + minor * 100 + patch


def _version_text(number):
    return f"{number // 10000}.{number // 100 % 100}.{number % 100}"


_HOW_TO = (
    "wham's Python package calls the prebuilt shared library libwham.so (the C interface "
    "of include/wham/wham.h, CMake target wham_c). Build it with CMake (see python/README.md: "
    "`cmake -S . -B build && cmake --build build --target wham_c`), then either set "
    "WHAM_LIBRARY=/path/to/libwham.so, reinstall the package with WHAM_LIBRARY set (it is "
    "copied into the package), or put its directory on LD_LIBRARY_PATH."
)

_V = ctypes.c_void_p
_I32 = ctypes.c_int32
_I64 = ctypes.c_int64
_F32 = ctypes.c_float
_F64 = ctypes.c_double
_PI64 = ctypes.POINTER(ctypes.c_int64)

# Argument types of every wham.h function (pointers, streams included, as void*).
_PROTOTYPES = {
    "wham_fwht_f32": [_V, _V, _I32, _I64, _F32, _I32, _V],
    "wham_fwht_f64": [_V, _V, _I32, _I64, _F64, _I32, _V],
    "wham_fwht_c64": [_V, _V, _I32, _I64, _F32, _I32, _V],
    "wham_fwht_c128": [_V, _V, _I32, _I64, _F64, _I32, _V],
    "wham_fwht_f16": [_V, _V, _I32, _I64, _F32, _I32, _V],
    "wham_fwht_bf16": [_V, _V, _I32, _I64, _F32, _I32, _V],
    "wham_hadamard_matrix": [_I32, _I32, _V],
    "wham_hadamard_f32": [_V, _V, _I32, _I32, _I64, _F32, _I32, _I32, _V],
    "wham_hadamard_f64": [_V, _V, _I32, _I32, _I64, _F64, _I32, _I32, _V],
    "wham_hadamard_c64": [_V, _V, _I32, _I32, _I64, _F32, _I32, _I32, _V],
    "wham_hadamard_c128": [_V, _V, _I32, _I32, _I64, _F64, _I32, _I32, _V],
    "wham_hadamard_f16": [_V, _V, _I32, _I32, _I64, _F32, _I32, _I32, _V],
    "wham_hadamard_bf16": [_V, _V, _I32, _I32, _I64, _F32, _I32, _I32, _V],
    "wham_iqp_num_params": [_I32, _I32, _PI64],
    "wham_iqp_encode_f32_c64": [_V, _V, _I32, _I64, _I32, _I32, _V],
    "wham_iqp_encode_f32_c128": [_V, _V, _I32, _I64, _I32, _I32, _V],
    "wham_iqp_encode_f64_c64": [_V, _V, _I32, _I64, _I32, _I32, _V],
    "wham_iqp_encode_f64_c128": [_V, _V, _I32, _I64, _I32, _I32, _V],
    "wham_m2l_num_coeffs": [_I32, _PI64],
    "wham_m2l_f32": [_V, _V, _V, _I32, _I64, _I32, _V],
    "wham_m2l_f64": [_V, _V, _V, _I32, _I64, _I32, _V],
    "wham_m2l_accumulate_f32": [_V, _V, _V, _V, _V, _I32, _I64, _I64, _I64, _I32, _V],
    "wham_m2l_accumulate_f64": [_V, _V, _V, _V, _V, _I32, _I64, _I64, _I64, _I32, _V],
    "wham_m2l_accumulate_centers_f32": [_V, _V, _V, _V, _V, _I32, _I64, _I64, _I64, _I32, _V],
    "wham_m2l_accumulate_centers_f64": [_V, _V, _V, _V, _V, _I32, _I64, _I64, _I64, _I32, _V],
    "wham_m2l_accumulate_classes_f32":
        [_V, _V, _V, _V, _V, _V, _I32, _I64, _I32, _I64, _I64, _I32, _V],
    "wham_m2l_accumulate_classes_f64":
        [_V, _V, _V, _V, _V, _V, _I32, _I64, _I32, _I64, _I64, _I32, _V],
    "wham_m2l_accumulate_class_groups_f32":
        [_V, _V, _V, _V, _V, _V, _I32, _I64, _I32, _I64, _I64, _V],
    "wham_m2l_accumulate_class_groups_f64":
        [_V, _V, _V, _V, _V, _V, _I32, _I64, _I32, _I64, _I64, _V],
    "wham_check_interaction_list": [_V, _V, _V, _I64, _I64, _I64, _I32, _V, _V],
    "wham_m2m_f32": [_V, _V, _V, _I32, _I64, _I32, _V],
    "wham_m2m_f64": [_V, _V, _V, _I32, _I64, _I32, _V],
    "wham_l2l_f32": [_V, _V, _V, _I32, _I64, _I32, _V],
    "wham_l2l_f64": [_V, _V, _V, _I32, _I64, _I32, _V],
    "wham_m2m_accumulate_f32": [_V, _V, _V, _V, _V, _I32, _I64, _I64, _I64, _I32, _V],
    "wham_m2m_accumulate_f64": [_V, _V, _V, _V, _V, _I32, _I64, _I64, _I64, _I32, _V],
    "wham_l2l_accumulate_f32": [_V, _V, _V, _V, _V, _I32, _I64, _I64, _I64, _I32, _V],
    "wham_l2l_accumulate_f64": [_V, _V, _V, _V, _V, _I32, _I64, _I64, _I64, _I32, _V],
    "wham_p2m_f32": [_V, _V, _I64, _V, _V, _I64, _V, _I32, _V],
    "wham_p2m_f64": [_V, _V, _I64, _V, _V, _I64, _V, _I32, _V],
    "wham_l2p_f32": [_V, _V, _V, _I64, _V, _I64, _V, _V, _I32, _V],
    "wham_l2p_f64": [_V, _V, _V, _I64, _V, _I64, _V, _V, _I32, _V],
    "wham_p2p_f32": [_V, _V, _I64, _V, _I64, _V, _V, _I64, _V, _V, _V],
    "wham_p2p_f64": [_V, _V, _I64, _V, _I64, _V, _V, _I64, _V, _V, _V],
}


def _candidates():
    """Where the library is looked for, in order."""
    env = os.environ.get("WHAM_LIBRARY")
    if env:
        # An explicit choice is the only one tried: a wrong path must not fall back silently.
        return [os.path.join(env, "libwham.so") if os.path.isdir(env) else env], True
    found = [os.path.join(_HERE, "libwham.so")]
    # A source checkout: python/wham/ beside the CMake build directories of the repository.
    root = os.path.dirname(os.path.dirname(_HERE))
    if os.path.isfile(os.path.join(root, "include", "wham", "wham.h")):
        for pattern in ("build*/libwham.so", "build*/*/libwham.so"):
            found.extend(sorted(glob.glob(os.path.join(root, pattern))))
    name = ctypes.util.find_library("wham")
    if name:
        found.append(name)
    found.append("libwham.so")  # the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache)
    return found, False


class _VersionMismatch(Exception):
    pass


class _Library:
    def __init__(self, cdll, path):
        self.path = path
        self._cdll = cdll
        cdll.wham_last_error.restype = ctypes.c_char_p
        cdll.wham_last_error.argtypes = []
        cdll.wham_version.restype = ctypes.c_char_p
        cdll.wham_version.argtypes = []
        self._check_version()
        cdll.wham_status_string.restype = ctypes.c_char_p
        cdll.wham_status_string.argtypes = [ctypes.c_int]
        for name in ("wham_m2l_max_order_f32", "wham_m2l_max_order_f64"):
            getattr(cdll, name).restype = _I32
            getattr(cdll, name).argtypes = []
        for name, argtypes in _PROTOTYPES.items():
            fn = getattr(cdll, name)
            fn.restype = ctypes.c_int
            fn.argtypes = argtypes
            setattr(self, name, fn)

    def _check_version(self):
        # Libraries before wham_version_number() have only the string (and are older).
        try:
            fn = self._cdll.wham_version_number
            fn.restype, fn.argtypes = _I32, []
            number = int(fn())
            found = _version_text(number)
        except AttributeError:
            found = self._cdll.wham_version().decode("utf-8", "replace")
            try:
                number = _version_number(found)
            except ValueError:
                number = -1
        if number != _version_number(PACKAGE_VERSION):
            raise _VersionMismatch(
                f"{self.path} is libwham {found}, but this Python package is wham "
                f"{PACKAGE_VERSION} and calls the C interface of that version only; build "
                f"libwham.so from the same source as the package (or reinstall the package "
                f"with WHAM_LIBRARY set to the new library)")

    def status_string(self, status):
        return self._cdll.wham_status_string(status).decode()

    def last_error(self):
        text = self._cdll.wham_last_error()
        return text.decode("utf-8", "replace") if text else ""

    def version(self):
        return self._cdll.wham_version().decode()

    def max_order(self, real):
        fn = self._cdll.wham_m2l_max_order_f32 if real == "float32" else self._cdll.wham_m2l_max_order_f64
        return int(fn())


_lock = threading.Lock()
_library = None
_failure = None


def library():
    """The loaded library; raises LibraryNotFoundError (a RuntimeError) saying how to get one."""
    global _library, _failure
    if _library is not None:
        return _library
    with _lock:
        if _library is None:
            candidates, explicit = _candidates()
            errors = []
            for path in candidates:
                if os.sep in path and not os.path.exists(path):
                    errors.append(f"{path}: no such file")
                    continue
                try:
                    _library = _Library(ctypes.CDLL(path), path)
                    break
                except _VersionMismatch as e:
                    errors.append(str(e))
                except (OSError, AttributeError) as e:
                    errors.append(f"{path}: {e}")
            if _library is None:
                where = "WHAM_LIBRARY" if explicit else "the package, the build tree and the loader's paths"
                _failure = LibraryNotFoundError(
                    f"wham: libwham.so could not be loaded from {where} ({'; '.join(errors)}). "
                    + _HOW_TO)
                raise _failure
    return _library


def call(name, *args):
    """Calls wham.h's `name`; a non-zero status raises the matching WhamError subclass."""
    lib = library()
    status = getattr(lib, name)(*args)
    if status != SUCCESS:
        message = lib.last_error() or f"{name} returned status {status}"
        raise _EXCEPTIONS.get(status, WhamError)(message, status, name)


def available():
    """True if libwham.so can be loaded (loads it)."""
    try:
        library()
        return True
    except LibraryNotFoundError:
        return False


def version():
    """The library's version, "MAJOR.MINOR.PATCH" (loads the library)."""
    return library().version()
