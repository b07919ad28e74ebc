"""Cached builds of foreign C++ from checkouts (hepkg.bench.builds), on a small CMake library and program."""
import json
import shutil
import subprocess
import sys

import pytest

from hepkg.bench import builds

pytestmark = pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("c++")), reason="needs cmake and c++")

LIB = """cmake_minimum_required(VERSION 3.13)
project(fakefhe CXX)
add_executable(fakefhe main.cpp)
target_include_directories(fakefhe PRIVATE third-party/cereal/include)
install(TARGETS fakefhe DESTINATION bin)
install(FILES third-party/cereal/include/cereal.h DESTINATION include)
"""
PROGRAM = """cmake_minimum_required(VERSION 3.13)
project(prog CXX)
find_path(CEREAL cereal.h REQUIRED)
add_executable(test main.cpp)
target_include_directories(test PRIVATE ${CEREAL})
"""
MAIN = '#include "cereal.h"\n#include <cstdio>\nint main() { std::printf("%d\\n", ANSWER); }\n'


def _git(path, *args):
    subprocess.run(["git", "-C", str(path), "-c", "protocol.file.allow=always", "-c", "user.name=t",
                    "-c", "user.email=t@t", *args], check=True, capture_output=True)


def _repo(path, files: dict):
    path.mkdir()
    _git(path, "init", "-q")
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "c")
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HEPKG_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "authors"


@pytest.fixture
def library(tmp_path):
    cereal = _repo(tmp_path / "cereal", {"include/cereal.h": "#define ANSWER 42\n"})
    lib = _repo(tmp_path / "fakefhe", {"CMakeLists.txt": LIB, "main.cpp": MAIN})
    _git(lib, "submodule", "add", "-q", str(cereal), "third-party/cereal")
    _git(lib, "commit", "-qm", "submodule")
    _git(lib, "tag", "v1")
    return lib


def test_a_library_is_built_from_its_commit_with_its_submodule_and_installed(cache, library):
    (library / "main.cpp").write_text("not C++: the checkout's own files are never built")
    b = builds.openfhe(library, "v1", quiet=True)
    assert b.root.parent == cache and b.root.name.startswith("openfhe-" + builds.commit_of(library, "v1")[:12])
    assert subprocess.run([b.prefix / "bin" / "fakefhe"], capture_output=True, text=True).stdout == "42\n"
    record = json.loads((b.root / "build.json").read_text())
    assert record["options"]["BUILD_UNITTESTS"] == "OFF" and record["commit"] == builds.commit_of(library, "v1")
    assert not [p for p in cache.iterdir() if ".partial-" in p.name or p.suffix == ".log"]


def test_a_finished_build_is_reused_and_another_option_is_another_build(cache, library, monkeypatch):
    first = builds.openfhe(library, "v1", quiet=True)
    with monkeypatch.context() as m:
        m.setattr(builds, "_run", lambda *a, **k: pytest.fail("rebuilt a cached build"))
        assert builds.openfhe(library, "v1", quiet=True).root == first.root
    other = builds.openfhe(library, "v1", options=dict(NATIVE_SIZE="128"), quiet=True)
    assert other.root != first.root and other.record["options"]["NATIVE_SIZE"] == "128"


def test_a_program_is_built_against_a_library_on_the_prefix_path(cache, library, tmp_path):
    lib = builds.openfhe(library, "v1", quiet=True)
    prog = _repo(tmp_path / "prog", {"CMakeLists.txt": PROGRAM, "main.cpp": MAIN})
    b = builds.program("prog", prog, deps=[lib], quiet=True)
    assert subprocess.run([b.root / "build" / "test"], capture_output=True, text=True).stdout == "42\n"
    assert b.record["deps"][0]["root"] == str(lib.root)


def test_a_missing_submodule_checkout_says_how_to_get_it(cache, library):
    shutil.rmtree(library / "third-party" / "cereal")
    (library / "third-party" / "cereal").mkdir()
    with pytest.raises(builds.BuildError, match="submodule update --init third-party/cereal"):
        builds.openfhe(library, "v1", quiet=True)
    assert not list(cache.glob("*.partial-*"))


