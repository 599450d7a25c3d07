"""Morphologies from Python: the same numbers as `hinesbatch info --json` for real cells under
several compartment rules, warnings, SWC text, and errors that name the file and line."""
import json
import os

import numpy as np
import pytest

from conftest import run_cli

CASES = [
    ("HSN-fluoro01.CNG.swc", [], {}),
    ("v_e_purk2.CNG.swc", ["--policy", "fixed", "--nseg", "3", "--scheme", "neuron"],
     {"policy": "fixed", "nseg": 3, "scheme": "neuron", "sections": "import3d"}),
    ("C040600B3.CNG.swc", ["--scheme", "neuron", "--sections", "hinesbatch", "--zero-radius",
                           "keep"],
     {"scheme": "neuron", "sections": "hinesbatch", "zero_radius": "keep"}),
    ("720575940661205633.swc", ["--units", "nm", "--max-length", "5"],
     {"units": "nm", "max_length": 5}),
    ("l22.CNG.swc", ["--d-lambda", "0.3", "--frequency", "50", "--ra", "150", "--cm", "0.8"],
     {"d_lambda": 0.3, "frequency": 50, "ra": 150, "cm": 0.8}),
    ("pyramidal.swc", ["--policy", "per-segment"], {"policy": "per-segment"}),
]


@pytest.mark.parametrize("name,args,options", CASES, ids=[c[0] for c in CASES])
def test_info_matches_the_cli(hb, cli, data, name, args, options):
    path = os.path.join(data, "morphologies", name)
    want = json.loads(run_cli(cli, "info", path, "--json", *args))
    load = {k: options.pop(k) for k in ("units", "sections", "zero_radius") if k in options}
    got = hb.Morphology(path, **load).info(**options)
    for key in ("points", "sections", "terminals", "max_branch_order", "compartments", "rows",
                "warnings"):
        assert got[key] == want[key], key
    # the CLI prints 6 decimals
    assert got["length_um"] == pytest.approx(want["length_um"], abs=1e-6)
    assert got["area_um2"] == pytest.approx(want["area_um2"], abs=1e-6)


def test_cable_parent_is_a_view_in_hines_order(hb, data):
    cable = hb.Morphology(os.path.join(data, "morphologies", "HSN-fluoro01.CNG.swc")).discretize()
    parent = cable.parent
    assert parent.dtype == np.int32 and len(parent) == cable.rows
    assert parent[0] == -1 and np.all(parent[1:] < np.arange(1, cable.rows))
    assert not parent.flags.owndata and not parent.flags.writeable
    assert np.shares_memory(parent, cable.parent)  # the library's array, not a copy
    del cable  # the view keeps the cable alive
    assert parent[0] == -1 and np.all(parent[1:] >= 0)


def test_warnings_are_listed(hb, data):
    cell = hb.Morphology(os.path.join(data, "morphologies", "720575940661205633.swc"), units="nm")
    assert len(cell.warnings) == 1 and "radius 0" in cell.warnings[0]


def test_swc_text(hb, data):
    path = os.path.join(data, "morphologies", "ball_and_stick.swc")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    from_text = hb.Morphology.from_text(text, name="bs")
    from_file = hb.Morphology(path)
    assert (from_text.points, from_text.sections, from_text.area) == \
        (from_file.points, from_file.sections, from_file.area)
    assert from_text.name == "bs"


def test_bad_file_names_file_and_line(hb, data):
    path = os.path.join(data, "morphologies-bad", "arbor_bad4_duplicate_id.swc")
    with pytest.raises(hb.HinesbatchError) as err:
        hb.Morphology(path)
    assert err.value.status == "HB_ERR_MORPHOLOGY"
    assert f"{path}:3: duplicate id 3" in str(err.value)
    with pytest.raises(hb.HinesbatchError, match="bad.swc:1:"):
        hb.Morphology.from_text("1 1 0 0 0 x -1\n", name="bad.swc")
    with pytest.raises(hb.HinesbatchError) as err:
        hb.Morphology(os.path.join(data, "no-such.swc"))
    assert err.value.status == "HB_ERR_IO" and "no-such.swc" in str(err.value)


def test_bad_options(hb, data):
    cell = hb.Morphology(os.path.join(data, "morphologies", "ball_and_stick.swc"))
    with pytest.raises(ValueError, match="policy 'lambda': expected one of"):
        cell.discretize(policy="lambda")
    with pytest.raises(ValueError, match="units 'mm'"):
        hb.Morphology(os.path.join(data, "morphologies", "ball_and_stick.swc"), units="mm")
    with pytest.raises(hb.HinesbatchError):
        cell.discretize(nseg=0)
    with pytest.raises(hb.HinesbatchError, match="rows"):
        cell.discretize(policy="fixed", nseg=50, max_rows=10)
    with pytest.raises(ValueError, match="sections 'neuron'"):
        hb.Morphology(os.path.join(data, "morphologies", "ball_and_stick.swc"), sections="neuron")


def test_backends(hb):
    available = hb.backends()
    assert "seq" in available and set(available) <= {"seq", "omp", "cuda"}


def test_asc_as_the_cli(hb, cli, data):
    """Neurolucida ASC (docs/asc.md): NEURON's 325 sections of BluePyOpt's L5PC, as the CLI."""
    path = os.path.join(data, "morphologies-asc", "C060114A7.asc")
    want = json.loads(run_cli(cli, "info", path, "--json", "--scheme", "neuron"))
    got = hb.Morphology(path).info(scheme="neuron")
    assert got["sections"] == want["sections"] == 325 and got["points"] == 10836
    assert got["compartments"] == want["compartments"]
    assert got["area_um2"] == pytest.approx(want["area_um2"], abs=1e-6)


def test_point_precision_float_is_neurons(hb):
    # three lines of single_cell_allen.swc; NEURON 8.2's dend[0] arc3d(1) (docs/validation.md)
    text = ("1 1 357.4977 705.5311 27.0085 6.9553 -1\n2 3 351.3693 708.5444 25.6116 0.4347 1\n"
            "3 3 350.3283 709.0054 25.3873 0.4347 2\n")
    dbl = hb.Morphology.from_text(text, sections="import3d").info()
    flt = hb.Morphology.from_text(text, sections="import3d", point_precision="float").info()
    # length_um: the neurites' (the soma sphere's cylinder not counted)
    assert flt["length_um"] == 1.1603793801110165
    assert dbl["length_um"] == pytest.approx(1.160393247998283, abs=1e-15)
    with pytest.raises(ValueError, match="point_precision"):
        hb.Morphology.from_text(text, sections="import3d", point_precision="single")
    with pytest.raises(hb.HinesbatchError, match="HB_SECTIONS_IMPORT3D"):
        hb.Morphology.from_text(text, point_precision="float")
