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


def pxd_include_dir() -> str:
    """Cython finds a module's .pxd by its dotted name (cirulla.solver._core);
    solver/ is installed as cirulla.solver, so point a cirulla/ tree at it."""
    tree = ROOT / "build" / "pxd" / "cirulla"
    tree.mkdir(parents=True, exist_ok=True)
    link = tree / "solver"
    if not link.exists():
        link.symlink_to(ROOT / "solver", target_is_directory=True)
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
        include_path=[pxd_include_dir()],
    ),
)
