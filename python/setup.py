"""Copies a prebuilt libwham.so into the package when one is found (WHAM_LIBRARY, else the
repository's CMake build directories); without one the package looks for the library at
run time (python/README.md). Metadata: pyproject.toml."""

import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def find_library():
    env = os.environ.get("WHAM_LIBRARY")
    if env:
        path = os.path.join(env, "libwham.so") if os.path.isdir(env) else env
        if not os.path.isfile(path):
            raise SystemExit(f"WHAM_LIBRARY={env}: no libwham.so there")
        return path
    root = os.path.dirname(HERE)
    for pattern in ("build*/libwham.so", "build*/*/libwham.so"):
        found = sorted(glob.glob(os.path.join(root, pattern)))
        if found:
            return found[0]
    return None


class BuildPy(build_py):
    def run(self):
        super().run()
        lib = find_library()
        target = os.path.join(self.build_lib, "wham", "libwham.so")
        if lib:
            shutil.copy2(lib, target)
            print(f"wham: bundled {lib}")
        elif not os.path.exists(target):
            print("wham: no libwham.so found (WHAM_LIBRARY or a CMake build directory); "
                  "the package will look for it at run time")


setup(cmdclass={"build_py": BuildPy})
