"""ctest's entry to the Python module's tests: exit 77 (ctest: skipped) when this interpreter
lacks a module they need, naming it; else pytest's exit status. Arguments go to pytest."""
import importlib.util
import sys

DEBIAN = {"numpy": "python3-numpy", "cffi": "python3-cffi", "pytest": "python3-pytest"}
missing = [name for name in DEBIAN if importlib.util.find_spec(name) is None]
if missing:
    print(f"skipped: {sys.executable} lacks {', '.join(missing)} "
          f"(Debian: {' '.join(DEBIAN[m] for m in missing)})")
    sys.exit(77)

import pytest  # noqa: E402

sys.exit(pytest.main(sys.argv[1:]))
