"""What a forged table file and a spoiled chunk store cost to refuse: time and peak RSS, each in its own child.

    .venv/bin/python tests/benchmarks/bench_hostile_files.py [--gib 2]

1. A Yacht table file of about 2 MB whose values inflate to `--gib` GiB of zeros (deflated), signed with the
   user's key over what it would inflate to: refused by `cache.load` (signed.read_signed_npz reads the stored
   members in place and refuses a compressed one), against what reading it with `numpy.load` costs, which is
   what the cache did before the signature was checked.
2. A cluster chunk store whose chunk is a link to /dev/zero, and one whose chunk is a FIFO: refused by
   `LayerStore` (its walk names the file; nothing is opened).

Every measurement runs in a fresh child (this script with `--child CASE`), so its peak RSS is its own (read from
`os.wait4`); a child that runs over 10 minutes is killed and reported. Temporary folders only: neither the
user's cache nor their key is touched.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import numpy as np


def npy_header(shape: tuple, descr: str) -> bytes:
    text = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    text += b" " * (64 - (10 + len(text) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text


def forge(folder: Path, gib: float) -> Path:
    """Solve Yacht into `folder`'s cache, then replace its table by the inflating forgery (made streaming)."""
    from dicecup import Engine
    from dicecup.solver import cache

    v = Engine(entry_points=False).variant("yacht")
    cache.load_or_solve(v)
    path = cache.cache_path(v)
    with np.load(path) as data:
        arrays = {k: data[k].copy() for k in data.files}
    header = {k: x for k, x in json.loads(bytes(arrays.pop("header")).decode()).items() if k != "hmac"}
    count, step = int(gib * (1 << 27)), 1 << 17
    mac = hmac.new(cache.key_path().read_bytes(), json.dumps(header, sort_keys=True).encode(), hashlib.sha256)
    for name in ("values", "codes", "pmin", "dims"):
        a = arrays[name]
        dtype, shape = (np.dtype(np.float64), (count,)) if name == "values" else (a.dtype, a.shape)
        mac.update(f"\0{name}\0{dtype.str}\0{shape}\0".encode())
        for _ in range(count // step) if name == "values" else ():
            mac.update(bytes(8 * step))
        if name != "values":
            mac.update(a.tobytes())
    header["hmac"] = mac.hexdigest()
    head = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with open(path, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.npy", npy_header(head.shape, "|u1") + head.tobytes())
        with zf.open("values.npy", "w", force_zip64=True) as out:
            out.write(npy_header((count,), "<f8"))
            for _ in range(count // step):
                out.write(bytes(8 * step))
        for name in ("codes", "pmin", "dims"):
            zf.writestr(f"{name}.npy", npy_header(arrays[name].shape, arrays[name].dtype.str) + arrays[name].tobytes())
    return path


def child(case: str, folder: Path) -> str:
    """One measurement in this process: what happened, in words."""
    from dicecup import Engine
    from dicecup.solver import cache

    if case in ("dicecup", "numpy"):
        path = next((folder / "cache").glob("yacht-*.npz"))
        if case == "numpy":
            started = time.perf_counter()
            with np.load(io.BytesIO(path.read_bytes()), allow_pickle=False) as data:
                inflated = sum(data[k].nbytes for k in data.files)
            return (
                f"inflated {inflated:,} bytes in {time.perf_counter() - started:.1f} s, the signature not looked at yet"
            )
        v = Engine(entry_points=False).variant("yacht")
        started = time.perf_counter()
        try:
            cache.load(v)
        except cache.CacheInvalid as exc:
            return f"refused in {time.perf_counter() - started:.3f} s: {exc}"
        return "loaded (unexpected)"
    from dicecup.cluster import ClusterStoreError
    from dicecup.cluster.store import LayerStore

    started = time.perf_counter()
    try:
        LayerStore(folder / case, {"variant": "bench"}, 8, [3, 20, 9], 1, np.float64).read(1)
    except ClusterStoreError as exc:
        return f"refused in {time.perf_counter() - started:.3f} s: {str(exc).split('(', 1)[-1]}"
    return "read (unexpected)"


def make_store(folder: Path, spoil: str) -> None:
    from dicecup.cluster.store import LayerStore, chunk_path

    store = LayerStore(folder, {"variant": "bench"}, 8, [3, 20, 9], 1, np.float64)
    for k, n in enumerate([3, 20, 9]):
        store.write(k, np.arange(n, dtype=np.float64))
    chunk = Path(chunk_path(folder, 1, 1, 1))
    chunk.unlink()
    if spoil == "dev_zero":
        chunk.symlink_to("/dev/zero")
    else:
        os.mkfifo(chunk)


def measure(case: str, folder: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS in bytes, what happened) of one child."""
    env = dict(os.environ, DICECUP_CACHE_DIR=str(folder / "cache"), DICECUP_STATE_DIR=str(folder / "state"))
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", case, str(folder)], stdout=subprocess.PIPE, text=True, env=env
    )
    timer = threading.Timer(600, proc.kill)  # a hang is a row, not a stuck benchmark
    timer.start()
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # the child's own peak RSS (Popen would reap it without)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        out = f"failed (exit {proc.returncode}) {out}"
    return time.perf_counter() - started, usage.ru_maxrss * 1024, out.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0, help="GiB the forged table's values inflate to")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(child(args.child[0], Path(args.child[1])))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ.update(DICECUP_CACHE_DIR=str(folder / "cache"), DICECUP_STATE_DIR=str(folder / "state"))
        path = forge(folder, args.gib)
        make_store(folder / "dev_zero", "dev_zero")
        make_store(folder / "fifo", "fifo")
        print(f"forged table: {path.stat().st_size:,} bytes, values inflating to {args.gib:g} GiB")
        print(f"{'case':<34} {'seconds':>8} {'peak RSS MiB':>13}  what happened")
        for case, label in (
            ("numpy", "numpy.load (the cache before)"),
            ("dicecup", "cache.load"),
            ("dev_zero", "store, chunk -> /dev/zero"),
            ("fifo", "store, chunk is a FIFO"),
        ):
            seconds, rss, what = measure(case, folder)
            print(f"{label:<34} {seconds:>8.2f} {rss / 2**20:>13.0f}  {what[:110]}")


if __name__ == "__main__":
    main()
