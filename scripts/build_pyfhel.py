"""Build a Pyfhel wheel offline, against the system's GSL, zlib and zstd.

Pyfhel's sdist lets SEAL's CMake fetch GSL, zlib and zstd from GitHub. This script
patches the sdist's build configuration so SEAL finds them on the system instead
(Debian/Ubuntu: libmsgsl-dev libzstd-dev zlib1g-dev). A dependency whose CMake package
is missing (e.g. zstd without CMake files on older distributions) is switched off in
SEAL, which then serializes without that compressor.

Pyfhel links the static SEAL library into libAfhel.so and into every extension module.
Exported, those copies interpose: libAfhel binds to the first extension's SEAL globals,
so its global memory pool is constructed and destroyed twice and the interpreter can
abort at exit ("free(): corrupted unsorted chunks"). Every target is therefore linked
with --exclude-libs,ALL, which keeps each copy of SEAL private to its own library.
Usage:
    python build_pyfhel.py PYFHEL_SDIST.tar.gz WHEEL_DIR
"""
import glob
import pathlib
import subprocess
import sys
import tarfile
import tempfile

SEAL_OPTS = "[cpplibraries.SEAL.cmake_opts]\n"
LINUX_LINK = '"-Wl,-rpath=$ORIGIN/.", "-fopenmp"]'  # Linux extra_link_args of Afhel and the extensions
CMAKE_DIRS = ("/usr/lib/*/cmake", "/usr/lib/cmake", "/usr/share/cmake", "/usr/local/lib/cmake", "/usr/local/share/cmake")


def has_cmake_package(name: str) -> bool:
    return any(glob.glob(f"{d}/{name}/{name}Config.cmake") for d in CMAKE_DIRS)


def has_gsl4() -> bool:
    versions = [f for d in CMAKE_DIRS for f in glob.glob(f"{d}/Microsoft.GSL/Microsoft.GSLConfigVersion.cmake")]
    return any('PACKAGE_VERSION "4' in pathlib.Path(f).read_text() for f in versions)


def seal_options() -> tuple[dict, list]:
    """SEAL CMake options and the libraries libseal (static) must be linked with."""
    opts, libs = {"SEAL_BUILD_DEPS": "OFF"}, []
    if not has_gsl4():
        opts["SEAL_USE_MSGSL"] = "OFF"
        print("build_pyfhel: Microsoft GSL 4 not found: building SEAL without GSL spans")
    if has_cmake_package("zstd"):
        libs.append("zstd")
    else:
        opts["SEAL_USE_ZSTD"] = "OFF"
        print("build_pyfhel: zstd CMake package not found: SEAL serializes without zstd")
    if glob.glob("/usr/include/zlib.h"):
        libs.append("z")
    else:
        opts["SEAL_USE_ZLIB"] = "OFF"
        print("build_pyfhel: zlib headers not found: SEAL serializes without zlib")
    return opts, libs


def patch(pyproject: pathlib.Path) -> None:
    opts, libs = seal_options()
    text = pyproject.read_text()
    for needle in (SEAL_OPTS, LINUX_LINK):
        if needle not in text:
            sys.exit(f"build_pyfhel: unexpected Pyfhel sdist layout: '{needle.strip()}' not in {pyproject}")
    for key in opts:  # drop the sdist's own setting of an option we override
        text = "\n".join(line for line in text.split("\n") if not line.strip().startswith(f"{key} "))
    lines = "".join(f"    {k} = '{v}'\n" for k, v in opts.items())
    text = text.replace(SEAL_OPTS, SEAL_OPTS + lines, 1)
    # Pyfhel's setup.py moves SEAL (static) to the end of each library list, so -lzstd -lz must
    # follow it in the trailing link arguments of every target, or the linker drops them.
    extra = "".join(f', "-l{lib}"' for lib in libs) + ', "-Wl,--exclude-libs,ALL"'
    text = text.replace(LINUX_LINK, LINUX_LINK.replace('"-fopenmp"]', f'"-fopenmp"{extra}]'))
    pyproject.write_text(text)


def main(sdist: str, wheel_dir: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp)
        (src,) = [p for p in pathlib.Path(tmp).iterdir() if p.is_dir()]
        patch(src / "pyproject.toml")
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", wheel_dir, str(src)], check=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
