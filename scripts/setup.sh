#!/usr/bin/env bash
# Create .venv with Python 3.10 and install hepkg (editable) with the exact pins of pyproject.toml.
# Works without GitHub: Pyfhel is built against the system GSL/zlib/zstd and its wheel is cached.
# Idempotent: rerunning reuses the venv and the cached wheel. Every failure says what to do next.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYFHEL=3.5.0
# The cached wheel is keyed by the build recipe, so changing scripts/build_pyfhel.py rebuilds it.
RECIPE=$(sha256sum scripts/build_pyfhel.py | cut -c1-12)
CACHE=${HEPKG_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hepkg/wheels}/pyfhel-$PYFHEL-$RECIPE
SYSTEM_PKGS="libmsgsl-dev libzstd-dev zlib1g-dev"

say() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }

find_python() {
  local c
  [ -n "${PYTHON:-}" ] && { echo "$PYTHON"; return 0; }
  for c in python3.10 $(pyenv root 2>/dev/null)/versions/3.10*/bin/python3.10 \
           "$HOME"/.pyenv/versions/3.10*/bin/python3.10 /usr/bin/python3.10 /usr/local/bin/python3.10; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys, venv; assert sys.version_info[:2] == (3, 10)' 2>/dev/null; then
      echo "$c"; return 0
    fi
  done
  return 1
}

have_system_libs() {
  [ -f /usr/include/gsl/gsl ] && [ -f /usr/include/zstd.h ] && [ -f /usr/include/zlib.h ]
}

install_system_libs() {
  have_system_libs && return 0
  local apt="apt-get"
  if [ "$(id -u)" != 0 ]; then
    sudo -n true 2>/dev/null || die "Pyfhel needs system libraries. Run: sudo apt-get install -y $SYSTEM_PKGS   then rerun make setup"
    apt="sudo -n apt-get"
  fi
  command -v apt-get >/dev/null || die "Pyfhel needs GSL, zstd and zlib headers (Debian: $SYSTEM_PKGS); install them with your package manager, then rerun"
  say "installing $SYSTEM_PKGS with apt-get"
  $apt install -y --no-install-recommends $SYSTEM_PKGS || { $apt update && $apt install -y --no-install-recommends $SYSTEM_PKGS; } ||
    die "apt-get failed. Run: sudo apt-get update && sudo apt-get install -y $SYSTEM_PKGS"
  have_system_libs || die "system libraries still missing after apt-get ($SYSTEM_PKGS)"
}

pyfhel_imports() { "$VENV/bin/python" -c "import Pyfhel" >/dev/null 2>&1; }

cached_pyfhel() { ls "$CACHE"/[Pp]yfhel-$PYFHEL-cp310-*.whl 2>/dev/null | head -1; }

build_pyfhel() {
  [ -n "$(cached_pyfhel)" ] && { say "using cached $(cached_pyfhel)"; return 0; }
  install_system_libs
  command -v c++ >/dev/null || die "no C++ compiler. Run: sudo apt-get install -y build-essential"
  local tmp; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' RETURN
  say "downloading the Pyfhel $PYFHEL sdist"
  "$VENV/bin/pip" download -q --no-deps --no-binary Pyfhel "Pyfhel==$PYFHEL" -d "$tmp" ||
    die "could not download Pyfhel $PYFHEL from PyPI (check the network or a pip mirror)"
  say "building Pyfhel $PYFHEL against the system libraries (about 10 minutes on 2 cores, once)"
  mkdir -p "$CACHE"
  "$VENV/bin/python" scripts/build_pyfhel.py "$tmp"/[Pp]yfhel-$PYFHEL.tar.gz "$tmp/wheel" > "$tmp/build.log" 2>&1 ||
    { tail -30 "$tmp/build.log" >&2; die "Pyfhel build failed (log above). Check a C++17 compiler and $SYSTEM_PKGS"; }
  mv "$tmp"/wheel/*.whl "$CACHE"/
  say "cached $(cached_pyfhel)"
}

PY=$(find_python) || die "Python 3.10 not found. Install it (Debian/Ubuntu: sudo apt-get install -y python3.10 python3.10-venv; or: pyenv install 3.10) or set PYTHON=/path/to/python3.10"
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV with $PY"
  "$PY" -m venv "$VENV" || die "venv creation failed (Debian: sudo apt-get install -y python3.10-venv)"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip setuptools wheel || die "pip could not reach PyPI"
build_pyfhel
say "installing hepkg and its pinned dependencies"
"$VENV/bin/pip" install -q --find-links "$CACHE" --only-binary Pyfhel -e ".[all]" ||
  die "pip install failed; rerun make setup (delete $VENV to start over)"
if [ "$(cat "$VENV/.pyfhel-recipe" 2>/dev/null)" != "$RECIPE" ]; then  # built by an older recipe
  say "installing Pyfhel built by the current recipe ($RECIPE)"
  "$VENV/bin/pip" install -q --force-reinstall --no-deps "$(cached_pyfhel)"
fi
if ! pyfhel_imports; then  # an older or stale wheel: reinstall from the cache, rebuild if that is stale too
  say "Pyfhel does not import; reinstalling it from $(cached_pyfhel)"
  "$VENV/bin/pip" install -q --force-reinstall --no-deps "$(cached_pyfhel)"
  if ! pyfhel_imports; then
    say "the cached Pyfhel wheel is stale; rebuilding it"
    rm -f "$(cached_pyfhel)"
    build_pyfhel
    "$VENV/bin/pip" install -q --force-reinstall --no-deps "$(cached_pyfhel)"
    pyfhel_imports || die "Pyfhel does not import: $("$VENV/bin/python" -c 'import Pyfhel' 2>&1 | tail -1)"
  fi
fi
echo "$RECIPE" > "$VENV/.pyfhel-recipe"
"$VENV/bin/python" -m ipykernel install --sys-prefix --name python3 >/dev/null
"$VENV/bin/python" -c "import hepkg.he as he; print('setup: backends:', ', '.join(f'{k}={v}' for k, v in he.availability().items()))"
