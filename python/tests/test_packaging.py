"""setup.py: where a relative WHAM_LIBRARY is looked for (pip runs setup.py from python/,
not from the caller's folder), and the wheel's tag (a platform tag where it carries
libwham.so, py3-none-any where not). Needs setuptools; the wheel builds need pip and the
wheel command too, offline (--no-build-isolation), and are skipped with the reason otherwise."""

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

import wham

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load_setup():
    pytest.importorskip("setuptools", reason="setup.py needs setuptools")
    spec = importlib.util.spec_from_file_location("wham_setup", os.path.join(PYTHON_DIR, "setup.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: setup() is not called
    return module


def _fake_library(folder):
    """A build folder's versioned names: libwham.so -> libwham.so.0 -> libwham.so.0.3.0."""
    os.makedirs(folder, exist_ok=True)
    real = os.path.join(folder, "libwham.so.0.3.0")
    with open(real, "wb") as f:
        f.write(b"\x7fELF not a real library")
    os.symlink("libwham.so.0.3.0", os.path.join(folder, "libwham.so.0"))
    os.symlink("libwham.so.0", os.path.join(folder, "libwham.so"))
    return real


def test_relative_library_path_is_taken_from_the_callers_folder(tmp_path, monkeypatch):
    setup = _load_setup()
    real = _fake_library(str(tmp_path / "build"))
    monkeypatch.chdir(PYTHON_DIR)  # where pip runs setup.py
    found = setup.find_library({"WHAM_LIBRARY": "build/libwham.so", "PWD": str(tmp_path)})
    assert os.path.realpath(found) == real


def test_library_folder_is_searched_for_libwham_so(tmp_path):
    setup = _load_setup()
    real = _fake_library(str(tmp_path / "build"))
    found = setup.find_library({"WHAM_LIBRARY": str(tmp_path / "build")})
    assert os.path.realpath(found) == real


def test_missing_library_names_the_paths_tried_and_the_fix(tmp_path):
    setup = _load_setup()
    with pytest.raises(SystemExit) as info:
        setup.find_library({"WHAM_LIBRARY": "nowhere/libwham.so", "PWD": str(tmp_path)})
    message = str(info.value)
    assert str(tmp_path / "nowhere" / "libwham.so") in message
    assert "--target wham_c" in message and "absolute path" in message


def _build_wheel(tmp_path, library):
    """Builds a wheel from a copy of python/ (the build writes into its source folder)."""
    have = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if have.returncode != 0:
        pytest.skip("pip is not installed for this python3")
    pytest.importorskip("setuptools", reason="setup.py needs setuptools")
    try:
        import setuptools.command.bdist_wheel  # noqa: F401
    except ImportError:
        pytest.importorskip("wheel", reason="building a wheel needs the wheel package")
    source = tmp_path / "src" / "python"
    shutil.copytree(PYTHON_DIR, source, ignore=shutil.ignore_patterns(
        "tests", "bench", "build", "*.egg-info", "__pycache__", "libwham.so"))
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("WHAM_LIBRARY", None)
    if library:
        env["WHAM_LIBRARY"] = library
    out = tmp_path / "wheels"
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
         str(source), "-w", str(out)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    (wheel,) = os.listdir(out)
    return str(out / wheel)


def test_wheel_with_the_library_is_tagged_for_its_platform(tmp_path):
    real = _fake_library(str(tmp_path / "build"))
    wheel = _build_wheel(tmp_path, str(tmp_path / "build" / "libwham.so"))
    name = os.path.basename(wheel)
    assert name.startswith("wham-") and not name.endswith("-any.whl"), name
    assert "-py3-none-" in name, name
    with zipfile.ZipFile(wheel) as z:
        assert z.read("wham/libwham.so") == open(real, "rb").read()
        info = [n for n in z.namelist() if n.endswith(".dist-info/WHEEL")]
        assert b"Root-Is-Purelib: false" in z.read(info[0])


def test_wheel_without_the_library_is_pure(tmp_path):
    wheel = _build_wheel(tmp_path, None)
    assert os.path.basename(wheel).endswith("-py3-none-any.whl"), wheel
    with zipfile.ZipFile(wheel) as z:
        assert "wham/libwham.so" not in z.namelist()


OPERATOR_LAYER = ("_common", "ops", "_m2l", "_fmm_ops", "torch_ops", "_torch_fmm",
                  "_torch_common")


def _package_imports(module):
    """The wham modules `module` imports anywhere in its text (function bodies included)."""
    import ast
    path = os.path.join(os.path.dirname(os.path.abspath(wham.__file__)), module + ".py")
    with open(path) as f:
        tree = ast.parse(f.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found


def test_operator_modules_import_each_other_in_no_circle():
    # _common is what the operator modules share: it imports none of them, and no chain of
    # imports among them leads back to where it started (the package's __init__ is the root).
    assert not _package_imports("_common") & set(OPERATOR_LAYER)
    graph = {m: _package_imports(m) & set(OPERATOR_LAYER) for m in OPERATOR_LAYER}
    done, path = set(), []

    def visit(m):
        assert m not in path, " -> ".join(path + [m])
        if m in done:
            return
        path.append(m)
        for n in sorted(graph[m]):
            visit(n)
        path.pop()
        done.add(m)

    for m in OPERATOR_LAYER:
        visit(m)


def test_every_name_a_module_imports_from_the_package_exists():
    """Each `from .module import name` in the package names something that module defines,
    checked from the source, so that a module this machine cannot import (wham.jax without
    JAX) cannot break on a name moved elsewhere."""
    import ast
    package = os.path.dirname(wham.__file__)
    missing = []
    for file in sorted(os.listdir(package)):
        if not file.endswith(".py"):
            continue
        tree = ast.parse(open(os.path.join(package, file)).read(), file)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                try:
                    module = importlib.import_module("wham." + node.module)
                except ModuleNotFoundError as e:  # a framework not installed here
                    if (e.name or "").startswith("wham"):
                        raise
                    continue
                missing += [f"{file}: {node.module}.{a.name}" for a in node.names
                            if a.name != "*" and not hasattr(module, a.name)]
    assert not missing
