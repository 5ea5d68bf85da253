"""CLI command `serve`: the game server (dicecup.server) on uvicorn, or one of its tables exported as a save.

The database is opened and migrated before uvicorn starts, so a bad `--db` (unreachable, newer than
this dicecup, held by another server) is one `error:` line and exit 2, not a server that starts and dies.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import DicecupError, install_extra
from ..locales import N_, _
from .base import Number, Whole, app, cli_errors, get_engine
from .outputs import OverwriteOpt, output_path

__all__ = ["serve"]


def _needs_web() -> None:
    """Refuse at once, saying how to install it, when the `web` extra is missing."""
    missing = []
    for module in ("starlette", "uvicorn", "jsonschema", "websockets"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise DicecupError(
            _("dicecup serve needs the web extra ({missing} missing): {install}").format(
                missing=", ".join(missing), install=install_extra("web")
            )
        )


async def _check_db(config: Any) -> None:
    """Open (and migrate) the database once, so its problems are reported before serving."""
    from ..server.opening import open_store

    store = open_store(config.db_url)
    await store.open()
    await store.close()


async def _export(config: Any, code: str, path: Path | None) -> bytes:
    """Table `code` as a save file: written to `path` by the CLI's save writer, else returned as bytes."""
    from ..server.app import Server
    from ..server.lobby import save_bytes
    from ..server.opening import open_store
    from ..server.protocol import Refused
    from ..terminal.savefile import save

    server = Server(config, get_engine(), open_store(config.db_url, exclusive=False))
    await server.store.open()
    try:
        saved = await server.lobby.saved_game(code)
    except Refused as exc:
        raise DicecupError(exc.message) from None
    finally:
        await server.store.close()
    if path is None:
        return save_bytes(saved)
    save(path, saved)
    return b""


def _check_prepare(items: list[str], variant_files: Sequence[str]) -> None:
    """Each `--prepare VARIANT:bot:NAME` names a variant (built in, or of a `--variant-file`) and a bot that can
    play it (checked before serving)."""
    engine = get_engine()
    files = {engine.load_file(path).id: path for path in variant_files} if items else {}
    for item in items:
        vid, _sep, spec = item.partition(":bot:")
        if not spec:
            raise DicecupError(
                _("--prepare takes VARIANT:bot:NAME such as yahtzee:bot:optimal, got {item}").format(item=repr(item))
            )
        engine.check_bot(spec, engine.load_file(files[vid]) if vid in files else engine.variant(vid))


# The options of `serve`, each with its help.
HostOpt = Annotated[
    str, typer.Option(metavar="ADDRESS", help=N_("Address to listen on (0.0.0.0: every network of this machine)."))
]
PortOpt = Annotated[int, typer.Option(click_type=Whole(1, 65535), help=N_("Port to listen on."))]
DbOpt = Annotated[
    str | None,
    typer.Option(
        metavar="URL",
        help=N_(
            "Database: sqlite:///PATH, or postgresql://USER:PASSWORD@HOST/NAME for several server processes "
            "(default: server.sqlite3 in the user's data folder, or $DICECUP_DATA_DIR)."
        ),
    ),
]
AllowOriginOpt = Annotated[
    list[str] | None,
    typer.Option(
        metavar="ORIGIN",
        help=N_("Also let pages from this origin connect, e.g. https://game.example.org (repeatable)."),
    ),
]
BotDelayOpt = Annotated[float, typer.Option(click_type=Number(0, 60), help=N_("Seconds a bot waits before each move."))]
BotWorkersOpt = Annotated[
    int, typer.Option(click_type=Whole(1, 64), help=N_("Processes that compute the bots' moves."))
]
PrepareOpt = Annotated[
    list[str] | None,
    typer.Option(
        metavar="VARIANT:bot:NAME",
        help=N_(
            "Prepare a bot's tables for a variant as the server starts, in the background (repeatable), "
            "e.g. yahtzee:bot:optimal: the first table with that bot then need not wait."
        ),
    ),
]
VariantFileOpt = Annotated[
    list[Path] | None,
    typer.Option(metavar="FILE.yaml", help=N_("Also offer the variant in this YAML file (repeatable).")),
]
MaxTablesPerClientOpt = Annotated[
    int, typer.Option(click_type=Whole(1), help=N_("Unfinished tables one address may have created (in the last day)."))
]
MaxConnectionsPerClientOpt = Annotated[
    int, typer.Option(click_type=Whole(1), help=N_("WebSocket connections one address may hold at once."))
]
ForwardedAllowIpsOpt = Annotated[
    str,
    typer.Option(
        metavar="ADDRESSES",
        help=N_("Proxies trusted to say the client's address (X-Forwarded-For): comma-separated, or *."),
    ),
]
ExportOpt = Annotated[
    str | None,
    typer.Option(
        metavar="CODE",
        help=N_(
            "Do not serve: write table CODE's game as a save file (for `dicecup review` and `dicecup resume`) "
            "to --save FILE, or to standard output."
        ),
    ),
]
SaveOpt = Annotated[Path | None, typer.Option(metavar="FILE", help=N_("With --export: the save file to write."))]


