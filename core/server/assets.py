"""The page's files, served so that a reload on a slow phone is quick: each file's content hash is its ETag
(a reload asks "still this?" and gets 304 Not Modified), and the page loads them under a path naming the
hash of them all (`/static/v/HASH/app.js`), which never changes, so a browser keeps them for a year.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

__all__ = ["Assets"]

FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"  # keep it, but ask (cheaply, by ETag) before each use
TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
}


@dataclass(frozen=True)
class Asset:
    body: bytes
    etag: str
    media_type: str


class Assets:
    """The static folder read once, with each file's ETag and the version of the whole set."""

    def __init__(self, folder: Path) -> None:
        self.files: dict[str, Asset] = {}
        whole = hashlib.sha256()
        for path in sorted(p for p in folder.iterdir() if p.is_file()):
            body = path.read_bytes()
            digest = hashlib.sha256(body).hexdigest()
            whole.update(path.name.encode() + b"\0" + digest.encode())
            kind = TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            self.files[path.name] = Asset(body, f'"{digest[:32]}"', kind)
        self.version = whole.hexdigest()[:16]
        page = self.files["index.html"]
        body = page.body.replace(b'"/static/', f'"/static/v/{self.version}/'.encode())
        self.page_asset = Asset(body, f'"{hashlib.sha256(body).hexdigest()[:32]}"', page.media_type)

    def _answer(self, request: Request, asset: Asset, cache: str) -> Response:
        headers = {"etag": asset.etag, "cache-control": cache}
        if asset.etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(asset.body, media_type=asset.media_type, headers=headers)

    async def page(self, request: Request) -> Response:
        """The page itself (/ and /t/CODE): asked for again each time, as it names the assets' version."""
        return self._answer(request, self.page_asset, REVALIDATE)

    async def file(self, request: Request) -> Response:
        """`/static/NAME`, by ETag; `/static/v/VERSION/NAME` kept for good when VERSION is this one's."""
        asset = self.files.get(request.path_params["name"])
        if asset is None:
            raise HTTPException(404)
        forever = request.path_params.get("version") == self.version
        return self._answer(request, asset, FOREVER if forever else REVALIDATE)
