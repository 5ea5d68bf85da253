"""The `dicecup` command line: one module per group of commands, all on the app of `cli.base`.

`main()` is the console script: any usage error or `DicecupError` that escapes a command is one
`error: ...` line on stderr and exit status 2. It imports only the command module its
command line names (`dicecup advise` needs neither the simulator nor the game's terminal);
anything else (`--help`, no command, an unknown one) gets the whole app, `cli.app`, which is
also where a program that wants the typer app itself imports it (`from dicecup.cli.app import app`).
While it imports them the cyclic garbage collector is paused, and what the imports made is then
frozen (`gc.freeze`, never scanned again): modules, classes and functions live as long as the
process anyway, and collecting every 700 new objects while they were made cost `advise` about 8 ms.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Any

__all__ = ["main"]


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: every error (a usage error or a DicecupError) is one line on stderr, exit 2
    (`base.QuickGroup.main`)."""
    paused = gc.isenabled()
    gc.disable()  # the imports make objects that stay: no collection scans them (see the module's docstring)
    try:
        import typer

        from .base import COMMAND_MODULES, app

        args = sys.argv[1:] if argv is None else argv
        at = 0
        while at < len(args) and (args[at] == "--plugin" or args[at].startswith("--plugin=")):
            at += 1 if "=" in args[at] else 2  # the global --plugin FILE.py flags come before the command
        module = COMMAND_MODULES.get(args[at]) if at < len(args) else None
        importlib.import_module(f".{module}" if module else ".app", __name__)
    finally:
        if paused:
            gc.freeze()
            gc.enable()
    return typer.main.get_command(app)(args=args, prog_name="dicecup", standalone_mode=True)