@app.command(help=N_("Serve the game: tables of any variant for humans and bots, over HTTP and a WebSocket."))
@cli_errors
def serve(
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8000,
    db: DbOpt = None,
    allow_origin: AllowOriginOpt = None,
    bot_delay: BotDelayOpt = 0.8,
    bot_workers: BotWorkersOpt = 1,
    prepare: PrepareOpt = None,
    variant_file: VariantFileOpt = None,
    max_tables_per_client: MaxTablesPerClientOpt = 20,
    max_connections_per_client: MaxConnectionsPerClientOpt = 32,
    forwarded_allow_ips: ForwardedAllowIpsOpt = "127.0.0.1",
    export: ExportOpt = None,
    save: SaveOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Serve the game: tables of any variant for humans and bots, over HTTP and a WebSocket."""
    _needs_web()
    from ..server.config import ServerConfig, default_db_url

    config = ServerConfig(
        db_url=db or default_db_url(),
        allow_origins=tuple(allow_origin or ()),
        bot_delay=bot_delay,
        bot_workers=bot_workers,
        variant_files=tuple(str(p) for p in variant_file or ()),
        prepare=tuple(prepare or ()),
        max_tables_per_client=max_tables_per_client,
        max_connections_per_client=max_connections_per_client,
    )
    if save is not None and export is None:
        raise DicecupError(
            _("--save FILE goes with --export CODE (the table to write); the server itself needs neither")
        )
    if export is not None:
        if save is not None:
            output_path("--save", save, overwrite)
        data = asyncio.run(_export(config, export, save))
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    _check_prepare(list(prepare or ()), config.variant_files)
    asyncio.run(_check_db(config))
    _run(config, host, port, forwarded_allow_ips)


def _run(config: Any, host: str, port: int, forwarded: str) -> None:
    import uvicorn

    from ..server.app import create_app

    app = create_app(config, get_engine())
    _tune_gc()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("dicecup.server").setLevel(logging.INFO)
    where = config.db_url if config.db_url.startswith("sqlite") else "postgresql"
    typer.echo(_("dicecup server on {url} (database: {database})").format(url=f"http://{host}:{port}/", database=where))
    sys.stdout.flush()
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        ws_max_size=config.max_frame_bytes,
        ws_per_message_deflate=False,  # compressing every update costs more CPU than its bytes are worth
        ws_ping_interval=20,
        ws_ping_timeout=20,
        proxy_headers=True,
        forwarded_allow_ips=forwarded,
        timeout_graceful_shutdown=3,
    )


def _tune_gc() -> None:
    """Keep the collector's pauses short in the server: what is loaded by now (the engine, the app) lives as long
    as the process and is left out of every collection, and young objects are collected less often (a move
    makes thousands, all of them short-lived or kept by a table)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