def test_a_failed_build_leaves_its_log_and_nothing_else(cache, tmp_path):
    broken = _repo(tmp_path / "broken", {"CMakeLists.txt": PROGRAM.replace("find_path(CEREAL cereal.h REQUIRED)\n", ""),
                                         "main.cpp": "int main() { return undefined_name; }\n"})
    with pytest.raises(builds.BuildError, match=r"prog build failed(.|\n)*undefined_name"):
        builds.program("prog", broken, quiet=True)
    assert [p.suffix for p in cache.iterdir() if not p.name.endswith(".lock")] == [".log"]


def test_a_ref_the_checkout_lacks_is_named(cache, library):
    with pytest.raises(builds.BuildError, match="v9"):
        builds.openfhe(library, "v9", quiet=True)


def test_paths_limit_the_sources_to_those_named(cache, tmp_path):
    guard = 'if(EXISTS ${CMAKE_SOURCE_DIR}/datasets)\n  message(FATAL_ERROR "datasets exported")\nendif()\n'
    prog = _repo(tmp_path / "prog", {"CMakeLists.txt": PROGRAM.replace("find_path(CEREAL cereal.h REQUIRED)\n", guard)
                                     .replace("${CEREAL}", "include"), "main.cpp": MAIN,
                                     "include/cereal.h": "#define ANSWER 7\n", "datasets/big.dat": "1 2 3\n"})
    with pytest.raises(builds.BuildError, match="datasets exported"):
        builds.program("prog", prog, quiet=True)
    b = builds.program("prog", prog, paths=("CMakeLists.txt", "main.cpp", "include"), quiet=True)
    assert subprocess.run([b.root / "build" / "test"], capture_output=True, text=True).stdout == "7\n"


#: A stand-in for openfhe-python's install: the module and its __init__.py straight into the prefix.
BINDINGS = """cmake_minimum_required(VERSION 3.13)
project(bindings NONE)
if(NOT Python_EXECUTABLE OR NOT pybind11_DIR)
  message(FATAL_ERROR "Python_EXECUTABLE and pybind11_DIR not given")
endif()
install(FILES openfhe.cpython-310-x86_64-linux-gnu.so __init__.py DESTINATION ${CMAKE_INSTALL_PREFIX})
"""


@pytest.fixture
def pybind11(monkeypatch, tmp_path):
    fake = type(sys)("pybind11")
    fake.get_cmake_dir = lambda: str(tmp_path / "pybind11-cmake")
    monkeypatch.setitem(sys.modules, "pybind11", fake)


def test_openfhe_python_is_packaged_beside_the_openfhe_build_it_links(cache, library, tmp_path, pybind11):
    lib = builds.openfhe(library, "v1", quiet=True)
    src = _repo(tmp_path / "bindings", {"CMakeLists.txt": BINDINGS, "__init__.py": "from .openfhe import *\n",
                                        "openfhe.cpython-310-x86_64-linux-gnu.so": "module"})
    b = builds.openfhe_python(src, "HEAD", lib, quiet=True)
    pkg = b.prefix / "openfhe"
    assert sorted(p.name for p in pkg.iterdir()) == ["__init__.py", "lib", "openfhe.cpython-310-x86_64-linux-gnu.so"]
    assert (pkg / "lib").resolve() == (lib.prefix / "lib").resolve() and list(b.prefix.iterdir()) == [pkg]
    assert b.record["options"]["Python_EXECUTABLE"] == sys.executable and b.record["deps"][0]["root"] == str(lib.root)


def test_openfhe_python_that_installs_no_module_is_a_failed_build(cache, library, tmp_path, pybind11):
    lib = builds.openfhe(library, "v1", quiet=True)
    no_module = BINDINGS.replace(" openfhe.cpython-310-x86_64-linux-gnu.so", "")
    src = _repo(tmp_path / "bindings", {"CMakeLists.txt": no_module, "__init__.py": ""})
    with pytest.raises(builds.BuildError, match="installed no openfhe module"):
        builds.openfhe_python(src, "HEAD", lib, quiet=True)
    assert not [p for p in cache.iterdir() if p.name.startswith("openfhe-python") and p.suffix not in (".log", ".lock")]


def test_openfhe_python_without_pybind11_says_how_to_get_it(cache, library, monkeypatch):
    monkeypatch.setitem(sys.modules, "pybind11", None)
    with pytest.raises(builds.BuildError, match="pip install pybind11"):
        builds.openfhe_python(library, "v1", None, quiet=True)
