"""NEURON's nrnivmodl on chosen .mod files, for the reference scripts that compare
hinesbatch's catalogue mechanisms with NEURON (tests/neuron_cat_bbp.py,
tests/neuron/l5pc_reference.py)."""
import os
import shutil
import subprocess
import tempfile


def compile_mods(moddir, names, prefix="nrn_mech_"):
    """Compiles MODDIR/NAME.mod for each name in a fresh folder; returns its libnrnmech.so."""
    work = tempfile.mkdtemp(prefix=prefix)
    for m in names:
        shutil.copy(os.path.join(moddir, m + ".mod"), work)
    env = dict(os.environ)
    if not os.environ.get("NRNHOME_EXEC") and os.path.exists("/usr/lib/nrn/nrnmech_makefile"):
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
    subprocess.run(["nrnivmodl"], cwd=work, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return os.path.join(work, "x86_64", ".libs", "libnrnmech.so")
