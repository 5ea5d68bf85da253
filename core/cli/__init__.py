"""The `dicecup` command line: one module per group of commands, all on the app of `cli.app`.

`main()` is the console script: any `DicecupError` that escapes a command is one
`error: ...` line on stderr and exit status 2.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from ..errors import DicecupError
from . import catalogue, playing, simulating, solving  # noqa: F401  (they add their commands to `app`)
from .app import app

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: DicecupError -> one line on stderr and exit 2."""
    try:
        return app(args=argv, standalone_mode=True)
    except DicecupError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
