"""`dicecup serve`: tables of any variant over HTTP and a WebSocket, with a durable history.

Needs the `web` extra (Starlette, uvicorn, psycopg, jsonschema). `create_app` builds the ASGI
app; `dicecup.cli.serving` runs it with uvicorn. The protocol's JSON Schemas ship in `schemas/v1/`.
"""

from __future__ import annotations

from .app import Server, create_app
from .config import ServerConfig, ServerError, data_dir, default_db_url

__all__ = ["Server", "ServerConfig", "ServerError", "create_app", "data_dir", "default_db_url"]
