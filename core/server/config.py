"""What one `dicecup serve` process is set to: where its database is, whom it trusts, and its limits.

Every limit a hostile or careless client could push against has a number here, so the server's memory
and work stay bounded whatever is sent; the command line sets the ones an operator tunes.
"""

from __future__ import annotations

from pathlib import Path

from attrs import field, frozen

from ..errors import DicecupError
from ..places import user_folder

__all__ = ["DATA_ENV", "ServerConfig", "data_dir", "default_db_url", "ServerError"]

DATA_ENV = "DICECUP_DATA_DIR"
DB_FILE = "server.sqlite3"


class ServerError(DicecupError):
    """The server cannot start or go on as asked: a database it cannot use, a flag it refuses."""


def data_dir() -> Path:
    """$DICECUP_DATA_DIR, else the user's data folder (XDG_DATA_HOME, ~/.local/share, %LOCALAPPDATA%) / dicecup."""
    return user_folder("data", DATA_ENV)


def default_db_url() -> str:
    """The SQLite file the server keeps its tables in when no --db is given."""
    return f"sqlite:///{data_dir() / DB_FILE}"


def _origins(values: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(v.rstrip("/").lower() for v in values)


@frozen
class ServerConfig:
    """The settings of one server process (defaults suit one machine serving friends)."""

    db_url: str = field(factory=default_db_url)
    allow_origins: tuple[str, ...] = field(default=(), converter=_origins)  # besides the page's own origin
    bot_delay: float = 0.8  # seconds a bot waits before each of its moves (a table may ask for its own)
    bot_workers: int = 1  # processes that compute the bots' moves
    prepare_wait: float = 3.0  # seconds a table's creation waits for its bots' tables before it is refused
    max_message_bytes: int = 4096  # a larger WebSocket message gets a `too_large` error
    max_frame_bytes: int = 1 << 20  # a larger frame closes the connection (1009): it is never read whole
    messages_per_second: float = 10.0  # the sustained rate one connection may send at
    message_burst: int = 30  # ... and how many it may send at once
    max_refusals: int = 200  # refusals at once (one a second is forgiven) before a connection is closed (1008)
    max_tables_per_client: int = 20  # unfinished tables one address may have created (last 24 hours)
    max_connections_per_client: int = 32  # WebSocket connections one address may hold at once, per process
    requests_per_second: float = 20.0  # HTTP API calls of one address, sustained
    request_burst: int = 60
    max_body_bytes: int = 16 * 1024  # of an HTTP request body
    idle_seconds: float = 30.0  # a table nobody watches stays in memory this long
    outbox: int = 256  # messages queued for one slow connection before it is closed (1013)
    fallback_seconds: float = 5.0  # another process takes over a table's bots after this much silence
    collect_seconds: float = 300.0  # a full garbage collection this often (the CLI tunes the collector to pass rarely)
    variant_files: tuple[str, ...] = ()  # variant YAML files offered besides the engine's variants
    prepare: tuple[str, ...] = ()  # VARIANT:bot:SPEC whose tables are prepared as the server starts

    def __attrs_post_init__(self) -> None:
        if not 0 <= self.bot_delay <= 60:
            raise ServerError(f"--bot-delay is seconds from 0 to 60, got {self.bot_delay}")
        if not 1 <= self.bot_workers <= 64:
            raise ServerError(f"--bot-workers is 1 to 64 processes, got {self.bot_workers}")
        for origin in self.allow_origins:
            if origin != "*" and not origin.startswith(("http://", "https://")):
                raise ServerError(f"--allow-origin takes an origin such as https://dice.example.org, got {origin!r}")
