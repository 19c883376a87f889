"""Builds the Cython core, generates the protobuf modules from proto/ and
compiles the message catalogs (solver/locale/*/LC_MESSAGES/*.po).

All are build steps (build_ext, and build_py below), run by every install,
regular or editable, so a fresh clone needs nothing but `pip install`;
generated files stay out of git.
"""
import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent


def generate_protos() -> None:
    """proto/cirulla/v1/*.proto -> cirulla.v1.*_pb2 (and *_pb2_grpc) beside them."""
    import grpc_tools
    from grpc_tools import protoc

    protos = sorted(str(p.relative_to(ROOT / "proto")) for p in (ROOT / "proto").rglob("*.proto"))
    include = str(Path(grpc_tools.__file__).parent / "_proto")
    args = ["protoc", "-Iproto", f"-I{include}", "--python_out=proto", "--pyi_out=proto",
            "--grpc_python_out=proto", *protos]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed on " + " ".join(protos))


def compile_catalogs() -> None:
    """solver/locale/<lang>/LC_MESSAGES/cirulla.po -> cirulla.mo beside it (what
    cirulla.solver.i18n reads); a translation whose placeholders differ from its
    message's fails the build."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    for po in sorted((ROOT / "solver" / "locale").glob("*/LC_MESSAGES/*.po")):
        with po.open("rb") as f:
            catalog = read_po(f)
        problems = [f"{po.relative_to(ROOT)}:{message.lineno}: {error}"
                    for message, errors in catalog.check() for error in errors]
        if problems:
            raise SystemExit("\n".join(problems))
        with po.with_suffix(".mo").open("wb") as f:
            write_mo(f, catalog)


PACKAGES = {"solver": "solver", "server": "server", "cli": "cli", "v1": "proto/cirulla/v1"}


def package_tree() -> str:
    """A cirulla/ tree of links to the folders the packages are installed from
    (solver/ is cirulla.solver, ...): Cython finds a module's .pxd by its dotted
    name (cirulla.solver._core) through it, and mypy the packages (pyproject's
    [tool.mypy] mypy_path), which an editable install hides behind an import hook."""
    tree = ROOT / "build" / "tree" / "cirulla"
    tree.mkdir(parents=True, exist_ok=True)
    for name, folder in PACKAGES.items():
        link = tree / name
        if not link.is_symlink():
            link.symlink_to(ROOT / folder, target_is_directory=True)
    return str(tree.parent)


class BuildPy(build_py):
    """build_py that first generates the protobuf modules and the compiled
    catalogs it is to collect."""

    def run(self) -> None:
        generate_protos()
        compile_catalogs()
        super().run()


class BuildExt(build_ext):
    """build_ext on every core unless told otherwise (-j N): the modules compile
    apart, and an install spends most of its time in the C compiler (two cores:
    19 s against 30)."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:
            self.parallel = True


MODULES = ("_core", "_worlds", "_equity", "_ismcts", "_paired", "_exact", "_search")

setup(
    cmdclass={"build_py": BuildPy, "build_ext": BuildExt},
    ext_modules=cythonize(
        [Extension(f"cirulla.solver.{name}", [f"solver/{name}.pyx"], extra_compile_args=["-O3"])
         for name in MODULES],
        compiler_directives={"language_level": "3"},
        include_path=[package_tree()],
        nthreads=min(os.cpu_count() or 1, len(MODULES)),
    ),
)
