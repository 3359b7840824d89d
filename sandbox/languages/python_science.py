"""Python with the scientific stack RL datasets import (NumPy, pandas, SciPy, SymPy, NetworkX, from Debian's
packages), in an image of its own: judged exactly as Python is, and chosen per dataset (`language`) or per
/run_code and /v1/judge request. Python itself stays lean."""

import dataclasses

from sandbox.languages.python import LANGUAGE as PYTHON

LANGUAGE = dataclasses.replace(
    PYTHON,
    name="python-science",
    title="Python (scientific)",
    packages=("python3-numpy", "python3-pandas", "python3-scipy", "python3-sympy", "python3-networkx"),
    version=("python3", "-c", "import sys, numpy, pandas, scipy, sympy, networkx as nx; "
             "print(f'Python {sys.version.split()[0]}, NumPy {numpy.__version__}, pandas {pandas.__version__}, "
             "SciPy {scipy.__version__}, SymPy {sympy.__version__}, NetworkX {nx.__version__}')"),
    aliases=("python-scientific", "python3-science"),
    run_code_names=("python-science",),
    variant_of="python",
    notes="Python with NumPy, pandas, SciPy, SymPy and NetworkX (Debian's packages).",
)
