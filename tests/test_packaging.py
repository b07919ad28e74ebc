"""The environment files agree, and hepkg imports with numpy alone."""
import ctypes
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _pyproject():
    """pyproject.toml's dependencies and extras, read with setuptools' own TOML reader."""
    from setuptools.config.pyprojecttoml import read_configuration

    return read_configuration(ROOT / "pyproject.toml")["project"]


def _name(requirement: str) -> str:
    return re.split(r"[=<>!~\[ ]", requirement, maxsplit=1)[0].lower()


def test_make_setup_is_the_route_and_environment_yml_runs_it():
    """environment.yml gives Python 3.10 and nothing else, and says to run make setup with it: the environment is
    make setup's (its pins, its Pyfhel build), never a second recipe that drifts from it."""
    text = (ROOT / "environment.yml").read_text()
    body = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert body == ["name: hepkg", "channels:", "- conda-forge", "dependencies:", "- python=3.10"], body
    assert 'make setup PYTHON="$CONDA_PREFIX/bin/python3.10"' in text
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert "sys.version_info[:2] == (3, 10)" in setup and '"$PYTHON"' in setup and '-e ".[all]"' in setup
    assert "scripts/build_pyfhel.py" in setup


def test_cuda_packages_only_in_gpu_extras_and_the_pins_cover_every_dependency():
    project = _pyproject()
    extras = project["optional-dependencies"]
    cuda = {e: [r for r in reqs if _name(r).startswith(("nvidia-", "cupy"))] for e, reqs in extras.items()}
    assert {e for e, found in cuda.items() if found} == {"gpu", "cuda-compile"}
    assert all(re.fullmatch(r"[A-Za-z][\w.-]*==[\w.]+", r) for r in extras["all"]), extras["all"]
    pinned = {_name(r) for r in extras["all"]}
    assert {_name(r) for r in project["dependencies"]} <= pinned, "a dependency make setup does not pin"
    assert {"psutil", "papermill", "tabulate", "pandas"} <= {_name(r) for r in project["dependencies"]}
    assert project["license"] == "Apache-2.0" and (ROOT / "LICENSE").read_text().count("Apache License") >= 2
    assert project["authors"]


def test_hepkg_imports_without_any_he_library():
    code = ("import sys; [sys.modules.__setitem__(m, None) for m in ('Pyfhel', 'openfhe', 'tenseal', 'pandas', "
            "'scipy')]; import importlib.util as u; real = u.find_spec; "
            "u.find_spec = lambda n, *a: None if n in ('Pyfhel', 'openfhe', 'tenseal') else real(n, *a); "
            "import hepkg as hk; a = hk.availability(); assert a == {'sim': True, 'pyfhel': False, "
            "'openfhe': False, 'tenseal': False, 'rns': True}, a; ctx = hk.context('sim'); "
            "assert list(ctx.decrypt(ctx.encrypt([1, 2]), 2)) == [1, 2]; "
            "ctx = hk.context('rns', 'toy-ckks-1024', insecure=True); "  # hepkg's own CKKS: numpy alone
            "assert abs(ctx.decrypt(ctx.encrypt([0.5, 1.0]), 2) - [0.5, 1.0]).max() < ctx.params.ckks_tolerance")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_pyfhel_keeps_each_copy_of_seal_private():
    # Pyfhel links static SEAL into every library; exported copies interpose, and their shared
    # global memory pool is destroyed twice at exit (scripts/build_pyfhel.py explains the fix)
    spec = importlib.util.find_spec("Pyfhel")
    if spec is None:
        pytest.skip("Pyfhel not installed")
    libs = sorted(pathlib.Path(spec.origin).parent.glob("*.so"))
    assert libs
    for lib in libs:
        handle = ctypes.CDLL(str(lib))
        assert not hasattr(handle, "_ZN4seal4util16global_variables18global_memory_poolE"), f"{lib.name} exports SEAL"


