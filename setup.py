"""Builds the Cython core and generates the protobuf modules from proto/.

Both are build steps (build_ext, and build_py below), run by every install,
regular or editable, so a fresh clone needs nothing but `pip install`;
generated files stay out of git.
"""
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
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
    """build_py that first generates the protobuf modules it is to collect."""

    def run(self) -> None:
        generate_protos()
        super().run()


setup(
    cmdclass={"build_py": BuildPy},
    ext_modules=cythonize(
        [Extension(f"cirulla.solver.{name}", [f"solver/{name}.pyx"], extra_compile_args=["-O3"])
         for name in ("_core", "_worlds", "_equity", "_ismcts", "_paired", "_exact", "_search")],
        compiler_directives={"language_level": "3"},
        include_path=[package_tree()],
    ),
)
