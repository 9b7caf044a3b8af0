"""The package as a user installs it: ``pip install .`` (not editable) into a fresh virtual environment.

The environment lies outside the checkout and gets the project's dependencies from the
running environment's site-packages (a ``.pth`` line: nothing is downloaded); the
checkout itself is not importable there. ``tavli --help`` and ``tavli demo --no-camera``
then run from a directory outside the checkout, on the installed package and its data.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sysconfig
import tomllib
import venv
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGES = PYPROJECT["tool"]["setuptools"]["packages"]
# the build backend the project names; an older one cannot read its metadata (an SPDX licence string)
SETUPTOOLS_FOR_BUILD = (77,)
TOP_FILES = ("pyproject.toml", "README.md", "MANIFEST.in", "setup.cfg", "setup.py")
# an editable install's compiled module (*.so) stays behind: the install must build its own
JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "*.o", "*.so", "*.pyd", "*.elf", "*.hex")


def _inside(path: Path, parent: Path) -> bool:
    return path.resolve().is_relative_to(parent.resolve())


def _dependency_dirs() -> list[str]:
    """The running environment's site-packages, where the project's dependencies are installed.

    A project venv may lie inside the checkout (``.venv``): its site-packages is fine, the
    checkout's root is not. An editable install's ``.pth`` there is not run: a directory
    named in a ``.pth`` is only put on ``sys.path``, its own ``.pth`` files are not read.
    """
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if Path(d).is_dir() and Path(d).resolve() != ROOT]  # never the checkout


def _setuptools_builds_offline() -> bool:
    try:
        found = tuple(int(part) for part in re.findall(r"\d+", version("setuptools"))[:1])
    except PackageNotFoundError:
        return False
    return found >= SETUPTOOLS_FOR_BUILD


def _source_copy(dest: Path) -> Path:
    """What ``pip install .`` builds from: the project's top files and packages, without build leftovers."""
    dest.mkdir()
    for name in TOP_FILES:
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, dest / name)
    for pattern in ("LICEN[CS]E*", "COPYING*", "NOTICE*", "AUTHORS*"):
        for path in ROOT.glob(pattern):
            shutil.copy2(path, dest / path.name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, dest / package, ignore=JUNK)
    return dest


def _env() -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH, no virtual environment of ours active."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSAFEPATH")
    }
    env["PYTHONNOUSERSITE"] = "1"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment with the project installed from a copy of its source, not editable."""
    base = tmp_path_factory.mktemp("install")
    assert not _inside(base, ROOT), f"{base} must lie outside the checkout {ROOT}"
    source = _source_copy(base / "source")
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        env=_env(),
    ).stdout.strip()
    # the dependencies (and pip) from the running environment, after the new one's own packages
    Path(purelib, "_project_dependencies.pth").write_text("\n".join(_dependency_dirs()) + "\n", encoding="utf-8")
    command = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--ignore-installed", "--no-cache-dir"]
    if _setuptools_builds_offline():
        command += ["--no-build-isolation", "--no-index"]  # build with the installed setuptools: nothing downloaded
    done = subprocess.run([*command, str(source)], capture_output=True, text=True, env=_env(), cwd=base, timeout=300)
    assert done.returncode == 0, f"pip install . failed:\n{done.stdout}\n{done.stderr}"
    return env_dir


def _run(env_dir: Path, *args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    return subprocess.run(
        [str(bin_dir / args[0]), *args[1:]], capture_output=True, text=True, env=_env(), cwd=cwd, timeout=timeout
    )


def _site_packages(env_dir: Path) -> Path:
    scheme = {"base": str(env_dir), "platbase": str(env_dir)}
    return Path(sysconfig.get_paths(vars=scheme)["purelib"])


def test_the_installed_packages_come_from_the_new_environment_not_the_checkout(installed, tmp_path):
    code = (
        "import sys, board_rules, firmware_bridge, hardware, referee, vision\n"
        "for m in (board_rules, firmware_bridge, hardware, referee, vision): print(m.__file__)\n"
        "print('PATH', *sys.path, sep='\\n')"
    )
    done = _run(installed, "python", "-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files, _, path = done.stdout.partition("PATH\n")
    for line in files.split():
        assert _inside(Path(line), installed), f"{line} is not the installed copy in {installed}"
    assert str(ROOT) not in [str(Path(entry).resolve()) for entry in path.split("\n") if entry], path


def test_package_data_is_installed(installed):
    site_packages = _site_packages(installed)
    assert (site_packages / "hardware" / "panel.toml").is_file()
    assert (site_packages / "vision" / "vision.toml").is_file()
    models = sorted(p.name for p in (ROOT / "vision" / "models").glob("*.onnx"))
    assert models, "the checkout has no vision/models/*.onnx"
    for name in models:
        installed_model = site_packages / "vision" / "models" / name
        assert installed_model.is_file()
        assert installed_model.stat().st_size == (ROOT / "vision" / "models" / name).stat().st_size


@pytest.mark.parametrize(
    "module,name", [("board_rules.fastgen", "board_rules._fastgen"), ("engine.heuristic", "engine._heuristic")]
)
def test_the_install_builds_the_compiled_parts_where_the_checkout_has_them(installed, tmp_path, module, name):
    import importlib

    here = importlib.import_module(module)._compiled
    code = f"import {module} as m\nprint(m._compiled.__file__ if m._compiled is not None else '')"
    done = _run(installed, "python", "-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    built = done.stdout.strip()
    if here is None and os.environ.get("TAVLI_REQUIRE_COMPILED") != "1":
        pytest.skip(f"no {name} here either (no C compiler, or TAVLI_PURE_PYTHON set)")
    assert built and _inside(Path(built), installed), f"pip install . built no {name}: {built!r}"


def test_tavli_help_runs_from_outside_the_checkout(installed, tmp_path):
    done = _run(installed, "tavli", "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "demo" in done.stdout


def test_tavli_demo_without_a_camera_plays_to_a_score_from_outside_the_checkout(installed, tmp_path):
    done = _run(installed, "tavli", "demo", "--no-camera", cwd=tmp_path)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert re.search(r"^score: white .*\d+, black .*\d+$", done.stdout, re.MULTILINE), done.stdout[-3000:]
