"""Reaching a cluster: a running Dask scheduler by its address, or a local one started for the run."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from types import TracebackType
from typing import Any

from .. import __version__
from ..errors import install_extra, shown
from ..locales import N_, Phrase
from .errors import ClusterError, ClusterUnavailable

__all__ = ["Cluster", "connect", "parse_address", "reached", "require_packages", "LOCAL_MAX_WORKERS", "CONNECT_SECONDS"]

LOCAL_MAX_WORKERS = 64
"""The most worker processes `local:N` starts (more would only share this machine's cores)."""
CONNECT_SECONDS = 20.0
"""How long to wait for a scheduler to answer, and for its first worker."""

_LOCAL = re.compile(r"local(?::(\d+))?")
_REMOTE = re.compile(r"(?:(tcp|tls|ucx|inproc|ws|wss)://)?[A-Za-z0-9_.\-\[\]:]+:\d{1,5}")


def parse_address(address: str) -> tuple[str, int | None]:
    """("local", workers) for `local` or `local:N`, else (the scheduler's address, None); a ClusterError
    for anything else, before any connection is tried."""
    if not isinstance(address, str):
        raise ClusterError(f"a cluster address is text, got {shown(address)}")
    text = address.strip()
    local = _LOCAL.fullmatch(text)
    if local:
        n = int(local.group(1)) if local.group(1) else 2
        if not 1 <= n <= LOCAL_MAX_WORKERS:
            raise ClusterError(
                Phrase(
                    N_("cluster {address}: a local cluster has 1 to {most} workers, got {n}"),
                    address=shown(address),
                    most=LOCAL_MAX_WORKERS,
                    n=n,
                )
            )
        return "local", n
    if _REMOTE.fullmatch(text):
        return text, None
    raise ClusterError(
        Phrase(
            N_(
                "cluster {address} is not an address: give a Dask scheduler's (tcp://HOST:PORT, as `dask scheduler` "
                "prints it) or local:N to start N worker processes on this machine"
            ),
            address=shown(address),
        )
    )


class Cluster:
    """A Dask client and, for `local:N`, the cluster it started (closed with it): use it as a context manager."""

    def __init__(self, client: Any, local: Any = None, address: str = "") -> None:
        self.client = client
        self.local = local
        self.address = address

    @property
    def workers(self) -> int:
        """Worker processes the scheduler knows now."""
        return len(self.client.scheduler_info(n_workers=-1).get("workers", {}))

    @property
    def threads(self) -> int:
        """Tasks the workers run at once (their threads, summed)."""
        return int(sum(self.client.nthreads().values()))

    def close(self) -> None:
        self.client.close()
        if self.local is not None:
            self.local.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def require_packages() -> Any:
    """Dask distributed (the module), or ClusterUnavailable saying how to install what is missing."""
    try:
        import distributed
        import zarr  # noqa: F401  (the chunk store: refused now rather than on the first write)
    except ImportError as exc:
        raise ClusterUnavailable(
            f"a cluster needs Dask distributed and Zarr ({exc.name} is not installed): {install_extra('cluster')}"
        ) from None
    return distributed


def _worker_version() -> str:
    """What a worker answers to the version check (it runs there)."""
    import dicecup

    return dicecup.__version__


def connect(address: str, *, timeout: float = CONNECT_SECONDS, quiet: bool = True) -> Cluster:
    """A client of the cluster at `address` (`parse_address`), its workers checked to run this dicecup.

    `local:N` starts N single-threaded worker processes on this machine (a nanny restarts a lost one).
    `timeout`: seconds to wait for the scheduler, then for a first worker. `quiet`: Dask's own log lines
    below errors are not shown.
    """
    where, n = parse_address(address)
    distributed = require_packages()
    if quiet:
        logging.getLogger("distributed").setLevel(logging.ERROR)
    local = None
    try:
        if n is not None:
            local = distributed.LocalCluster(  # its workers' own log lines silenced: what fails in a task reaches
                # the client as an exception, and a worker losing its scheduler at Ctrl-C logs a traceback otherwise
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.CRITICAL,
            )
            client = distributed.Client(local, timeout=timeout)
        else:
            client = distributed.Client(where, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        if local is not None:
            local.close()
        raise ClusterError(
            Phrase(
                N_(
                    "cluster {address}: cannot reach the scheduler ({why}); start one with `dask scheduler` and "
                    "workers with `dask worker ADDRESS`, or give local:N"
                ),
                address=address,
                why=str(exc),
            )
        ) from None
    cluster = Cluster(client, local, address)
    try:
        client.wait_for_workers(1, timeout=timeout)
        versions = client.run(_worker_version)
    except (OSError, TimeoutError) as exc:
        cluster.close()
        raise ClusterError(
            Phrase(
                N_(
                    "cluster {address}: no worker joined within {seconds} s ({why}); start workers with `dask worker ADDRESS`"
                ),
                address=address,
                seconds=f"{timeout:.0f}",
                why=str(exc),
            )
        ) from None
    except ImportError:
        cluster.close()
        raise ClusterError(
            Phrase(
                N_("cluster {address}: its workers cannot import dicecup; install dicecup[cluster] where they run"),
                address=address,
            )
        ) from None
    other = {w: v for w, v in versions.items() if v != __version__}
    if other:
        cluster.close()
        worker, version = next(iter(other.items()))
        raise ClusterError(
            Phrase(
                N_(
                    "cluster {address}: worker {worker} runs dicecup {version}, this is {this}; "
                    "install the same version on every worker"
                ),
                address=address,
                worker=worker,
                version=version,
                this=__version__,
            )
        )
    return cluster


@contextlib.contextmanager
def reached(cluster: Cluster | str) -> Iterator[Cluster]:
    """The cluster given, or the one at this address (`connect`), reached for the block and closed after it."""
    if isinstance(cluster, Cluster):
        yield cluster
        return
    with connect(cluster) as made:
        yield made
