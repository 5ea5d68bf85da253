"""Run a command with its stderr on a pseudo-terminal (stdout piped), timing every chunk stderr writes.

What the progress tests measure: the longest silence on stderr before the command's result (its first
output on stdout, or its exit), as a person at a terminal would feel it.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from dataclasses import dataclass, field


@dataclass
class Run:
    """A finished command: its exit status, stdout, stderr's text, and when each stderr chunk came (seconds
    from the start), and when stdout first wrote (None: never)."""

    code: int
    stdout: bytes
    stderr: bytes
    chunks: list[float] = field(default_factory=list)
    result_at: float | None = None
    ended_at: float = 0.0

    def longest_silence(self) -> float:
        """The longest gap between stderr chunks, from the first to the result (or the exit): how long the
        command stays silent once it has begun (the interpreter's start-up is `first_sign`)."""
        end = self.result_at if self.result_at is not None else self.ended_at
        marks = [t for t in self.chunks if t <= end] + [end]
        return max((b - a for a, b in zip(marks, marks[1:], strict=False)), default=0.0)

    def first_sign(self) -> float:
        """When stderr first wrote (or the result came)."""
        end = self.result_at if self.result_at is not None else self.ended_at
        return min([end, *self.chunks])


def run_on_terminal(args: list[str], env: dict[str, str], timeout: float = 900.0) -> Run:
    """Run `args` with stderr a terminal (80x24) and stdout a pipe; collect both and time stderr's chunks."""
    master, slave = pty.openpty()
    start = time.monotonic()
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    assert proc.stdout is not None
    out_fd = proc.stdout.fileno()
    err, out = bytearray(), bytearray()
    run = Run(0, b"", b"")
    open_fds = {master, out_fd}
    while open_fds:
        if time.monotonic() - start > timeout:
            proc.kill()
            raise TimeoutError(f"{args} ran past {timeout} s")
        ready, _, _ = select.select(list(open_fds), [], [], 0.05)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # the terminal's other end closed (EIO)
                data = b""
            if not data:
                open_fds.discard(fd)
                continue
            now = time.monotonic() - start
            if fd == master:
                err += data
                run.chunks.append(now)
            else:
                out += data
                if run.result_at is None:
                    run.result_at = now
        if proc.poll() is not None and not ready:
            break
    run.code = proc.wait()
    run.ended_at = time.monotonic() - start
    os.close(master)
    run.stdout, run.stderr = bytes(out), bytes(err)
    return run