def _module_imports() -> dict[str, set[str]]:
    """hepkg module -> the hepkg modules it imports anywhere in its body (a package's ``__init__``
    re-exports are followed to the submodule named, not counted as an edge to the package)."""
    import ast

    pkg = ROOT / "hepkg"
    names = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
             for p in pkg.rglob("*.py")}
    graph = {}
    for name, path in names.items():
        here = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here.split(".")[:len(here.split(".")) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names]
            else:
                continue
            found |= {t for t in targets if t in names and path.name != "__init__.py"
                      and names[t].name != "__init__.py"}
        graph[name] = found - {name}
    return graph


def test_no_import_circles_and_rns_stays_below_he():
    graph = _module_imports()
    circles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                circles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not circles, circles
    assert not [(m, t) for m, ts in graph.items() if m.startswith("hepkg.rns") for t in ts if t.startswith("hepkg.he")]
    assert "hepkg.security" in graph["hepkg.rns.params"] and "hepkg.security" in graph["hepkg.he.params"]


def test_notebooks_open_in_jupyterlab_unmodified():
    """JupyterLab rewrites a notebook's kernelspec and language_info to what the kernel reports (and marks it
    modified) when they differ: the committed notebooks carry exactly that, and no outputs."""
    import json

    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        data = json.loads(nb.read_text())
        meta = data["metadata"]
        assert meta["kernelspec"] == {"display_name": spec.display_name, "language": spec.language,
                                      "name": "python3"}, nb.name
        info = meta["language_info"]
        assert info["name"] == "python" and info["pygments_lexer"] == "ipython3", nb.name
        assert info["version"].rsplit(".", 1)[0] == ".".join(map(str, sys.version_info[:2])), nb.name
        assert not [c for c in data["cells"] if c.get("outputs") or c.get("execution_count")], nb.name


def test_citation_lists_the_four_papers_and_this_artifact():
    import yaml

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software" and cff["license"] == "Apache-2.0"
    assert cff["version"] == _pyproject()["version"] and cff["authors"]
    notes = " ".join(r["notes"] for r in cff["references"])
    assert len(cff["references"]) == 4 and all(r["title"] and r["authors"] for r in cff["references"])
    assert all(f"section {s}" in notes or f"sections {s}" in notes for s in ("spmv", "gemm", "facesearch", "omr"))


def test_a_wheel_installs_a_library_that_writes_where_its_user_runs_it(tmp_path):
    """Outside the repository: results under the current directory, the notebooks asked for by name, the runner's
    imports declared, the license shipped."""
    import shutil
    import zipfile

    src = tmp_path / "src"  # a copy: building in place would leave build/ and an egg-info in the checkout
    shutil.copytree(ROOT / "hepkg", src / "hepkg", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path / "dist"), str(src)], check=True, cwd=tmp_path, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("hepkg-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        zf.extractall(tmp_path / "site")
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names) and not any("notebooks/" in n for n in names)
    requires = {_name(line.split(":", 1)[1].strip()) for line in meta.splitlines() if line.startswith("Requires-Dist:")
                and "extra ==" not in line}
    assert {"psutil", "papermill", "pandas", "tabulate", "ipykernel"} <= requires
    code = ("import pathlib, hepkg.paths as p, hepkg.reproduce as r\n"
            "assert not p.CHECKOUT and p.committed() == pathlib.Path.cwd() / 'artifacts', p.committed()\n"
            "assert p.results('quick') == pathlib.Path.cwd() / 'artifacts' / '_quick'\n"
            "try:\n    r.notebooks()\nexcept SystemExit as exc:\n    print(exc)\n")
    user = tmp_path / "user"
    user.mkdir()
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("PYTHONPATH", "HEPKG_ARTIFACTS")}
    out = subprocess.run([sys.executable, "-c", code], cwd=user, capture_output=True, text=True,
                         env={**env, "PYTHONPATH": str(tmp_path / "site")})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "the notebooks are not part of the installed package" in out.stdout and "--notebooks DIR" in out.stdout
