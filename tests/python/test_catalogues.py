"""A model's "catalogues" from Python (docs/model.md, section 6): a user catalogue built by the
CLI's build-catalogue from bbp's K_Tst.mod, named by a path relative to the Model's base_dir,
gives the built-in bbp::K_Tst's trace bit for bit; a missing one is refused naming its entry."""
import os
import shutil
import subprocess

import numpy as np
import pytest


def cell(k_tst):
    return {"t_stop": 20, "dt": 0.025, "celsius": 34,
            "cells": [{"sections": [{"name": "soma", "length": 20, "diam": 20}],
                       "mechanisms": [{"name": "hh"},
                                      {"name": k_tst, "gK_Tstbar": 0.01}],
                       "stimuli": [{"type": "iclamp", "at": "soma", "del": 2, "dur": 15,
                                    "amp": 0.3}],
                       "probes": [{"name": "soma", "at": "soma", "spike_threshold": -20}]}]}


def test_user_catalogue_by_path_is_the_builtin(hb, cli, root, tmp_path):
    mods = tmp_path / "mods"
    mods.mkdir()
    shutil.copy(os.path.join(root, "mechanisms", "bbp", "K_Tst.mod"), mods)
    (tmp_path / "lib").mkdir()
    built = subprocess.run([cli, "build-catalogue", str(mods), "--name", "pycat", "-o",
                            str(tmp_path / "lib" / "pycat.so")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    builtin = hb.run(cell("bbp::K_Tst")).trace("soma")
    model = dict(cell("pycat::K_Tst"), catalogues=["lib/pycat.so"])
    user = hb.run(hb.Model(model, base_dir=str(tmp_path))).trace("soma")
    assert len(builtin) > 100 and np.ptp(builtin) > 10
    assert np.array_equal(builtin, user)
    with pytest.raises(hb.HinesbatchError, match=r"catalogues\[0\]: .*none\.so: no such file"):
        hb.run(hb.Model(dict(cell("pycat::K_Tst"), catalogues=["none.so"]),
                        base_dir=str(tmp_path)))
