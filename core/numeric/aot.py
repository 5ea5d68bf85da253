"""The kernels built ahead of time: `dicecup.numeric._kernels`, an extension module that needs no numba to run.

setup.py runs `build` at install (numba and a C compiler are needed then, not after). It compiles the
functions the `jit` mode compiles, for the argument types of `records.signatures`, with the GIL released.
The code is tuned for the build's CPU: its flags and a digest of the argument types are written beside the
module (`_kernels_cpu.py`) and checked before it is loaded, so another CPU or a stale build falls back to numba.

    python -m dicecup.numeric.aot OUTPUT_DIR   # (re)build by hand

It imports only numpy, numba and this folder's kernel modules (not the engine),
so that it can run in a build environment holding just those two packages.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from . import advance, card, compiled, duel, layer, moves, play, reach, scoreclass, turn
from .records import signature_digest, signatures

__all__ = ["MODULE", "build"]

MODULE = "_kernels"


def build(output_dir: str | os.PathLike[str], target_cpu: str = "host") -> Path:
    """Compile the kernels into `output_dir`/_kernels.<ext> and write `_kernels_cpu.py`; returns the module's path."""
    nb = compiled.numba_module()
    types: Any = importlib.import_module("numba.core.types")
    signature = importlib.import_module("numba.core.typing").signature
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba marks its ahead-of-time compiler as pending deprecation
        pycc_compiler: Any = importlib.import_module("numba.pycc.compiler")
        cc_class: Any = importlib.import_module("numba.pycc").CC

    class _NoGil(pycc_compiler.Flags):
        """Exported functions release the GIL (the solver runs blocks of a layer on threads)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.release_gil = True

    kernels = {"turn_block": turn.jitted(), "layer_f8": layer.jitted(), "layer_f4": layer.jitted()}
    kernels.update(card_f8=card.jitted(), card_f4=card.jitted(), duel_f8=duel.jitted(), duel_f4=duel.jitted())
    player, hashing = play.compiled_names()["_play_worker"], scoreclass.compiled_names()
    fill = moves.compiled_names()["_fill_worker"]
    kernels.update(class_slots=hashing["_class_slots"], group_facts=hashing["_group_facts"])
    kernels.update(class_scores=moves.compiled_names()["_class_scores"])
    successors = advance.compiled_names()["_successor_rows"]
    kernels.update(successors_f8=successors, successors_f4=successors)
    kernels.update(reach_step=reach.compiled_names()["_shift_clamp_merge"])
    ints = types.Array(types.int64, 1, "C")
    returns = {"class_slots": ints, "group_facts": types.UniTuple(ints, 2)}
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dicecup-aot-") as tmp:
        cc = cc_class(MODULE, source_module=layer)
        cc.output_dir = tmp
        cc.target_cpu = target_cpu
        for name, args in signatures().items():
            sig = signature(returns.get(name, types.void), *(nb.typeof(a) for a in args))
            made = (
                player
                if name.startswith("play_worker_")
                else fill
                if name.startswith("fill_worker_")
                else kernels[name]
            )
            cc.export(name, sig)(made.py_func)
        saved, pycc_compiler.Flags = pycc_compiler.Flags, _NoGil
        try:
            cc.compile()
        finally:
            pycc_compiler.Flags = saved
        (built,) = Path(tmp).glob(MODULE + ".*")
        target = out / built.name
        # beside it, then renamed over it: a process that has the old module loaded (this one, run by hand on the
        # installed folder) keeps the file it mapped, where copying over it in place crashed that process
        shutil.copyfile(built, out / (built.name + ".new"))
        os.replace(out / (built.name + ".new"), target)
    flags = sorted(compiled.cpu_flags()) if target_cpu == "host" else []
    modules = kernel_modules()
    (out / (MODULE + "_cpu.py")).write_text(
        '"""Written by dicecup.numeric.aot: the CPU flags the kernels beside this file were built for, the\n'
        "digests of the argument types they were compiled for (the core's, the simulator's), and the modules\n"
        'they were compiled from with a digest of their bytes."""\n\n'
        f"FLAGS = {flags!r}\nSIGNATURES = {signature_digest()!r}\nSIMULATOR = {signature_digest(simulator=True)!r}\n"
        f"MODULES = {modules!r}\nSOURCES = {compiled.sources_digest(modules)!r}\n",
        encoding="ascii",
    )
    return target


def kernel_modules() -> list[str]:
    """This folder's modules the build compiles from: the kernel modules and every one of the folder's they
    import (as loaded now), by file name."""
    here = Path(__file__).parent
    files = {Path(f) for m in list(sys.modules.values()) if isinstance(f := getattr(m, "__file__", None), str)}
    names = {f.name for f in files if f.parent == here and f.suffix == ".py"}
    return sorted(n for n in names if n not in (Path(__file__).name, "__init__.py") and not n.startswith(MODULE))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m dicecup.numeric.aot OUTPUT_DIR")
    print(build(sys.argv[1]))
