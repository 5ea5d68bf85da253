"""Where compiled code lives: every numba kernel in `numeric/`, the solver and the simulator only orchestrating
them, and the simulation layer's modules small (read from the source, as a reviewer would)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "core"
MAX_LINES = 600


def _numba_uses(path: Path) -> list[str]:
    """The places in a module that compile with numba: its import, `compiled.numba_module()`, `compiled.jit`,
    a `@...njit` decorator or a `prange` loop."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            if any(n and (n == "numba" or n.startswith("numba.") or n == "llvmlite") for n in names):
                found.append(f"{path.name}:{node.lineno} imports numba")
        elif isinstance(node, ast.Attribute) and node.attr in ("njit", "prange", "numba_module", "jitted"):
            found.append(f"{path.name}:{node.lineno} uses {node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr == "jit" and getattr(node.value, "id", "") == "compiled":
            found.append(f"{path.name}:{node.lineno} uses compiled.jit")
    return found


@pytest.mark.parametrize("layer", ["simulate", "solver"])
def test_no_compiled_code_outside_the_numeric_core(layer):
    """The solver and the simulator call kernels; none is written or compiled there."""
    found = [use for path in sorted((CORE / layer).glob("*.py")) for use in _numba_uses(path)]
    assert found == []


def test_the_check_sees_a_kernel():
    """The check above finds the numeric core's own kernels (it would see one written elsewhere)."""
    assert _numba_uses(CORE / "numeric" / "play.py")
    assert _numba_uses(CORE / "numeric" / "intrinsics.py")


def test_the_simulation_layers_modules_are_small():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (CORE / "simulate").glob("*.py")}
    assert {name: n for name, n in sizes.items() if n >= MAX_LINES} == {}
