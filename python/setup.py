"""Copies a prebuilt libwham.so into the package when one is found (WHAM_LIBRARY, else the
repository's CMake build directories); without one the package looks for the library at
run time (python/README.md). Metadata: pyproject.toml.

A wheel that carries the library is tagged for this platform (py3-none-linux_x86_64, say),
not py3-none-any: the library is a native binary, though the package calls it through
ctypes and so fits any Python 3."""

import glob
import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1: the wheel package's own command
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:
        bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LIBRARY = "libwham.so"


def _candidates(value, environ):
    """Where WHAM_LIBRARY=value may point: pip runs this file from python/ (or a copy of
    it), so a relative path is tried against the caller's folder ($PWD, which pip passes
    on), the current folder, and the repository root."""
    if os.path.isabs(value):
        return [value]
    bases = [environ.get("PWD"), os.getcwd(), ROOT]
    seen = []
    for base in bases:
        if base:
            path = os.path.normpath(os.path.join(base, value))
            if path not in seen:
                seen.append(path)
    return seen


def find_library(environ=None):
    """The libwham.so to bundle: WHAM_LIBRARY (a file, or a folder holding libwham.so),
    else the first in the repository's build*/ folders; None when there is none."""
    environ = os.environ if environ is None else environ
    value = environ.get("WHAM_LIBRARY")
    if value:
        tried = []
        for path in _candidates(value, environ):
            if os.path.isdir(path):
                path = os.path.join(path, LIBRARY)
            tried.append(path)
            if os.path.isfile(path):
                return path
        raise SystemExit(
            f"WHAM_LIBRARY={value}: no {LIBRARY} there (looked for {', '.join(tried)}). "
            "Build it with `cmake --build build --target wham_c` (it is written to "
            f"build/{LIBRARY}) and give its absolute path, e.g. "
            f"WHAM_LIBRARY=$PWD/build/{LIBRARY} from the repository root.")
    for pattern in ("build*/" + LIBRARY, "build*/src/" + LIBRARY):
        found = sorted(glob.glob(os.path.join(ROOT, pattern)))
        if found:
            return found[0]
    return None


JAX_LIBRARY = "libwham_jax.so"


def find_jax_library(library, environ=None):
    """The libwham_jax.so to bundle (wham.jax's XLA handlers, CMake target wham_jax, built
    where JAX is installed): WHAM_JAX_LIBRARY (a file or a folder), else the one beside the
    libwham.so bundled; None when there is none."""
    environ = os.environ if environ is None else environ
    value = environ.get("WHAM_JAX_LIBRARY")
    if value:
        path = os.path.join(value, JAX_LIBRARY) if os.path.isdir(value) else value
        if not os.path.isfile(path):
            raise SystemExit(f"WHAM_JAX_LIBRARY={value}: no {JAX_LIBRARY} there")
        return path
    if library:
        path = os.path.join(os.path.dirname(library), JAX_LIBRARY)
        if os.path.isfile(path):
            return path
    return None


class BuildPy(build_py):
    def run(self):
        super().run()
        lib = find_library()
        target = os.path.join(self.build_lib, "wham", LIBRARY)
        if lib:
            # The file itself, not the symbolic links of its versioned names.
            shutil.copy2(os.path.realpath(lib), target)
            print(f"wham: bundled {lib}")
        elif not os.path.exists(target):
            print(f"wham: no {LIBRARY} found (WHAM_LIBRARY or a CMake build directory); "
                  "the package will look for it at run time")
        jax_lib = find_jax_library(lib)
        if jax_lib:
            # Loaded after libwham.so, whose soname then satisfies its dependency.
            shutil.copy2(os.path.realpath(jax_lib), os.path.join(self.build_lib, "wham",
                                                                 JAX_LIBRARY))
            print(f"wham: bundled {jax_lib}")


class BinaryDistribution(Distribution):
    """Not pure where the package carries libwham.so: its files go to the platform's
    library folder (platlib), as a compiled extension's would."""

    def has_ext_modules(self):
        return find_library() is not None


cmdclass = {"build_py": BuildPy}

if bdist_wheel is not None:

    class BdistWheel(bdist_wheel):
        """Platform tag where the wheel carries libwham.so; py3-none-any otherwise."""

        def get_tag(self):
            python, abi, plat = super().get_tag()
            if not self.root_is_pure:
                python, abi = "py3", "none"
            return python, abi, plat

    cmdclass["bdist_wheel"] = BdistWheel


if __name__ == "__main__":
    setup(cmdclass=cmdclass, distclass=BinaryDistribution)
