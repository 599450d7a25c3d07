#!/usr/bin/env bash
# The installed hinesbatch as a user gets it: `cmake --install` to a temporary prefix, the files
# and the shared library's soname and exports, then the README's C example (examples/solve_cell.c)
# built against the installed copy with CMake (find_package, shared and static) and pkg-config
# (shared and static), run, and its output checked; the installed CLI and the Python module
# from the prefix (and after `pip install --target`).
# Usage: cli_install.sh HINESBATCH DATA_DIR (the build folder is HINESBATCH's).
set -u
bin=$1
build=$(cd "$(dirname "$bin")" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cc=$(cache CMAKE_C_COMPILER)
libdir=$(cache CMAKE_INSTALL_LIBDIR)
pydir=$(cache HB_PYTHON_INSTALL_DIR)
python=$(cache HB_PYTHON_EXECUTABLE)
sanitize=$(cache HB_SANITIZE)
# A sanitized library needs the sanitizer runtimes in the programs that load it.
flags=""
case "$sanitize" in ON|on|1|TRUE|true) flags="-fsanitize=address,undefined" ;; esac
prefix=$tmp/prefix
swc=$src/data/morphologies/HSN-fluoro01.CNG.swc

expect_status 0 "cmake --install" -- cmake --install "$build" --prefix "$prefix"
for f in "$libdir/libhinesbatch.so" "$libdir/libhinesbatch.so.0" "$libdir/libhinesbatch.a" \
         include/hinesbatch.h bin/hinesbatch "$libdir/cmake/hinesbatch/hinesbatch-config.cmake" \
         "$libdir/cmake/hinesbatch/hinesbatch-config-version.cmake" \
         "$libdir/pkgconfig/hinesbatch.pc" share/doc/hinesbatch/README.md \
         share/doc/hinesbatch/docs/python.md share/doc/hinesbatch/examples/solve_cell.c \
         share/man/man1/hinesbatch.1 \
         "$pydir/hinesbatch/__init__.py" "$pydir/hinesbatch/_install.py"; do
    [ -e "$prefix/$f" ] && ok || bad "not installed: $f"
done
lib=$prefix/$libdir

# The soname, and exactly the header's functions exported (no internal symbol, none missing).
readelf -d "$lib/libhinesbatch.so" > "$tmp/dynamic"
expect_grep "$tmp/dynamic" "SONAME.*\[libhinesbatch\.so\.0\]" "soname"
nm -D --defined-only "$lib/libhinesbatch.so" | awk '$2 ~ /^[A-Z]$/ {print $3}' | sort > "$tmp/exported"
"$cc" -E -P -x c "$src/include/hinesbatch.h" | grep -oE '\bhb_[a-z0-9_]+ *\([^*]' |
    sed 's/ *(.*//' | sort -u > "$tmp/declared"
[ "$(wc -l < "$tmp/declared")" -gt 100 ] && ok || bad "only $(wc -l < "$tmp/declared") functions found in the header"
if diff "$tmp/declared" "$tmp/exported" > "$tmp/diff"; then ok; else
    bad "exports differ from the header's functions (< header only, > exported only): $(cat "$tmp/diff")"
fi

# The README shows examples/solve_cell.c itself.
awk '/<!-- examples\/solve_cell.c/ {want = 1; next}
     want && /^```c$/ {on = 1; next}
     on && /^```$/ {exit}
     on {print}' "$src/README.md" > "$tmp/readme.c"
if [ -s "$tmp/readme.c" ] && cmp -s "$tmp/readme.c" "$src/examples/solve_cell.c"; then ok; else
    bad "README.md's C example is not examples/solve_cell.c"
fi

# What the example must print: the CLI's row count for the same morphology.
rows=$("$bin" info "$swc" --json | grep -o '"rows": *[0-9]*' | grep -o '[0-9]*$')
[ -n "$rows" ] && [ "$rows" -gt 100 ] && ok || bad "hinesbatch info gave rows '$rows'"
check_run() { # DESCRIPTION PROGRAM: runs it on the SWC and checks its line
    expect_status 0 "$1: run" -- "$2" "$swc"
    if grep -qE "^$swc: $rows rows, 1000 copies on [a-z]+, residual [0-9.]+e-[0-9]+$" "$tmp/out"; then
        local exp
        exp=$(sed 's/.*residual [0-9.]*e-//' "$tmp/out")
        [ "$exp" -ge 10 ] && ok || bad "$1: residual too large: $(cat "$tmp/out")"
    else
        bad "$1: output '$(cat "$tmp/out")', expected '$swc: $rows rows, 1000 copies on ..., residual ...'"
    fi
}
needed() { readelf -d "$1" | grep -c 'NEEDED.*libhinesbatch\.so\.0'; }

# CMake: find_package(hinesbatch), the shared library, then the static one.
cp "$src/examples/solve_cell.c" "$src/examples/CMakeLists.txt" "$tmp/"
mkdir -p "$tmp/static"
cp "$src/examples/solve_cell.c" "$tmp/static/"
sed 's/hinesbatch::hinesbatch)/hinesbatch::hinesbatch_static)/' "$src/examples/CMakeLists.txt" > "$tmp/static/CMakeLists.txt"
grep -q hinesbatch_static "$tmp/static/CMakeLists.txt" && ok || bad "examples/CMakeLists.txt has no hinesbatch::hinesbatch target to replace"
for kind in shared static; do
    dir=$tmp; [ $kind = static ] && dir=$tmp/static
    expect_status 0 "cmake configure ($kind)" -- cmake -S "$dir" -B "$tmp/build-$kind" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags"
    expect_status 0 "cmake build ($kind)" -- cmake --build "$tmp/build-$kind"
    check_run "CMake $kind" "$tmp/build-$kind/solve_cell"
    n=$(needed "$tmp/build-$kind/solve_cell")
    if [ $kind = shared ]; then [ "$n" -eq 1 ] && ok || bad "CMake shared: libhinesbatch.so.0 not needed"
    else [ "$n" -eq 0 ] && ok || bad "CMake static: libhinesbatch.so.0 needed"; fi
