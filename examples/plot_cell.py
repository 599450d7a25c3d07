"""An SWC cell to a PNG: hh everywhere, 2 nA into the soma from 1 ms, the voltage over the
morphology at 4 ms (docs/python.md). From the repository root, with the module importable:
    python3 examples/plot_cell.py [CELL.swc [OUT.png]]
"""
import sys
from hinesbatch import plot
swc = sys.argv[1] if len(sys.argv) > 1 else "data/morphologies/HSN-fluoro01.CNG.swc"
cell = {"morphology": swc, "discretization": {"policy": "d-lambda"}, "mechanisms": [{"name": "hh"}],
        "stimuli": [{"type": "iclamp", "at": "soma", "del": 1, "dur": 3, "amp": 2}]}
print(plot.morphology({"t_stop": 4, "cells": [cell]}, sys.argv[2] if len(sys.argv) > 2 else "cell.png"))
