"""Cached builds of foreign C++ from checkouts (hepkg.bench.builds), on a small CMake library and program."""
import json
import os
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


#: A stand-in for hepkg's encoder: installs the path of the bindings it was built for.
ENCODER = """cmake_minimum_required(VERSION 3.13)
project(encoder NONE)
file(WRITE ${CMAKE_BINARY_DIR}/built_for.txt "${HEPKG_OPENFHE_MODULE}")
install(FILES ${CMAKE_BINARY_DIR}/built_for.txt DESTINATION ${CMAKE_INSTALL_PREFIX})
"""


def test_hepkgs_encoder_is_built_from_its_folder_for_one_openfhe_python_build(cache, library, tmp_path, pybind11,
                                                                            monkeypatch):
    lib = builds.openfhe(library, "v1", quiet=True)
    src = _repo(tmp_path / "bindings", {"CMakeLists.txt": BINDINGS, "__init__.py": "from .openfhe import *\n",
                                        "openfhe.cpython-310-x86_64-linux-gnu.so": "module"})
    module = builds.openfhe_python(src, "HEAD", lib, quiet=True)
    native = tmp_path / "native"
    native.mkdir()
    (native / "CMakeLists.txt").write_text(ENCODER)
    monkeypatch.setattr(builds, "NATIVE", native)
    b = builds.openfhe_encode(module, quiet=True)
    binding = module.prefix / "openfhe" / "openfhe.cpython-310-x86_64-linux-gnu.so"
    assert (b.prefix / "built_for.txt").read_text() == str(binding.resolve())
    assert (b.prefix / "openfhe").resolve() == (module.prefix / "openfhe").resolve()
    assert b.record["commit"] == builds._tree_id(native) and b.record["deps"][0]["root"] == str(module.root)
    with monkeypatch.context() as m:
        m.setattr(builds, "_run", lambda *a, **k: pytest.fail("rebuilt a cached build"))
        assert builds.openfhe_encode(module, quiet=True).root == b.root
    (native / "CMakeLists.txt").write_text(ENCODER + "# another source: another build\n")
    assert builds.openfhe_encode(module, quiet=True).root != b.root


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


@pytest.fixture
def fake_hexl(tmp_path):
    """A finished build standing in for HEXL: a library file and a CMake package defining ``HEXL::hexl``."""
    root = tmp_path / "hexl-build"
    (root / "install" / "lib" / "cmake" / "HEXL").mkdir(parents=True)
    (root / "install" / "include").mkdir()
    (root / "install" / "lib" / "libhexl.so.1").write_text("not a library")
    (root / "install" / "lib" / "cmake" / "HEXL" / "HEXLConfig.cmake").write_text(
        f"add_library(HEXL::hexl INTERFACE IMPORTED)\nset_target_properties(HEXL::hexl PROPERTIES "
        f"INTERFACE_INCLUDE_DIRECTORIES {root / 'install' / 'include'})\n")
    (root / "build.json").write_text(json.dumps(dict(name="hexl", commit="0" * 40, options={}, deps=[])))
    return builds.Build(root)


def _openfhe_hexl(tmp_path, files: dict):
    """A stand-in for openfhe-hexl tagged v1.0 (its release for OpenFHE v1): ``files`` and the other paths it lays
    over OpenFHE's tree."""
    rest = {f"{p}/x" if "." not in p else p: "" for p in builds.OPENFHE_HEXL_PATHS if p not in files}
    overlay = _repo(tmp_path / "openfhe-hexl", {**rest, **files})
    _git(overlay, "tag", "v1.0")
    return overlay


