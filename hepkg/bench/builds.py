"""Cached CMake builds of foreign C++ (the papers' authors' programs and the OpenFHE they link), from source checkouts.

Nothing is downloaded and nothing of theirs enters hepkg: each build takes the sources of a git
checkout the user gives at a named commit (``git archive``: the checkout itself is never touched,
submodules come from their own checkouts inside it), configures, builds with one job per core and
installs into ``cache("authors", "<name>-<commit>-<options hash>")``. The options hash covers the
CMake options, the compiler's version and the prefixes of the builds it links, so a changed option
or dependency is a new build. A build folder is renamed into place only when complete, with its
``build.json`` (name, commit, options, compiler, seconds, log, the size of every file) in it; a failed build
leaves its log beside the cache (``<key>.failed.log``) and nothing else, a killed one its
``<key>.partial-<pid>-*`` tree until the next build. What the cache holds is checked before it is used: a
folder without a readable ``build.json``, or whose files are not those it lists (a deleted binary), is
removed and built again. Builds of one key wait for each other (a file lock).

:func:`openfhe` installs OpenFHE (with Intel HEXL: :func:`hexl`, openfhe-hexl's files laid over the OpenFHE
tree); :func:`program` builds a CMake program against it; :func:`against_openfhe` does both for an authors'
checkout; :func:`openfhe_python` builds the ``openfhe`` Python module against such a build (hepkg on the same
OpenFHE as the authors' program), :func:`openfhe_encode` hepkg's own encoding extension beside it; :func:`run`
runs a built program.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime
import fcntl
import functools
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

from hepkg import atomic
from hepkg import paths as hepkg_paths
from hepkg.lifeline import die_with_parent

__all__ = ["BuildError", "Build", "commit_of", "openfhe", "program", "against_openfhe", "openfhe_python", "run",
           "openfhe_encode", "hepkg_python", "hexl", "accelerator", "cpu_has_ifma", "OPENFHE_OPTIONS", "OPENFHE_ENV",
           "OPENFHE_PYTHON_ENV", "HEXL_SOURCES", "clone_hint"]

OPENFHE_REPO, OPENFHE_ENV = "openfheorg/openfhe-development", "HEPKG_OPENFHE_SRC"
OPENFHE_PYTHON_REPO, OPENFHE_PYTHON_ENV = "openfheorg/openfhe-python", "HEPKG_OPENFHE_PYTHON_SRC"

#: OpenFHE's CMake options here: the library alone (no tests, examples, benchmarks), OpenMP on as in the
#: wheel, Release, 64-bit native integers, no machine-specific flags (as the wheel, which is built without them).
OPENFHE_OPTIONS = dict(BUILD_UNITTESTS="OFF", BUILD_EXAMPLES="OFF", BUILD_BENCHMARKS="OFF", BUILD_STATIC="OFF",
                       BUILD_SHARED="ON", WITH_OPENMP="ON", CMAKE_BUILD_TYPE="Release", NATIVE_SIZE="64",
                       WITH_NATIVEOPT="OFF", GIT_SUBMOD_AUTO="OFF")

HEXL_REF = "v1.2.6"                                         # the release openfhe-hexl asks for
CPU_FEATURES_REF = "32b49eb5e7809052a28422cfde2f2745fbb0eb76"  # the commit HEXL v1.2.6's CMake downloads
#: Environment variable -> repository of each checkout an OpenFHE build with HEXL takes (openfhe-hexl at its
#: release for the OpenFHE version built, ``<OpenFHE tag>.0``).
HEXL_SOURCES = {"HEPKG_HEXL_SRC": "IntelLabs/hexl", "HEPKG_CPU_FEATURES_SRC": "google/cpu_features",
                "HEPKG_OPENFHE_HEXL_SRC": "openfheorg/openfhe-hexl"}
#: What openfhe-hexl lays over an openfhe-development tree (the files its staging script copies).
OPENFHE_HEXL_PATHS = ("CMakeLists.txt", "CMakeLists.User.txt", "OpenFHEConfig.cmake.in", "benchmark", "configure",
                      "src", "third-party")
#: OpenFHE with HEXL as openfhe-configurator builds it: its CMake defaults, so machine-specific flags on.
HEXL_OPENFHE_OPTIONS = dict(WITH_INTEL_HEXL="ON", INTEL_HEXL_PREBUILT="ON", WITH_NATIVEOPT="ON")


@dataclasses.dataclass(frozen=True)
class Program:
    """One build of an authors' program: ``binary``, the OpenFHE ``libdir`` it loads, ``build`` (the builds'
    names)."""

    binary: pathlib.Path
    libdir: pathlib.Path
    build: str = ""


class BuildError(RuntimeError):
    """A build could not be made: missing tools or sources, or a failed step (its log's tail in the message)."""


def clone_hint(repo: str, ref: str | None = None, recursive: bool = False) -> str:
    """The command that fetches ``repo`` (owner/name on GitHub) for users with the internet."""
    opts = (" --recursive" if recursive else "") + (f" --branch {ref}" if ref else "")
    return f"git clone{opts} https://github.com/{repo}"


def _run(cmd: list[str], log, env=None) -> None:
    log.write(f"$ {' '.join(map(str, cmd))}\n")
    log.flush()
    done = subprocess.run(list(map(str, cmd)), env=env, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode:
        raise subprocess.CalledProcessError(done.returncode, cmd)


def _tool(name: str, package: str) -> str:
    """The program ``name``: this Python's environment's first (the ``cmake`` wheel of hepkg's pins: FastHE-Search
    wants CMake >= 3.25.2, newer than Debian 12's), then the PATH."""
    found = shutil.which(name, path=os.pathsep.join([str(pathlib.Path(sys.executable).parent),
                                                     os.environ.get("PATH", os.defpath)]))
    if not found:
        raise BuildError(f"{name} not found: install it (Debian/Ubuntu: sudo apt-get install -y {package})")
    return found


def compiler() -> str:
    """The C++ compiler's first version line (part of every build's key)."""
    cxx = os.environ.get("CXX") or _tool("c++", "build-essential")
    return subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]


def commit_of(checkout, ref: str = "HEAD") -> str:
    """The full commit ``ref`` names in the git checkout ``checkout``; BuildError if it is not one."""
    checkout = pathlib.Path(checkout).expanduser()
    if not checkout.exists():
        raise BuildError(f"{checkout} does not exist")
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
                          capture_output=True, text=True)
    if done.returncode:
        raise BuildError(f"{checkout} is not a git checkout holding {ref!r}")
    return done.stdout.strip()


