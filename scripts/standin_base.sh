#!/usr/bin/env bash
# A local stand-in for the official python:3.10-slim-bookworm image, for scripts/docker-test.sh.
#   standin_base.sh ROOTFS podman|docker IMAGE [podman storage options...]
# Debian bookworm from Debian's mirror (debootstrap --variant=minbase, plus the packages the
# official image installs and the shared libraries CPython links against), with a CPython 3.10
# copied into /usr/local where the official image builds its own: PYTHON, or the interpreter of
# .venv (the one make setup found). The differences from the official image are listed in the
# README's Docker section. CAs added under /usr/local/share/ca-certificates on this machine (a
# TLS-inspecting proxy's) are trusted inside, and pip is pointed at the system bundle.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { sed -n 2,3p "$0" >&2; exit 2; }
ROOTFS=$1 ENGINE=$2 IMAGE=$3
shift 3
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# the official image's ca-certificates netbase tzdata, and the runtime libraries of its CPython
PACKAGES=ca-certificates,netbase,tzdata,libbz2-1.0,libexpat1,libffi8,libgdbm6,liblzma5,libncursesw6,libreadline8,libsqlite3-0,libssl3,libuuid1,zlib1g

say() { printf 'standin_base [%s]: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { echo "standin_base: error: $*" >&2; exit 1; }

PY=${PYTHON:-.venv/bin/python}
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 10)' 2>/dev/null ||
  die "$PY is not a Python 3.10; set PYTHON=/path/to/python3.10"
PREFIX=$("$PY" -c 'import sys; print(sys.base_prefix)')
VERSION=$("$PY" -c 'import platform; print(platform.python_version())')
[ -x "$PREFIX/bin/python3.10" ] && [ -d "$PREFIX/lib/python3.10" ] && [ -f "$PREFIX/include/python3.10/Python.h" ] ||
  die "$PREFIX is not a complete CPython 3.10 installation (bin, lib, include)"

export TMPDIR=/tmp  # the caller's TMPDIR does not exist inside the chroot
if [ -f "$ROOTFS/var/lib/dpkg/status" ] && [ ! -e "$ROOTFS/debootstrap" ]; then
  say "reusing the finished debootstrap in $ROOTFS"
else
  [ -e "$ROOTFS" ] && die "$ROOTFS holds an unfinished debootstrap; remove it first"
  say "debootstrap --variant=minbase bookworm from $MIRROR"
  debootstrap --variant=minbase --include=$PACKAGES bookworm "$ROOTFS" "$MIRROR" > "$ROOTFS.log" 2>&1 ||
    { tail -20 "$ROOTFS.log" >&2; die "debootstrap failed (log above)"; }
  rm -f "$ROOTFS.log"
fi
cat > "$ROOTFS/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF

say "CPython $VERSION from $PREFIX into /usr/local"
# The standard library and headers; of site-packages only what the official image ships (pip, setuptools).
tar -C "$PREFIX" -c --exclude='lib/python3.10/site-packages/*' --exclude='lib/python3.10/test' \
    --exclude='__pycache__' --exclude='*.a' \
    bin/python3.10 bin/python3.10-config lib/libpython3.10.so.1.0 lib/libpython3.so lib/python3.10 \
    include/python3.10 lib/pkgconfig | tar -C "$ROOTFS/usr/local" -x
(cd "$PREFIX/lib/python3.10/site-packages" && tar -c --exclude='__pycache__' pip pip-*.dist-info setuptools \
    setuptools-*.dist-info pkg_resources _distutils_hack distutils-precedence.pth) |
  tar -C "$ROOTFS/usr/local/lib/python3.10/site-packages" -x
# the configuration records where CPython was built: point it at /usr/local, as in the official image
grep -rlI "$PREFIX" "$ROOTFS"/usr/local/bin/python3.10-config "$ROOTFS"/usr/local/lib/pkgconfig \
    "$ROOTFS"/usr/local/lib/python3.10/_sysconfigdata_* "$ROOTFS"/usr/local/lib/python3.10/config-3.10-* |
  xargs -r sed -i "s|$PREFIX|/usr/local|g"
ln -sf libpython3.10.so.1.0 "$ROOTFS/usr/local/lib/libpython3.10.so"
for link in python3:python3.10 python:python3 python3-config:python3.10-config python-config:python3-config; do
  ln -sf "${link#*:}" "$ROOTFS/usr/local/bin/${link%%:*}"
done
for pip in pip3.10 pip3 pip; do
  printf '#!/usr/local/bin/python3.10\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n' \
    > "$ROOTFS/usr/local/bin/$pip"
  chmod 755 "$ROOTFS/usr/local/bin/$pip"
done
ENV=(--change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin'
     --change 'ENV LANG=C.UTF-8' --change "ENV PYTHON_VERSION=$VERSION" --change 'CMD ["python3"]')
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$ROOTFS/usr/local/share/ca-certificates/"
  ENV+=(--change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt'
        --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt')
fi
chroot "$ROOTFS" /bin/sh -c 'update-ca-certificates >/dev/null && ldconfig'
chroot "$ROOTFS" /usr/local/bin/python3 -c 'import ssl, sqlite3, ctypes, lzma, bz2, readline, uuid, zlib; import pip' ||
  die "the copied CPython does not import its standard modules in the stand-in"

findmnt -rn -o TARGET | grep -q "^$ROOTFS/" && die "mounts left under $ROOTFS"
say "importing $ROOTFS as $IMAGE"
if [ "$ENGINE" = podman ]; then
  tar -C "$ROOTFS" --numeric-owner -c . | podman "$@" import "${ENV[@]}" - "$IMAGE" >/dev/null
else
  tar -C "$ROOTFS" --numeric-owner -c . | docker import "${ENV[@]}" - "$IMAGE" >/dev/null
fi
