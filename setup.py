"""Build the C kernels (src_c/) and their Cython modules (defrag/**/_*.pyx).

Each Cython module is one extension, compiled with the C files of the kernels it
calls (KERNELS below); it lies in the room of the package it serves (defrag/fit/_fit.pyx
beside the fit stages, defrag/rules/_rules_eval.pyx beside the rules,
defrag/search/_list_search.pyx beside the searches); the C declarations are one contract,
defrag/_cdefs.pxd.

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
        # One after another: the extensions share C files, whose objects land at the same
        # paths under build_temp; parallel builds (-j) would write them concurrently.
        self.parallel = None
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


# The C files each Cython module needs: its kernels and what they call.
FIT_KERNELS = ["dfg_model.c", "dfg_fit.c", "dfg_joint.c", "dfg_loglik.c", "dfg_log.c",
               "dfg_estep.c", "dfg_mstep.c", "dfg_assign.c", "dfg_cpu.c"]
KERNELS = {
    "defrag.utils._common": ["dfg_config.c", "dfg_cpu.c"],
    "defrag.splits._encoding": ["dfg_ranks.c", "dfg_bits.c", "dfg_sets.c"],
    "defrag.fit._fit": FIT_KERNELS,
    "defrag.fit._gate": FIT_KERNELS + ["dfg_gate.c", "dfg_emkl.c"],
    "defrag.rules._rules_eval": ["dfg_bits.c", "dfg_prune.c", "dfg_rules.c", "dfg_sets.c", "dfg_cpu.c",
                                 "dfg_condition_stats.c", "dfg_cover.c", "dfg_list_loss.c", "dfg_list_prune.c",
                                 "dfg_list_order.c"],
    "defrag.rules._route": ["dfg_route.c", "dfg_rules.c", "dfg_sets.c", "dfg_cpu.c"],
    "defrag.search._list_search": ["dfg_list_search.c", "dfg_list_path.c", "dfg_box_refine.c", "dfg_cpu.c"],
    "defrag.search._tree_search": ["dfg_tree_path.c", "dfg_box_refine.c", "dfg_list_loss.c", "dfg_cpu.c"],
    "defrag.search._additive_search": ["dfg_additive_path.c", "dfg_list_search.c", "dfg_box_refine.c",
                                       "dfg_list_loss.c", "dfg_cpu.c"],
    "defrag.prototypes._proximity": ["dfg_proximity.c", "dfg_cpu.c"],
    "defrag.sources._forest_sum": ["dfg_forest_sum.c"],
    "defrag.proxy._proxy_split": ["dfg_proxy_split.c"],
    "defrag._testing": FIT_KERNELS + ["dfg_proxy_split.c"],
}

unused = {os.path.basename(p) for p in glob("src_c/*.c")} - {c for cs in KERNELS.values() for c in cs}
if unused:
    raise RuntimeError(f"setup.py: no module is built with {sorted(unused)}: add them to KERNELS")

extensions = [
    Extension(
        module,
        sources=[module.replace(".", "/") + ".pyx"] + [f"src_c/{c}" for c in sources],
        include_dirs=["src_c"],
    )
    for module, sources in KERNELS.items()
]

setup(
    ext_modules=cythonize(extensions, compiler_directives={"language_level": "3"}),
    cmdclass={"build_ext": BuildExt},
)
