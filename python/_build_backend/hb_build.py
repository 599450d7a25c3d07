"""The module's build backend (PEP 517): setuptools', run in a temporary copy of this folder,
so that `pip install ./python` leaves no build/ or hinesbatch.egg-info in the checkout (as
setuptools run in place would). Editable installs point at this folder, so they run in place."""
import contextlib
import os
import shutil
import tempfile

from setuptools import build_meta as _setuptools


@contextlib.contextmanager
def _in_a_copy():
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="hinesbatch-build-") as tmp:
        copy = os.path.join(tmp, "python")
        shutil.copytree(here, copy, ignore=shutil.ignore_patterns(
            "build", "dist", "*.egg-info", "__pycache__", "_install.py"))
        os.chdir(copy)
        try:
            yield
        finally:
            os.chdir(here)


def _copied(name):
    def hook(*args, **kwargs):
        with _in_a_copy():
            return getattr(_setuptools, name)(*args, **kwargs)
    hook.__name__ = name
    return hook


get_requires_for_build_wheel = _copied("get_requires_for_build_wheel")
get_requires_for_build_sdist = _copied("get_requires_for_build_sdist")
prepare_metadata_for_build_wheel = _copied("prepare_metadata_for_build_wheel")
build_wheel = _copied("build_wheel")
build_sdist = _copied("build_sdist")
for _name in ("get_requires_for_build_editable", "prepare_metadata_for_build_editable",
              "build_editable"):
    if hasattr(_setuptools, _name):
        globals()[_name] = getattr(_setuptools, _name)
