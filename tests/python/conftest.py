"""The Python tests' settings: the shared library, the CLI, the data and the C compiler of the
build under test (ctest passes them; see CMakeLists.txt)."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def pytest_addoption(parser):
    parser.addoption("--hb-lib", help="the shared library to test (libhinesbatch.so)")
    parser.addoption("--hb-cli", help="the hinesbatch CLI of the same build")
    parser.addoption("--hb-data", default=os.path.join(ROOT, "data"),
                     help="the shared data folder")
    parser.addoption("--hb-cc", default="cc", help="the C compiler (its preprocessor)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A declaration that differs from the header (test_cdef.py, which runs first) stops the
    session: the other tests would hand the library structs of the wrong size."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and item.module.__name__.endswith("test_cdef"):
        item.session.shouldstop = ("python/hinesbatch/_ffi.py differs from include/hinesbatch.h; "
                                   "the other tests are not run")


def pytest_configure(config):
    import hinesbatch
    hinesbatch.load_library(config.getoption("--hb-lib"))


@pytest.fixture(scope="session")
def hb():
    import hinesbatch
    return hinesbatch


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def data(request):
    path = request.config.getoption("--hb-data")
    if not os.path.isdir(path):
        pytest.fail(f"no data folder {path} (--hb-data)")
    return path


@pytest.fixture(scope="session")
def cli(request):
    path = request.config.getoption("--hb-cli")
    if not path:
        pytest.fail("the CLI is needed for this comparison (--hb-cli)")
    return path


@pytest.fixture(scope="session")
def cc(request):
    path = shutil.which(request.config.getoption("--hb-cc"))
    if not path:
        pytest.fail(f"no C compiler {request.config.getoption('--hb-cc')} (--hb-cc)")
    return path


def run_cli(cli, *args):
    """The CLI's stdout; a failure fails the test with its stderr."""
    done = subprocess.run([cli, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{cli} {' '.join(args)}: exit {done.returncode}: {done.stderr}"
    return done.stdout