def test_openfhe_with_hexl_lays_openfhe_hexl_over_the_tree_and_links_hexl(cache, library, tmp_path, fake_hexl,
                                                                          monkeypatch):
    plain = builds.openfhe(library, "v1", quiet=True)
    overlay = _openfhe_hexl(tmp_path, {"CMakeLists.txt": LIB.replace("main.cpp", "src/main.cpp"),
                                       "src/main.cpp": MAIN.replace("ANSWER", "ANSWER + 1")})
    monkeypatch.setenv("HEPKG_OPENFHE_HEXL_SRC", str(overlay))
    b = builds.openfhe(library, "v1", hexl=fake_hexl, quiet=True)
    assert b.root != plain.root and b.root.name.startswith("openfhe-hexl-")
    assert subprocess.run([b.prefix / "bin" / "fakefhe"], capture_output=True, text=True).stdout == "43\n"
    assert (b.prefix / "lib" / "libhexl.so.1").resolve() == fake_hexl.prefix / "lib" / "libhexl.so.1"
    assert b.record["options"]["WITH_INTEL_HEXL"] == "ON" and b.record["options"]["WITH_NATIVEOPT"] == "ON"
    assert b.record["overlay"]["commit"] == builds.commit_of(overlay, "v1.0") and b.record["deps"][0]["name"] == "hexl"
    monkeypatch.setenv("HEPKG_OPENFHE_HEXL_SRC", str(library))   # a checkout without that release
    with pytest.raises(builds.BuildError, match="v1.0"):
        builds.openfhe(library, "v1", hexl=fake_hexl, options=dict(NATIVE_SIZE="128"), quiet=True)


def test_openfhe_python_finds_hexl_for_an_openfhe_built_with_it(cache, library, tmp_path, fake_hexl, pybind11,
                                                                monkeypatch):
    declares = LIB + ('file(WRITE ${CMAKE_BINARY_DIR}/v.cmake "set(PACKAGE_VERSION \\"1.0.9\\")")\n'
                      'install(FILES ${CMAKE_BINARY_DIR}/v.cmake DESTINATION lib/OpenFHE\n'
                      '        RENAME OpenFHEConfigVersion.cmake)\n')
    monkeypatch.setenv("HEPKG_OPENFHE_HEXL_SRC", str(_openfhe_hexl(tmp_path, {"CMakeLists.txt": declares})))
    lib = builds.openfhe(library, "v1", hexl=fake_hexl, quiet=True)
    needs = BINDINGS.replace("project(bindings NONE)\n", "project(bindings NONE)\nget_target_property(inc HEXL::hexl "
                             "INTERFACE_INCLUDE_DIRECTORIES)\n"       # fails unless HEXL::hexl was found for it
                             'if(NOT OPENFHE_REQUIRED_VERSION STREQUAL "1.0.9")\n  message(FATAL_ERROR "version")\n'
                             'endif()\n')                              # the version the OpenFHE build declares
    src = _repo(tmp_path / "bindings", {"CMakeLists.txt": needs, "__init__.py": "",
                                        "openfhe.cpython-310-x86_64-linux-gnu.so": "module"})
    b = builds.openfhe_python(src, "HEAD", lib, quiet=True)
    assert "find_package(HEXL" in b.record["preamble"]
    with pytest.raises(builds.BuildError, match="HEXL::hexl"):   # the same bindings against OpenFHE without HEXL
        builds.openfhe_python(src, "HEAD", builds.openfhe(library, "v1", quiet=True), quiet=True)


def test_a_program_that_links_hexl_without_finding_it_builds_against_an_openfhe_with_hexl(cache, library, tmp_path,
                                                                                        fake_hexl, monkeypatch):
    """OpenFHE's package built with HEXL links HEXL::hexl without looking for it (FastHE-Search's CMake does not
    look either): the program gets the find_package first; against OpenFHE without HEXL it gets nothing."""
    monkeypatch.setenv("HEPKG_OPENFHE_HEXL_SRC", str(_openfhe_hexl(tmp_path, {"CMakeLists.txt": LIB})))
    lib = builds.openfhe(library, "v1", hexl=fake_hexl, quiet=True)
    links = PROGRAM + "target_link_libraries(test PRIVATE HEXL::hexl)\n"
    prog = _repo(tmp_path / "prog", {"CMakeLists.txt": links, "main.cpp": MAIN})
    b = builds.program("prog", prog, deps=[lib], quiet=True)
    assert subprocess.run([b.root / "build" / "test"], capture_output=True, text=True).stdout == "42\n"
    assert "find_package(HEXL" in b.record["preamble"]
    with pytest.raises(builds.BuildError, match="prog build failed"):
        builds.program("prog", prog, deps=[builds.openfhe(library, "v1", quiet=True)], quiet=True)