done

# pkg-config: the shared library (the run finds it through an rpath), then the static one.
export PKG_CONFIG_PATH=$lib/pkgconfig
expect_status 0 "pkg-config --modversion" -- pkg-config --modversion hinesbatch
expect_grep "$tmp/out" "^0\.1\.0$" "pkg-config version"
expect_status 0 "installed --version" -- "$prefix/bin/hinesbatch" --version
expect_grep "$tmp/out" "^hinesbatch 0\.1\.0 " "the installed CLI's version (the library's)"
# shellcheck disable=SC2046,SC2086
expect_status 0 "pkg-config shared link" -- "$cc" $flags "$src/examples/solve_cell.c" \
    $(pkg-config --cflags --libs hinesbatch) -Wl,-rpath,"$lib" -o "$tmp/pc-shared"
check_run "pkg-config shared" "$tmp/pc-shared"
[ "$(needed "$tmp/pc-shared")" -eq 1 ] && ok || bad "pkg-config shared: libhinesbatch.so.0 not needed"
static_libs=$(pkg-config --static --libs hinesbatch | sed 's/-lhinesbatch//')
# shellcheck disable=SC2046,SC2086
expect_status 0 "pkg-config static link" -- "$cc" $flags "$src/examples/solve_cell.c" \
    $(pkg-config --cflags hinesbatch) "$lib/libhinesbatch.a" $static_libs -o "$tmp/pc-static"
check_run "pkg-config static" "$tmp/pc-static"
[ "$(needed "$tmp/pc-static")" -eq 0 ] && ok || bad "pkg-config static: libhinesbatch.so.0 needed"

# The installed CLI and its installed examples (which find the installed morphology).
expect_status 0 "installed CLI" -- "$prefix/bin/hinesbatch" info "$swc" --json
expect_grep "$tmp/out" "\"rows\": *$rows\b" "installed CLI rows"

# The Python module from the prefix finds the installed library by itself (not under the
# sanitizers: the interpreter does not load their runtimes).
if [ -n "$flags" ]; then
    echo "Python from the prefix not checked: a sanitized library in an unsanitized interpreter"
elif [ -z "$python" ] || ! "$python" -c 'import numpy, cffi' 2>/dev/null; then
    bad "no Python with numpy and cffi (${python:-none}) for the installed module"
else
    probe="import hinesbatch, sys; m = hinesbatch.Morphology(sys.argv[1]); print(hinesbatch.library_path(), m.discretize().rows)"
    expect_status 0 "python from the prefix" -- env -u LD_LIBRARY_PATH PYTHONPATH="$prefix/$pydir" \
        "$python" -c "$probe" "$swc"
    expect_grep "$tmp/out" "^$lib/libhinesbatch\.so\.0 $rows$" "python from the prefix: library and rows"
    # the installed CLI's plot runs the installed module, which finds the installed library
    # (the source tree's copy would not: it has no _install.py, and the loader's path is unset)
    if "$python" -c 'import matplotlib' 2>/dev/null; then
        expect_status 0 "installed hinesbatch plot" -- env -u LD_LIBRARY_PATH -u PYTHONPATH \
            PATH="$(dirname "$python"):$PATH" "$prefix/bin/hinesbatch" plot raster \
            "$src/examples/ring_network.json" -o "$tmp/raster.png"
        expect_grep "$tmp/out" "^wrote $tmp/raster.png$" "installed hinesbatch plot: the PNG"
    else
        bad "$python has no matplotlib (Debian: python3-matplotlib) for hinesbatch plot"
    fi
    # pip install of python/ (no network: the build backend and dependencies are the system's);
    # the copy pip installed finds the library through the dynamic loader's path.
    if "$python" -m pip --version >/dev/null 2>&1; then
        cp -r "$src/python" "$tmp/python-src"  # a copy of the checkout's folder, to compare
        expect_status 0 "pip install ./python" -- "$python" -m pip install --quiet --no-deps \
            --no-build-isolation --no-index --target "$tmp/pip" "$tmp/python-src"
        # the build backend (python/_build_backend) builds in a copy: nothing written in place
        (cd "$src/python" && find . -name __pycache__ -prune -o -print | sort) > "$tmp/before"
        (cd "$tmp/python-src" && find . -name __pycache__ -prune -o -print | sort) > "$tmp/after"
        diff "$tmp/before" "$tmp/after" > "$tmp/written" && ok ||
            bad "pip install ./python wrote into the folder: $(grep '^>' "$tmp/written" | head -5 | tr '\n' ' ')"
        expect_status 0 "python after pip install" -- env LD_LIBRARY_PATH="$lib" \
            PYTHONPATH="$tmp/pip" "$python" -c "$probe" "$swc"
        expect_grep "$tmp/out" "^libhinesbatch\.so\.0 $rows$" "python after pip install"
    else
        bad "$python has no pip (Debian: python3-pip) for pip install ./python"
    fi
fi

echo "cli_install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
