"""Two LLVM instructions numba does not offer, for the simulator's kernels: a prefetch and an atomic add.

`prefetch` and `fetch_add` here are their plain Python meaning (the kernels' source names them);
`compiled_names` gives the numba intrinsics a kernel compiled by numba calls instead (it imports numba and
llvmlite, only then).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from . import compiled

__all__ = ["compiled_names", "fetch_add", "prefetch"]


def prefetch(arr: np.ndarray, offset: int) -> None:
    """A hint to the processor (see `_prefetch`): nothing in Python."""


def fetch_add(arr: np.ndarray, value: int) -> int:
    """arr[0] += value; the value before (atomic when compiled, `_fetch_add`)."""
    before = int(arr[0])
    arr[0] += value
    return before


def _prefetch(typingctx: Any, arr: Any, offset: Any) -> Any:  # numba's typing hook
    """Ask the processor to bring arr's element at flat position `offset` (C order) into its caches,
    without waiting for it (LLVM's prefetch: a read, keep in all levels): the loop goes on while the
    line comes. A hint only: nothing is read, so any offset is safe."""
    from llvmlite import ir as llvm_ir
    from numba.core import cgutils
    from numba.core import types as nb_types

    if not isinstance(arr, nb_types.Array) or not isinstance(offset, nb_types.Integer):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        at = builder.gep(ary.data, [context.cast(builder, args[1], sig.args[1], nb_types.intp)])
        byte_ptr = llvm_ir.IntType(8).as_pointer()
        i32 = llvm_ir.IntType(32)
        fnty = llvm_ir.FunctionType(llvm_ir.VoidType(), [byte_ptr, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(at, byte_ptr), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return nb_types.void(arr, offset), codegen


def _fetch_add(typingctx: Any, arr: Any, value: Any) -> Any:
    """arr[0] += value as one atomic step (LLVM atomicrmw): the value before. Threads of a parallel loop
    share work through it (a counter of blocks handed out) without a lock."""
    from numba.core import types as nb_types

    if not isinstance(arr, nb_types.Array) or arr.dtype != nb_types.int64:
        return None
    if not isinstance(value, nb_types.Integer):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        add = context.cast(builder, args[1], sig.args[1], nb_types.int64)
        return builder.atomic_rmw("add", ary.data, add, "monotonic")

    return nb_types.int64(arr, value), codegen


@cache
def compiled_names() -> Mapping[str, Any]:
    """`prefetch` and `fetch_add` as numba intrinsics, for `compiled.jit_namespace`'s `calls`."""
    compiled.numba_module()  # configured first
    intrinsic = importlib.import_module("numba.extending").intrinsic
    return {"prefetch": intrinsic(_prefetch), "fetch_add": intrinsic(_fetch_add)}
