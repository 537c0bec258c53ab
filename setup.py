"""Build the C kernels (src_c/) and their Cython layer (defrag/_core.pyx).

OpenMP is used when the compiler accepts it (checked by compiling and linking a
small program) and left out otherwise: the kernels give identical results
either way. No -march=native: wheels must run on any CPU of the architecture;
hardware popcount and the AVX2 / AVX-512 kernels are chosen at run time. No
contraction of a * b + c into FMA (-ffp-contract=off; clang would otherwise
contract in the FMA builds): the AVX2 / AVX-512 builds of defrag's kernels make
the same floating-point operations as the baseline build. (The fit's other exp
and log calls come from the C library, which may pick an FMA variant of its own
on some CPUs.)
"""
import os
import shutil
import sys
import tempfile
from glob import glob

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

OPENMP_PROBE = r"""
#include <omp.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    return n > 0 ? 0 : 1;
}
"""


def openmp_flags(compiler):
    """(compile flags, link flags) enabling OpenMP, or None when unavailable."""
    if os.environ.get("DEFRAG_NO_OPENMP"):
        return None
    if compiler.compiler_type == "msvc":
        candidates = [(["/openmp"], [])]
    elif sys.platform == "darwin":
        candidates = [(["-Xpreprocessor", "-fopenmp"], ["-lomp"]), (["-fopenmp"], ["-fopenmp"])]
    else:
        candidates = [(["-fopenmp"], ["-fopenmp"])]
    tmp = tempfile.mkdtemp()
    try:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write(OPENMP_PROBE)
        for cflags, lflags in candidates:
            try:
                objs = compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
                compiler.link_executable(objs, "probe", output_dir=tmp, extra_postargs=lflags)
                return cflags, lflags
            except Exception:  # the compiler refused these flags: try the next
                continue
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class BuildExt(build_ext):
    def build_extensions(self):
        flags = openmp_flags(self.compiler)
        for ext in self.extensions:
            if self.compiler.compiler_type != "msvc":
                ext.extra_compile_args += ["-O3", "-std=c99", "-ffp-contract=off"]
            if flags:
                ext.extra_compile_args += flags[0]
                ext.extra_link_args += flags[1]
            elif self.compiler.compiler_type != "msvc":
                ext.extra_compile_args += ["-Wno-unknown-pragmas"]
        print(f"defrag: building with OpenMP: {'yes' if flags else 'no'}")
        super().build_extensions()

    def run(self):
        super().run()
        # `python -m defrag ...` run from the checkout imports ./defrag, not the
        # installed copy (the current directory comes first on sys.path). pip builds
        # in the source tree, so a copy of the freshly built extension next to the
        # sources keeps that working after a plain `pip install .`.
        if self.inplace:
            return
        here = os.path.dirname(os.path.abspath(__file__))
        for ext in self.extensions:
            built = self.get_ext_fullpath(ext.name)
            target = os.path.join(here, *ext.name.split(".")[:-1], os.path.basename(built))
            if os.path.isdir(os.path.dirname(target)) and os.access(os.path.dirname(target), os.W_OK):
                shutil.copyfile(built, target)


extensions = [
    Extension(
        "defrag._core",
        sources=["defrag/_core.pyx"] + sorted(glob("src_c/*.c")),
        include_dirs=["src_c", np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
]

setup(
    ext_modules=cythonize(extensions, compiler_directives={"language_level": "3"}),
    cmdclass={"build_ext": BuildExt},
)