def _export(checkout: pathlib.Path, commit: str, dest: pathlib.Path, submodules=(), paths=()) -> None:
    """The tree of ``commit`` (only ``paths`` in it, if given) into ``dest``, with each submodule path in
    ``submodules`` at the commit the tree records, taken from the submodule's own checkout inside ``checkout``."""
    dest.mkdir(parents=True, exist_ok=True)
    for repo, rev, sub in [(checkout, commit, "")] + [(checkout / s, None, s) for s in submodules]:
        if sub:
            entry = subprocess.run(["git", "-C", str(checkout), "ls-tree", commit, sub], capture_output=True,
                                   text=True, check=True).stdout.split()
            if len(entry) < 3 or entry[1] != "commit":
                raise BuildError(f"{checkout} at {commit[:12]} has no submodule {sub}")
            rev = entry[2]
            try:
                commit_of(repo, rev)
            except BuildError:
                raise BuildError(f"{repo} lacks the submodule commit {rev[:12]}: run "
                                 f"git -C {checkout} submodule update --init {sub}") from None
        only = ["--", *paths] if paths and not sub else []
        tar = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", rev, *only], capture_output=True)
        if tar.returncode:
            raise BuildError(f"git archive of {repo} at {rev[:12]} failed: {tar.stderr.decode(errors='replace').strip()}")
        with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as t:
            t.extractall(dest / sub, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(dest / sub)


def _tree_id(folder: pathlib.Path) -> str:
    """The SHA-256 of the files under ``folder`` (relative paths and contents; bytecode caches left out)."""
    h = hashlib.sha256()
    for path in sorted(f for f in folder.rglob("*") if f.is_file() and "__pycache__" not in f.parts):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


class Build:
    """A finished build: ``prefix`` (its install folder), ``root`` (the build's folder) and its ``record``;
    BuildError naming the folder when its ``build.json`` is missing or unreadable (truncated: a build record is
    a JSON object with its name, commit and options)."""

    def __init__(self, root: pathlib.Path):
        self.root = pathlib.Path(root)
        self.prefix = self.root / "install"
        try:
            record = json.loads((self.root / "build.json").read_text())
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise BuildError(f"{self.root} holds no readable build record (build.json: {exc}); delete the folder "
                             f"and the build is made again") from None
        if not (isinstance(record, dict) and {"name", "commit", "options"} <= set(record)):
            raise BuildError(f"{self.root}/build.json is not a build record (no name, commit and options); delete "
                             f"the folder and the build is made again")
        self.record = record

    def damage(self) -> str | None:
        """Why the build's files are not those its record lists (one missing, such as a deleted binary, or of
        another size), or None. Records from before hepkg listed the files list none."""
        files = self.record.get("files", {})
        bad = [path for path, size in files.items() if _size(self.root / path) != size]
        if bad:
            return f"{len(bad)} of its {len(files)} files are missing or changed (first {bad[0]})"
        return None

    def __repr__(self) -> str:
        return f"Build({self.record['name']} {self.record['commit'][:12]} at {self.root})"


#: the trees of builds under way, named by the pid of the process building
_PARTIAL = re.compile(r".+\.partial-(\d+)-.*")


def _size(path: pathlib.Path) -> int | None:
    """The size of ``path`` itself (a link's, not its target's), or None where there is nothing."""
    try:
        return path.lstat().st_size
    except OSError:
        return None


def _files(root: pathlib.Path) -> dict[str, int]:
    """Every file and link under ``root`` (links not followed) by relative path, with its size; Python's bytecode
    caches, which importing the built module writes later, left out."""
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = pathlib.Path(folder, name)
            found[str(path.relative_to(root))] = path.lstat().st_size
    return found


def _cached(final: pathlib.Path, quiet: bool) -> Build | None:
    """The finished build at ``final``, or None (the folder removed) when there is none or it is damaged: no
    build record or an unreadable one (a disk error, an edit, a folder made by hand), or files its record lists
    missing or changed."""
    if not final.exists():
        return None
    try:
        build = Build(final)
        problem = build.damage()
    except BuildError as exc:
        build, problem = None, str(exc)
    if problem is None:
        return build
    if not quiet:
        print(f"rebuilding {final.name}: the cached build is damaged ({problem})", flush=True)
    shutil.rmtree(final)
    return None


def _key(name: str, commit: str, options: dict, deps: list[Build]) -> str:
    spec = json.dumps(dict(options=options, compiler=compiler(), deps=[str(d.root) for d in deps]), sort_keys=True)
    return f"{name}-{commit[:12]}-{hashlib.sha256(spec.encode()).hexdigest()[:10]}"


@contextlib.contextmanager
def _locked(path: pathlib.Path):
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _dep_record(build: Build) -> dict:
    """What a build's record says of a build it links: that build's record (its file list left out) and folder."""
    return {k: v for k, v in build.record.items() if k != "files"} | dict(root=str(build.root))


def _prefixes(deps) -> list[str]:
    """The install folders of ``deps`` and of the builds they link, each once."""
    out = []
    for d in deps:
        record = d.record | dict(root=str(d.root)) if isinstance(d, Build) else d
        out += _prefixes(record.get("deps", [])) + [str(pathlib.Path(record["root"]) / "install")]
    return list(dict.fromkeys(out))


def _cmake_build(name: str, checkout, ref: str, options: dict, *, submodules=(), paths=(), deps=(),
                 overlay=None, preamble: str = "", install: bool = True, finish=None, quiet: bool = False) -> Build:
    """The cached build of the CMake project at ``checkout``/``ref`` (see the module docstring; ``ref`` None: the
    plain folder ``checkout`` as it is, its :func:`_tree_id` standing for the commit). ``deps``: builds on
    CMake's prefix path (with the builds they link); ``paths``: the only paths of the tree built (a repository
    whose large files are not checked out); ``overlay``: (checkout, ref, paths) of another tree whose files
    replace the project's; ``preamble``: CMake code run after the project's ``project()`` (its
    ``CMAKE_PROJECT_INCLUDE``); ``finish(install folder)`` arranges the installed files before the build is put
    in place."""
    cmake = _tool("cmake", "cmake")
    checkout = pathlib.Path(checkout).expanduser()
    commit = commit_of(checkout, ref) if ref is not None else _tree_id(checkout)
    deps = list(deps)
    if overlay is not None:
        overlay = (pathlib.Path(overlay[0]).expanduser(), commit_of(overlay[0], overlay[1]), tuple(overlay[2]))
    spec = dict(options) | ({"paths": list(paths)} if paths else {}) | (
        {"overlay": [overlay[1], list(overlay[2])]} if overlay else {}) | ({"preamble": preamble} if preamble else {})
    key = _key(name, commit, spec, deps)
    cache = hepkg_paths.cache("authors")
    final = cache / key
    atomic.clean_stale(cache, _PARTIAL)  # the trees of builds that were killed
    with _locked(cache / f"{key}.lock"):
        cached = _cached(final, quiet)
        if cached is not None:
            return cached
        for stale in cache.glob(f"{key}.partial-*"):  # this key's, from before their names carried a pid
            shutil.rmtree(stale, ignore_errors=True)
        work = pathlib.Path(tempfile.mkdtemp(prefix=f"{key}.partial-{os.getpid()}-", dir=cache))
        log_path = work / "build.log"
        started = time.perf_counter()
        if not quiet:
            print(f"building {name} {commit[:12]} ({' '.join(f'{k}={v}' for k, v in options.items())}) in {final}; "
                  f"log: {log_path}", flush=True)
        try:
            with open(log_path, "w") as log:
                if ref is None:
                    shutil.copytree(checkout, work / "src", ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    _export(checkout, commit, work / "src", submodules, paths)
                if overlay is not None:
                    _export(overlay[0], overlay[1], work / "src", paths=overlay[2])
                flags = [f"-D{k}={v}" for k, v in options.items()]
                if preamble:
                    (work / "preamble.cmake").write_text(preamble)
                    flags.append(f"-DCMAKE_PROJECT_INCLUDE={work / 'preamble.cmake'}")
                prefix = [f"-DCMAKE_PREFIX_PATH={';'.join(_prefixes(deps))}"] if deps else []
                _run([cmake, "-S", work / "src", "-B", work / "build", f"-DCMAKE_INSTALL_PREFIX={final / 'install'}",
                      *prefix, *flags], log)
                _run([cmake, "--build", work / "build", "-j", str(os.cpu_count() or 1)], log)
                if install:
                    # installed under the final path (CMake bakes it into the package files): staged with DESTDIR
                    env = os.environ | dict(DESTDIR=str(work / "stage"))
                    _run([cmake, "--install", work / "build"], log, env=env)
                    shutil.move(str(work / "stage" / str(final / "install").lstrip("/")), work / "install")
                    shutil.rmtree(work / "stage")
                    if finish is not None:
                        finish(work / "install")
        except (subprocess.CalledProcessError, OSError, BuildError) as exc:
            failed = cache / f"{key}.failed.log"
            if log_path.exists():
                shutil.copyfile(log_path, failed)
            shutil.rmtree(work, ignore_errors=True)
            tail = failed.read_text(errors="replace").splitlines()[-25:] if failed.exists() else []
            raise BuildError(f"{name} build failed ({exc}); log: {failed}\n" + "\n".join(tail)) from None
        shutil.rmtree(work / "src")
        files = _files(work)
        (work / "build.json").write_text(json.dumps(dict(
            name=name, commit=commit, ref=ref, options=options, paths=list(paths), compiler=compiler(),
            **({"overlay": dict(source=str(overlay[0]), commit=overlay[1], paths=list(overlay[2]))} if overlay else {}),
            **({"preamble": preamble} if preamble else {}),
            deps=[_dep_record(d) for d in deps], seconds=round(time.perf_counter() - started, 1),
            cores=os.cpu_count(), finished=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            log=str(final / "build.log"), files=files), indent=1))
        os.replace(work, final)
        return Build(final)


def openfhe(checkout, ref: str, *, options: dict | None = None, hexl: Build | None = None,
            quiet: bool = False) -> Build:
    """OpenFHE (openfhe-development) at ``ref`` from ``checkout`` (its ``third-party/cereal`` submodule
    checked out), with :data:`OPENFHE_OPTIONS` updated by ``options``, installed in the cache. Given a
    :func:`hexl` build: ``openfhe-hexl``, the files of openfhe-hexl's release for ``ref`` (``<ref>.0``, from
    ``$HEPKG_OPENFHE_HEXL_SRC``) laid over the tree, built with :data:`HEXL_OPENFHE_OPTIONS` against that
    HEXL, whose libraries are linked into its ``lib`` folder."""
    if hexl is None:
        return _cmake_build("openfhe", checkout, ref, OPENFHE_OPTIONS | (options or {}),
                            submodules=("third-party/cereal",), quiet=quiet)

    def link_hexl(install: pathlib.Path) -> None:
        (install / "lib").mkdir(exist_ok=True)
        for f in (hexl.prefix / "lib").glob("libhexl*.so*"):
            (install / "lib" / f.name).symlink_to(f)

    overlay = (_source("HEPKG_OPENFHE_HEXL_SRC"), f"{ref}.0", OPENFHE_HEXL_PATHS)
    hexl_options = HEXL_OPENFHE_OPTIONS | dict(INTEL_HEXL_HINT_DIR=str(hexl.prefix))
    return _cmake_build("openfhe-hexl", checkout, ref, OPENFHE_OPTIONS | hexl_options | (options or {}),
                        submodules=("third-party/cereal",), deps=[hexl], overlay=overlay, finish=link_hexl,
                        quiet=quiet)


#: CMake code that defines the target ``HEXL::hexl``, which OpenFHE's package links when built with HEXL without
#: looking for it (a project that does not look for HEXL itself fails to generate against that build)
_FIND_HEXL = "find_package(HEXL REQUIRED CONFIG)\n"


def program(name: str, checkout, ref: str = "HEAD", *, deps=(), paths=(), options: dict | None = None,
            quiet: bool = False) -> Build:
    """A CMake program (not installed: its binaries stay in ``root / 'build'``) at ``ref`` of ``checkout``
    (``paths``: only those of its tree), built against ``deps`` (their prefixes on CMake's prefix path; against
    an OpenFHE with HEXL, :data:`_FIND_HEXL` first), with ``options`` (CMake cache variables) beside the release
    build type."""
    hexl = any(d.record["options"].get("WITH_INTEL_HEXL") == "ON" for d in deps)
    return _cmake_build(name, checkout, ref, dict(CMAKE_BUILD_TYPE="Release") | (options or {}), deps=deps,
                        paths=paths, install=False, preamble=_FIND_HEXL if hexl else "", quiet=quiet)


def _source(env: str) -> pathlib.Path:
    """The checkout ``$env`` names (one of :data:`HEXL_SOURCES`); BuildError with the clone command if unset."""
    if not os.environ.get(env):
        raise BuildError(f"{env} is not set: {clone_hint(HEXL_SOURCES[env])} and set {env} to its path")
    return pathlib.Path(os.environ[env]).expanduser()


def cpu_has_ifma() -> bool:
    """Whether this CPU has AVX512-IFMA, where HEXL's fast kernels run (Linux' ``/proc/cpuinfo``; False elsewhere)."""
    try:
        return "avx512ifma" in pathlib.Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


def hexl(*, quiet: bool = False) -> Build:
    """Intel HEXL :data:`HEXL_REF` (shared) from ``$HEPKG_HEXL_SRC``, linking cpu_features at the commit its CMake
    would download (:data:`CPU_FEATURES_REF`, from ``$HEPKG_CPU_FEATURES_SRC``: static, position-independent)."""
    features = _cmake_build("cpu_features", _source("HEPKG_CPU_FEATURES_SRC"), CPU_FEATURES_REF,
                            dict(BUILD_PIC="ON", BUILD_SHARED_LIBS="OFF", BUILD_TESTING="OFF",
                                 CMAKE_BUILD_TYPE="Release"), quiet=quiet)
    return _cmake_build("hexl", _source("HEPKG_HEXL_SRC"), HEXL_REF,
                        dict(HEXL_SHARED_LIB="ON", HEXL_BENCHMARK="OFF", HEXL_TESTING="OFF", HEXL_DOCS="OFF",
                             HEXL_EXPERIMENTAL="OFF", CMAKE_BUILD_TYPE="Release"), deps=[features], quiet=quiet)


@functools.lru_cache(maxsize=None)
def accelerator() -> tuple[Build | None, str]:
    """(the :func:`hexl` build, "") where this CPU has AVX512-IFMA and the HEXL checkouts are given, else (None,
    why not, with the clone commands). Once per process."""
    if not cpu_has_ifma():
        return None, "this CPU has no AVX512-IFMA (HEXL's fast path): OpenFHE without HEXL"
    missing = [env for env in HEXL_SOURCES if not os.environ.get(env)]
    if missing:
        return None, ("OpenFHE without HEXL, although this CPU has AVX512-IFMA; for HEXL: " + "; ".join(
            f"{clone_hint(HEXL_SOURCES[env])} and set {env}" for env in missing))
    return hexl(), ""


def against_openfhe(name: str, checkout, openfhe_ref: str, *, paths=(), with_hexl: bool = False,
                    options: dict | None = None) -> tuple[Build, Build]:
    """(OpenFHE at ``openfhe_ref`` from the checkout ``$HEPKG_OPENFHE_SRC``, the program ``name`` of ``checkout``
    built against it, with the CMake ``options``); MissingCheckout, with the clone command, when
    ``$HEPKG_OPENFHE_SRC`` is not set. ``with_hexl``: OpenFHE with HEXL where :func:`accelerator` has it, else
    without (saying why)."""
    from .versus import MissingCheckout

    src = os.environ.get(OPENFHE_ENV)
    if not src:
        raise MissingCheckout(f"no OpenFHE source to build {name} against: "
                              f"{clone_hint(OPENFHE_REPO, openfhe_ref, recursive=True)} and set {OPENFHE_ENV} to its "
                              f"path (its third-party/cereal submodule checked out)")
    accel, why = accelerator() if with_hexl else (None, "")
    if why:
        print(f"{name}: {why}", flush=True)
    lib = openfhe(src, openfhe_ref, hexl=accel)
    return lib, program(name, checkout, deps=[lib], paths=paths, options=options)


def _package_version(lib: Build) -> str:
    """The version an OpenFHE build's CMake package declares."""
    text = (lib.prefix / "lib" / "OpenFHE" / "OpenFHEConfigVersion.cmake").read_text()
    found = re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', text)
    if not found:
        raise BuildError(f"{lib.root.name} declares no OpenFHE package version")
    return found.group(1)


def openfhe_python(checkout, ref: str, lib: Build, *, quiet: bool = False) -> Build:
    """openfhe-python (the ``openfhe`` module) at ``ref`` of ``checkout``, built for this Python (pybind11 from its
    environment) against the OpenFHE build ``lib``: ``prefix`` holds the package ``openfhe``, its ``lib`` folder a
    link to ``lib``'s libraries (the module looks for them there), to be put first on a child's module path.
    Against OpenFHE with HEXL, a preamble finds HEXL for it (their CMake links the target ``HEXL::hexl``
    OpenFHE names, and OpenFHE's headers include HEXL's, but does not look for it), and the OpenFHE version it
    requires is the one that build declares (openfhe-hexl's CMakeLists sets it; see :func:`openfhe`)."""
    try:
        import pybind11
    except ImportError:
        raise BuildError("pybind11 not found (openfhe-python's bindings need it): pip install pybind11") from None

    def package(install: pathlib.Path) -> None:     # their install puts the module and __init__.py in the prefix
        pkg = install / "openfhe"
        pkg.mkdir()
        for f in [f for f in install.iterdir() if f != pkg]:
            f.rename(pkg / f.name)
        if not list(pkg.glob("openfhe*.so")):
            raise BuildError(f"openfhe-python installed no openfhe module: {sorted(p.name for p in pkg.iterdir())}")
        (pkg / "lib").symlink_to(lib.prefix / "lib")

    options = dict(CMAKE_BUILD_TYPE="Release", Python_EXECUTABLE=sys.executable, pybind11_DIR=pybind11.get_cmake_dir())
    preamble = ""
    if lib.record["options"].get("WITH_INTEL_HEXL") == "ON":
        preamble = (_FIND_HEXL +
                    "get_target_property(_hexl_include HEXL::hexl INTERFACE_INCLUDE_DIRECTORIES)\n"
                    "include_directories(${_hexl_include})\n")
        # openfhe-hexl's CMakeLists names its own version: v1.5.1.0's says 1.5.0 (OPENFHE_VERSION_PATCH 0)
        options["OPENFHE_REQUIRED_VERSION"] = _package_version(lib)
    return _cmake_build("openfhe-python", checkout, ref, options, deps=[lib], preamble=preamble, finish=package,
                        quiet=quiet)


#: hepkg's own C++ (``hepkg_openfhe_encode``, built by :func:`openfhe_encode`)
NATIVE = pathlib.Path(__file__).parent / "native"


def openfhe_encode(module: Build, *, quiet: bool = False) -> Build:
    """hepkg's ``hepkg_openfhe_encode`` (:data:`NATIVE`: OpenFHE's packed encoding read from a numpy buffer, which
    bindings before openfhe-python 1.6 convert element by element) against the :func:`openfhe_python` build
    ``module``, with its options and preamble (one ABI): ``prefix`` holds the extension and a link to ``module``'s
    ``openfhe`` package, the folder to put first on a child's module path. The extension names the bindings it
    was built for (``built_for``), and hepkg's backend uses it with those alone."""
    (binding,) = (module.prefix / "openfhe").glob("openfhe*.so")
    options = module.record["options"] | dict(HEPKG_OPENFHE_MODULE=str(binding.resolve()))

    def link_module(install: pathlib.Path) -> None:
        (install / "openfhe").symlink_to(module.prefix / "openfhe")
    return _cmake_build("hepkg-openfhe-encode", NATIVE, None, options, deps=[module],
                        preamble=module.record.get("preamble", ""), finish=link_module, quiet=quiet)


def hepkg_python(checkout, ref: str, lib: Build) -> tuple[pathlib.Path, str]:
    """(the folder to put first on hepkg's child's module path, what it holds): openfhe-python at ``ref`` of
    ``checkout`` built against the OpenFHE build ``lib`` (:func:`openfhe_python`) with hepkg's encoding extension
    for it (:func:`openfhe_encode`)."""
    module = openfhe_python(checkout, ref, lib)
    native = openfhe_encode(module)
    return native.prefix, f"{module.root.name} + {native.root.name} on {lib.root.name}"


#: scratch folders of :func:`run`, named by the pid of the process that runs the program
_SCRATCH = re.compile(r"hepkg-run-(\d+)-.*")
#: removes a scratch folder once its stdin closes (the process running the program ended, however it ended)
_REAPER = 'cat >/dev/null; for i in 1 2 3 4 5; do rm -rf -- "$1" 2>/dev/null; [ -e "$1" ] || exit 0; sleep 1; done'


@contextlib.contextmanager
def _scratch(binary):
    """A scratch folder ``$TMPDIR/hepkg-run-<pid>-<binary>-*`` that goes when the block ends or this process dies
    (a reaper in its own session waits for this process's end of a pipe); folders of processes that died without
    theirs are removed first."""
    atomic.clean_stale(tempfile.gettempdir(), _SCRATCH)
    reaper = None
    try:
        with tempfile.TemporaryDirectory(prefix=f"hepkg-run-{os.getpid()}-{pathlib.Path(binary).name}-") as tmp:
            reaper = subprocess.Popen(["sh", "-c", _REAPER, "sh", tmp], stdin=subprocess.PIPE, start_new_session=True)
            yield pathlib.Path(tmp)
    finally:
        if reaper is not None:  # the folder is gone: the reaper finds nothing
            reaper.stdin.close()
            reaper.wait()


def run(binary, args, *, libdir, threads: int, marks=(), thread_limit: bool = False, setup=None, variables=None):
    """Run ``binary args`` in a scratch folder (``setup(folder)`` prepares it), with ``threads`` OpenMP threads
    (``thread_limit``: also ``OMP_THREAD_LIMIT``, which caps teams the program sizes itself), ``libdir`` on the
    library path and the environment ``variables`` (e.g. the program's own thread settings) set. Returns (its
    output, {mark: seconds from the start to the first line containing it}, its own peak RSS in bytes from
    ``wait4``, the sizes of the files it left, by path relative to the folder).
    RuntimeError with the output's tail when it fails. The program dies with this process (the parent-death
    signal, :func:`hepkg.lifeline.die_with_parent`), even by SIGKILL, and its scratch folder goes with them."""
    env = os.environ | dict(OMP_NUM_THREADS=str(threads),
                            LD_LIBRARY_PATH=os.pathsep.join(filter(None, [str(libdir), os.environ.get("LD_LIBRARY_PATH")])))
    if thread_limit:
        env["OMP_THREAD_LIMIT"] = str(threads)
    env |= dict(variables or {})
    with _scratch(binary) as tmp:
        if setup is not None:
            setup(tmp)
        start = time.perf_counter()
        proc = subprocess.Popen([str(binary), *map(str, args)], cwd=tmp, env=env, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        peak = _HighWater(proc.pid)
        lines, seen = [], {}
        for line in proc.stdout:
            lines.append(line)
            seen |= {m: time.perf_counter() - start for m in marks if m in line and m not in seen}
        peak.stop()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        output = "".join(lines)
        if proc.returncode:
            raise RuntimeError(f"{pathlib.Path(binary).name} {' '.join(map(str, args))} exited with {proc.returncode}:"
                               f"\n{output[-2000:]}")
        files = {str(p.relative_to(tmp)): p.stat().st_size for p in tmp.rglob("*") if p.is_file()}
    return output, seen, peak.bytes or usage.ru_maxrss * 1024, files


class _HighWater:
    """The peak RSS of a running process from its ``VmHWM`` (the kernel's high-water mark of its own memory
    since its ``exec``), read every 20 ms until :meth:`stop`. ``wait4``'s ``ru_maxrss`` is the larger of that and
    the harness's RSS when it forked (the forked copy counts before the ``exec``): a program that peaks below its
    harness reads as the harness (2.2 GB for a shell script started by a test worker). The committed benches'
    programs peak above theirs (2.2-21.5 GB against about 0.6 GB for the OMR bench's process after its memory
    estimate), so their figures stand. ``bytes``: 0 where ``/proc`` has no mark or the process ended before the
    first read; :func:`run` then falls back on ``ru_maxrss``, an upper bound."""

    def __init__(self, pid: int):
        self.bytes, self._path, self._done = 0, f"/proc/{pid}/status", threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while True:
            try:
                with open(self._path) as f:
                    found = [int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM")]
            except OSError:
                return
            self.bytes = max([self.bytes, *found])
            if self._done.wait(0.02):
                return

    def stop(self) -> None:
        """Stop reading (after a last read, where the process still has its memory)."""
        self._done.set()
        self._thread.join()
