"""NEURON's nrnivmodl on chosen .mod files, for the reference scripts that compare
hinesbatch's catalogue mechanisms with NEURON (tests/neuron_cat_bbp.py,
tests/neuron/l5pc_reference.py)."""
import glob
import os
import shutil
import subprocess
import tempfile


def compile_mods(moddir, names, prefix="nrn_mech_"):
    """Compiles MODDIR/NAME.mod for each name in a fresh folder; returns its libnrnmech.so.
    NRNIVMODL names the nrnivmodl (default: the one on PATH), e.g. a NEURON 9 wheel's."""
    nrnivmodl = os.environ.get("NRNIVMODL", "nrnivmodl")
    work = tempfile.mkdtemp(prefix=os.path.basename(prefix), dir=os.path.dirname(prefix) or None)
    for m in names:
        shutil.copy(os.path.join(moddir, m + ".mod"), work)
    env = dict(os.environ)
    if (not os.environ.get("NRNHOME_EXEC") and nrnivmodl == "nrnivmodl"
            and os.path.exists("/usr/lib/nrn/nrnmech_makefile")):
        # Debian's nrnivmodl looks for its makefile beside the binaries: a home of links
        home = os.path.join(work, "nrnhome", "bin")
        os.makedirs(home)
        for f in ["/usr/lib/nrn/nrnmech_makefile", "/usr/lib/nrn/mkthreadsafe",
                  "/usr/bin/nocmodl", "/usr/bin/modlunit", "/usr/bin/nrniv"]:
            os.symlink(f, os.path.join(home, os.path.basename(f)))
        env["NRNHOME_EXEC"] = os.path.dirname(home)
        # and its libraries in libdir; set, not defaulted: under `make test` MAKEFLAGS is the
        # outer make's (jobserver flags), which left libdir unset and nrnivmodl failing
        env["MAKEFLAGS"] = "libdir=/usr/lib/nrn"
    subprocess.run([nrnivmodl], cwd=work, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    for lib in ("x86_64/.libs/libnrnmech.so", "x86_64/libnrnmech.so"):  # NEURON 8 (libtool), 9
        if os.path.exists(os.path.join(work, lib)):
            return os.path.join(work, lib)
    found = sorted(glob.glob(os.path.join(work, "*", "**", "libnrnmech*.so"), recursive=True))
    if found:
        return found[0]
    raise RuntimeError("nrnivmodl in %s made no libnrnmech.so" % work)
