"""The `dicecup` command line: one module per group of commands, all on the app of `cli.base`.

`main()` is the console script: any usage error or `DicecupError` that escapes a command is one
`error: ...` line on stderr and exit status 2. It imports only the command module its
command line names (`dicecup advise` needs neither the simulator nor the game's terminal);
anything else (`--help`, no command, an unknown one) gets the whole app, `cli.app`, which is
also where a program that wants the typer app itself imports it (`from dicecup.cli.app import app`).
While it imports them the cyclic garbage collector is paused, and what the imports made is then
frozen (`gc.freeze`, never scanned again): modules, classes and functions live as long as the
process anyway, and collecting every 700 new objects while they were made cost `advise` about 8 ms.
A command imports what it alone needs (numpy, the solver) the same way, once its arguments have parsed
(`imports_paused`: about 6 ms more of `advise`).

A command that does no linear algebra worth a thread (`ONE_BLAS_THREAD`: `advise` reads its tables and
takes small array steps, a table it must solve first being solved by compiled kernels, not BLAS; `odds` takes
dot products of a few hundred numbers) runs with
OpenBLAS limited to one thread, unless the user has set a thread count (`BLAS_THREAD_VARS`). NumPy's OpenBLAS
starts its thread pool when numpy is imported, and its threads spin waiting for work that never comes: on two
cores that cost `advise` about 0.1 s of CPU, taken from whatever else runs. The variable is set only by this
console script, only while the command runs, and only when numpy is not imported yet: the library
(`import dicecup`) never touches the environment, and a program that calls `main` keeps its own.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["main", "imports_paused", "ONE_BLAS_THREAD", "BLAS_THREAD_VARS"]

#: the commands run with one OpenBLAS thread (see the module's docstring)
ONE_BLAS_THREAD = frozenset({"advise", "odds"})
#: what OpenBLAS reads its thread count from: any of them set, the user's choice stands
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


@contextmanager
def imports_paused() -> Iterator[None]:
    """Run the block (imports) with the cyclic garbage collector paused, then freeze what exists: the modules,
    classes and functions imported stay for the process, so no later collection scans them again."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.freeze()
            gc.enable()


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: every error (a usage error or a DicecupError) is one line on stderr, exit 2
    (`base.QuickGroup.main`)."""
    with imports_paused():  # the imports make objects that stay (see the module's docstring)
        import typer

        from .base import COMMAND_MODULES, app

        args = sys.argv[1:] if argv is None else argv
        at = 0
        while at < len(args) and (args[at] == "--plugin" or args[at].startswith("--plugin=")):
            at += 1 if "=" in args[at] else 2  # the global --plugin FILE.py flags come before the command
        command = args[at] if at < len(args) else None
        module = COMMAND_MODULES.get(command) if command is not None else None
        importlib.import_module(f".{module}" if module else ".app", __name__)
    one_thread = (
        command in ONE_BLAS_THREAD
        and "numpy" not in sys.modules  # once loaded, OpenBLAS has read its thread count
        and not any(name in os.environ for name in BLAS_THREAD_VARS)
    )
    if one_thread:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        return typer.main.get_command(app)(args=args, prog_name="dicecup", standalone_mode=True)
    finally:
        if one_thread:
            os.environ.pop("OPENBLAS_NUM_THREADS", None)
