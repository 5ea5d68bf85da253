"""The engine without its compiled kernels: the advisor's and the solver's tests run again in a process told to
use numpy alone (`$DICECUP_KERNELS=numpy`, what a machine without numba or a C compiler gets), so code that
quietly assumes a compiled kernel fails here rather than on a user's machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dicecup.numeric import compiled

pytestmark = pytest.mark.slow  # a pytest run of its own: about a minute

ROOT = Path(__file__).resolve().parent.parent
SUITES = ["tests/test_advance.py", "tests/test_solver_advice.py", "tests/test_advice_tables.py", "tests/test_odds.py"]


def test_the_advisors_tests_pass_with_numpy_kernels_alone(tmp_path):
    env = {
        **os.environ,
        compiled.MODE_ENV: "numpy",
        "DICECUP_CACHE_DIR": str(tmp_path / "cache"),
        "DICECUP_STATE_DIR": str(tmp_path / "state"),
    }
    args = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-m", "not slow", "-p", "no:cacheprovider", *SUITES]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    tail = "\n".join(done.stdout.splitlines()[-30:])
    assert done.returncode == 0, tail
    assert " passed" in tail and "failed" not in tail
