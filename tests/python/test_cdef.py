"""The module's cffi declarations (python/hinesbatch/_ffi.py) against include/hinesbatch.h:
the header, run through the C preprocessor, is parsed by cffi too, and every function, struct
and enum the module declares must have the header's type, layout and values."""
import os
import re
import subprocess

import cffi
import pytest

from hinesbatch import _ffi


@pytest.fixture(scope="module")
def header_ffi(cc, root):
    with open(os.path.join(root, "include", "hinesbatch.h"), encoding="utf-8") as f:
        text = f.read()
    # cffi knows size_t and the <stdint.h> types itself; the preprocessor expands the rest.
    text = re.sub(r"^#include .*$", "", text, flags=re.M)
    done = subprocess.run([cc, "-E", "-P", "-x", "c", "-"], input=text, capture_output=True,
                          text=True, check=True)
    ffi = cffi.FFI()
    ffi.cdef(done.stdout)
    return ffi


def module_declarations():
    """(kind, name) of each declaration in the module's CDEF."""
    parser = _ffi.ffi._parser
    out = []
    for key in parser._declarations:
        kind, _, name = key.partition(" ")
        out.append((kind, name))
    return out


def test_functions_match_the_header(header_ffi):
    names = [name for kind, name in module_declarations() if kind == "function"]
    assert len(names) > 40
    for name in names:
        key = f"function {name}"
        assert key in header_ffi._parser._declarations, f"{name}: not in include/hinesbatch.h"
        mine = _ffi.ffi._parser._declarations[key][0]
        theirs = header_ffi._parser._declarations[key][0]
        # Struct types are compared by their typedef names, the same in both.
        assert str(mine.get_c_name()) == str(theirs.get_c_name()), \
            f"{name}: the module declares {mine.get_c_name()}, the header {theirs.get_c_name()}"


def test_structs_match_the_header(header_ffi):
    ffi = _ffi.ffi
    typedefs = [name for kind, name in module_declarations() if kind == "typedef"]
    structs = [t for t in typedefs
               if ffi.typeof(t).kind == "struct" and ffi.typeof(t).fields is not None]
    assert "hb_sim_options_t" in structs and "hb_spike_t" in structs
    for name in structs:
        mine, theirs = ffi.typeof(name), header_ffi.typeof(name)
        assert ffi.sizeof(mine) == header_ffi.sizeof(theirs), f"{name}: size"
        mine_fields = [(f, t.type.cname, t.offset) for f, t in mine.fields]
        theirs_fields = [(f, t.type.cname, t.offset) for f, t in theirs.fields]
        assert mine_fields == theirs_fields, f"{name}: fields differ"


def test_enums_match_the_header(header_ffi):
    ffi = _ffi.ffi
    typedefs = [name for kind, name in module_declarations() if kind == "typedef"]
    enums = [t for t in typedefs if ffi.typeof(t).kind == "enum"]
    assert "hb_status_t" in enums and "hb_backend_t" in enums
    for name in enums:
        assert ffi.typeof(name).relements == header_ffi.typeof(name).relements, name


def test_opaque_handles_are_the_headers(header_ffi):
    ffi = _ffi.ffi
    typedefs = [name for kind, name in module_declarations() if kind == "typedef"]
    opaque = [t for t in typedefs if ffi.typeof(t).kind == "struct" and ffi.typeof(t).fields is None]
    assert "hb_net_t" in opaque
    for name in opaque:
        assert header_ffi.typeof(name).cname == ffi.typeof(name).cname


def test_every_declared_function_is_exported(hb):
    lib = _ffi.load()
    for kind, name in module_declarations():
        if kind == "function":
            assert getattr(lib, name) is not None


def test_the_library_is_this_packages_release(hb, root):
    lib = _ffi.load()
    major, minor, patch = (int(x) for x in hb.__version__.split("."))
    assert lib.hb_version() == major * 10000 + minor * 100 + patch
    with open(os.path.join(root, "python", "pyproject.toml"), encoding="utf-8") as f:
        assert re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1) == hb.__version__


def test_a_library_of_another_release_is_refused():
    class Other:  # what check_version reads of a loaded library
        def __init__(self, version):
            self.version = version

        def hb_version(self):
            return self.version

    major, minor, patch = (int(x) for x in _ffi.VERSION.split("."))
    this = major * 10000 + minor * 100 + patch
    _ffi.check_version(Other(this), "this")
    for version in (this + 1, this + 100, this + 10000):
        with pytest.raises(RuntimeError, match=r"libx\.so has version .*this Python package is"):
            _ffi.check_version(Other(version), "libx.so")
    with pytest.raises(RuntimeError, match="no hb_version"):
        _ffi.check_version(object(), "libold.so")
