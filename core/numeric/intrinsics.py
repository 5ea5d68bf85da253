"""Two LLVM instructions numba does not offer, for the simulator's kernels: a prefetch and an atomic add.

Imported only where numba runs (`compiled.NUMBA_KERNELS`): it imports numba and llvmlite.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir as llvm_ir
from numba.core import cgutils
from numba.core import types as nb_types
from numba.extending import intrinsic

__all__ = ["fetch_add", "prefetch"]


def _prefetch(typingctx: Any, arr: Any, offset: Any) -> Any:
    """Ask the processor to bring arr's element at flat position `offset` (C order) into its caches,
    without waiting for it (LLVM's prefetch: a read, keep in all levels): the loop goes on while the
    line comes. A hint only: nothing is read, so any offset is safe."""
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


prefetch: Any = intrinsic(_prefetch)


def _fetch_add(typingctx: Any, arr: Any, value: Any) -> Any:
    """arr[0] += value as one atomic step (LLVM atomicrmw): the value before. Threads of a parallel loop
    share work through it (a counter of blocks handed out) without a lock."""
    if not isinstance(arr, nb_types.Array) or arr.dtype != nb_types.int64:
        return None
    if not isinstance(value, nb_types.Integer):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        add = context.cast(builder, args[1], sig.args[1], nb_types.int64)
        return builder.atomic_rmw("add", ary.data, add, "monotonic")

    return nb_types.int64(arr, value), codegen


fetch_add: Any = intrinsic(_fetch_add)