def test_a_tool_in_this_pythons_environment_comes_before_the_path(tmp_path, monkeypatch):
    """The cmake wheel of hepkg's pins (FastHE-Search needs CMake >= 3.25.2) before the system's."""
    for folder in ("env", "system"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "cmake").write_text("#!/bin/sh\n")
        (tmp_path / folder / "cmake").chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "env" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "system"))
    assert builds._tool("cmake", "cmake") == str(tmp_path / "env" / "cmake")
    (tmp_path / "env" / "cmake").unlink()
    assert builds._tool("cmake", "cmake") == str(tmp_path / "system" / "cmake")
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    with pytest.raises(builds.BuildError, match="cmake not found"):
        builds._tool("cmake", "cmake")


def test_the_accelerator_is_hexl_only_on_a_cpu_with_ifma_and_given_its_checkouts(monkeypatch):
    for env in builds.HEXL_SOURCES:
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setattr(builds, "hexl", lambda **kw: "the HEXL build")
    cases = [(False, {}, "no AVX512-IFMA"), (True, {}, "git clone https://github.com/IntelLabs/hexl and set "
                                                      "HEPKG_HEXL_SRC"),
             (True, dict.fromkeys(builds.HEXL_SOURCES, "/src"), "")]
    for ifma, env, why in cases:
        builds.accelerator.cache_clear()
        monkeypatch.setattr(builds, "cpu_has_ifma", lambda: ifma)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        got = builds.accelerator()
        assert got == (("the HEXL build", "") if not why else (None, got[1])) and why in got[1]
    builds.accelerator.cache_clear()


# ------------------------------------------------------------------ what the cache finds is checked (issue 59, item 6)
def test_a_truncated_build_record_is_rebuilt_not_a_json_error(cache, library):
    """A truncated build.json gave a raw JSONDecodeError, forever."""
    first = builds.openfhe(library, "v1", quiet=True)
    record = first.root / "build.json"
    record.write_text(record.read_text()[:100])
    with pytest.raises(builds.BuildError, match=f"{first.root} holds no readable build record"):
        builds.Build(first.root)
    again = builds.openfhe(library, "v1", quiet=True)
    assert again.root == first.root and again.record["commit"] == builds.commit_of(library, "v1")
    assert subprocess.run([again.prefix / "bin" / "fakefhe"], capture_output=True, text=True).stdout == "42\n"


def test_a_build_whose_binary_was_deleted_is_rebuilt(cache, library, tmp_path):
    """An entry whose binary was deleted was returned as a good build."""
    lib = builds.openfhe(library, "v1", quiet=True)
    prog = _repo(tmp_path / "prog", {"CMakeLists.txt": PROGRAM, "main.cpp": MAIN})
    first = builds.program("prog", prog, deps=[lib], quiet=True)
    (first.root / "build" / "test").unlink()
    assert "build/test" in first.damage()
    again = builds.program("prog", prog, deps=[lib], quiet=True)
    assert again.damage() is None and "files" not in again.record["deps"][0]
    assert subprocess.run([again.root / "build" / "test"], capture_output=True, text=True).stdout == "42\n"


def test_a_folder_without_build_record_is_rebuilt(cache, library):
    """A final folder without build.json rebuilt, then failed with OSError 39 (the folder was not empty)."""
    first = builds.openfhe(library, "v1", quiet=True)
    (first.root / "build.json").unlink()
    again = builds.openfhe(library, "v1", quiet=True)
    assert again.root == first.root and again.damage() is None


def test_killed_builds_leave_no_partial_trees(cache, library):
    """Killed builds left their .partial-* trees (a whole OpenFHE build) forever."""
    first = builds.openfhe(library, "v1", quiet=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = [cache / f"other-key.partial-{dead.pid}-abc", cache / f"{first.root.name}.partial-xyz"]
    for tree in stale:
        (tree / "build").mkdir(parents=True)
    live = cache / f"other-key.partial-{os.getpid()}-def"
    live.mkdir()
    builds.openfhe(library, "v1", options=dict(NATIVE_SIZE="128"), quiet=True)  # another key: the dead pid's goes
    assert not stale[0].exists() and live.exists()
    first.root.joinpath("build.json").unlink()
    builds.openfhe(library, "v1", quiet=True)  # this key's tree of an older name goes when this key builds
    assert not stale[1].exists()
