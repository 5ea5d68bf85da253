"""Builds the solver's kernels ahead of time (`dicecup.numeric._kernels`); the rest is in pyproject.toml.

The build compiles them with numba's ahead-of-time compiler (`core/numeric/aot.py`),
so that solving and advising import neither numba nor LLVM and compile nothing at
run time. Where that fails (no C compiler, say), or $DICECUP_BUILD_KERNELS is 0,
the install goes on without the module and numba compiles the kernels on first use.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def _kernel_modules() -> types.ModuleType:
    """`dicecup.numeric.aot` loaded from the source tree without running the engine's `__init__` files
    (the build environment holds numpy and numba, not the engine's other dependencies)."""
    for name, folder in (("dicecup", HERE / "core"), ("dicecup.numeric", HERE / "core" / "numeric")):
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules[name] = package
    os.environ["DICECUP_KERNELS"] = "jit"  # compile from the sources, whatever is installed already
    return importlib.import_module("dicecup.numeric.aot")


class BuildKernels(build_ext):
    """Build `dicecup.numeric._kernels` with numba instead of a C compiler run on sources."""

    def build_extension(self, ext: Extension) -> None:
        target = Path(self.get_ext_fullpath(ext.name))
        if os.environ.get("DICECUP_BUILD_KERNELS", "1") == "0":
            return
        try:
            built = _kernel_modules().build(target.parent)
        except Exception as exc:  # any failure: numba compiles at run time instead
            print(
                f"dicecup: kernels not built ahead of time ({type(exc).__name__}: {exc}); numba will compile "
                "them on first use",
                file=sys.stderr,
            )
            return
        if built != target:
            built.replace(target)

    def copy_extensions_to_source(self) -> None:
        """An editable install copies the module into the source tree: the CPU flags go with it."""
        super().copy_extensions_to_source()
        package_dir = Path(self.get_finalized_command("build_py").get_package_dir("dicecup.numeric"))
        flags = Path(self.build_lib, "dicecup", "numeric", "_kernels_cpu.py")
        if flags.exists():
            self.copy_file(str(flags), str(package_dir / flags.name), level=self.verbose)

    def get_outputs(self) -> list[str]:
        """The module and the CPU flags written beside it (an editable install lists them too)."""
        outputs = super().get_outputs()
        return outputs + [str(Path(p).with_name("_kernels_cpu.py")) for p in outputs]


setup(
    ext_modules=[Extension("dicecup.numeric._kernels", sources=[], optional=True)],
    cmdclass={"build_ext": BuildKernels},
)
