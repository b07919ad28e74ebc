#!/usr/bin/env bash
# make docker-test: build the Dockerfile on a local stand-in for its base image and test the image.
#
#  1. stand-in for python:3.10-slim-bookworm: `debootstrap --variant=minbase bookworm` plus the
#     CPython 3.10 that make setup uses here (or PYTHON=...), copied into /usr/local as the official
#     image has it (scripts/standin_base.sh);
#  2. the image, built from a clone of the committed tree (HEAD) with podman (--isolation chroot),
#     or docker where a daemon answers;
#  3. inside it, as its own user (bytecode caching on): make test, make reproduce ONLY=quickstart SCALE=quick,
#     which must leave `git status` clean (it writes artifacts/_quick/), with the checkout's shared/data (the
#     datasets, where this machine has them) mounted read-only where hepkg looks for it, since the tests
#     would otherwise download them;
#  4. its CMD, JupyterLab, started on a free port: curl must be refused without the token and
#     answered with it, the server must list the notebooks and artifacts and open on the README.
# Everything lives in WORKDIR (podman's storage, build cache, clone) and is removed at the end
# unless KEEP=1; a kept WORKDIR's stand-in base is reused by the next run.
# Needs root and: apt-get install podman buildah debootstrap curl. .ci/run runs it after the other suites.
# Environment: KEEP=1, PYTHON=/path/to/python3.10, PYTEST_ARGS (passed to make test inside),
#              WORKDIR (default /var/tmp/hepkg-docker-test), COMPUTE=cpu|gpu, REV (default HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
WORKDIR=${WORKDIR:-/var/tmp/hepkg-docker-test}
KEEP=${KEEP:-0}
COMPUTE=${COMPUTE:-cpu}
BASE=localhost/hepkg-standin-python:3.10-slim-bookworm
IMAGE=localhost/hepkg:docker-test-$COMPUTE
TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
START=$SECONDS

say() { printf 'docker-test [%s]: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { echo "docker-test: error: $*" >&2; exit 1; }
REV=$(git rev-parse --verify "${REV:-HEAD}^{commit}") || die "REV=${REV:-} is not a commit"
elapsed() { local s=$((SECONDS - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, podman's storage); run: sudo make docker-test"
for tool in debootstrap curl git; do
  command -v $tool >/dev/null || die "$tool not found; run: apt-get install -y podman buildah debootstrap curl"
done
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  ENGINE=docker
else
  command -v podman >/dev/null && command -v buildah >/dev/null ||
    die "no docker daemon and no podman/buildah; run: apt-get install -y podman buildah"
  ENGINE=podman
fi

mkdir -p "$WORKDIR/tmp"
export TMPDIR=$WORKDIR/tmp  # podman's and buildah's temporary files and buildah's RUN --mount=type=cache
STORE=(--root "$WORKDIR/storage" --runroot "$WORKDIR/run" --storage-driver overlay)
podman() { command podman "${STORE[@]}" "$@"; }
buildah() { command buildah "${STORE[@]}" "$@"; }
CONTAINER=
JUPYTER_PID=

cleanup() {
  local rc=$?
  set +e  # remove all that can be removed
  [ -n "$JUPYTER_PID" ] && kill "$JUPYTER_PID" 2>/dev/null && wait "$JUPYTER_PID" 2>/dev/null
  if [ "$KEEP" = 1 ]; then
    say "kept $WORKDIR (image $IMAGE${CONTAINER:+, container $CONTAINER})"
    [ $ENGINE = podman ] && say "use it with: podman --root $WORKDIR/storage --runroot $WORKDIR/run images"
  else
    [ -n "$CONTAINER" ] && buildah rm "$CONTAINER" >/dev/null 2>&1
    if [ $ENGINE = podman ]; then  # only this run's storage (podman system reset would also drop networks)
      podman rmi --all --force >/dev/null 2>&1 || true
    else
      docker image rm -f "$IMAGE" "$BASE" >/dev/null 2>&1 || true
    fi
    findmnt -rn -o TARGET | grep "^$WORKDIR/" | sort -r | xargs -r umount  # the storage's own mount
    findmnt -rn -o TARGET | grep -q "^$WORKDIR/" && die "mounts left under $WORKDIR; not removing it"
    rm -rf --one-file-system "$WORKDIR"
    say "removed $WORKDIR"
  fi
  exit $rc
}
trap cleanup EXIT

engine_has() { $ENGINE image exists "$1" 2>/dev/null || $ENGINE image inspect "$1" >/dev/null 2>&1; }

# 1. the stand-in base
if engine_has "$BASE"; then
  say "reusing the stand-in base $BASE kept in $WORKDIR"
else
  t=$SECONDS
  bash scripts/standin_base.sh "$WORKDIR/rootfs" "$ENGINE" "$BASE" "${STORE[@]}"
  rm -rf --one-file-system "$WORKDIR/rootfs"
  say "stand-in base built in $(elapsed $t)"
fi

# 2. the image, from the committed tree
rm -rf "$WORKDIR/src"
git clone -q --no-hardlinks "$REPO" "$WORKDIR/src"
git -C "$WORKDIR/src" checkout -q --detach "$REV"
say "building $IMAGE from $(git -C "$WORKDIR/src" rev-parse --short HEAD) with $ENGINE (COMPUTE=$COMPUTE)"
t=$SECONDS
if [ $ENGINE = podman ]; then
  podman build --isolation chroot --build-arg BASE=$BASE --build-arg COMPUTE=$COMPUTE -t $IMAGE "$WORKDIR/src"
else
  docker build --build-arg BASE=$BASE --build-arg COMPUTE=$COMPUTE -t $IMAGE "$WORKDIR/src"
fi
BUILD_TIME=$(elapsed $t)
SIZE=$($ENGINE image inspect --format '{{.Size}}' $IMAGE)
say "built in $BUILD_TIME; image size $((SIZE / 1000000)) MB"
[ "$($ENGINE image inspect --format '{{.Config.User}}' $IMAGE)" = hepkg ] || die "the image does not run as user hepkg"

# 3. the tests inside the image
DATA=()  # as hepkg.paths.shared_data() finds it beside the checkout (or beside the main one, from a git worktree)
MAIN=$(dirname "$(git rev-parse --path-format=absolute --git-common-dir)")
for d in "$REPO/../shared/data" "$REPO/shared/data" "$MAIN/../shared/data"; do
  [ -d "$d" ] && { DATA=(--volume "$(readlink -f "$d"):/home/hepkg/hepkg/shared/data:ro"); say "datasets from $d"; break; }
done
if [ $ENGINE = podman ]; then
  CONTAINER=$(buildah from --pull-never $IMAGE)
  inside() { buildah run --isolation chroot "${DATA[@]}" "$@" "$CONTAINER" -- "${CMD[@]}"; }
else
  inside() { docker run --rm "${DATA[@]}" "$@" $IMAGE "${CMD[@]}"; }
fi
CMD=(bash -c 'echo "user $(id -un), $(python --version), in $PWD"; test "$(id -u)" != 0')
inside
for target in "test PYTEST_ARGS='${PYTEST_ARGS:-}'" "reproduce ONLY=quickstart SCALE=quick"; do
  say "inside: make $target"
  t=$SECONDS
  CMD=(bash -c "make $target")
  inside || die "make $target failed inside the image"
  say "make $target passed inside the image in $(elapsed $t)"
done
CMD=(bash -c 'changed=$(git status --porcelain); test -z "$changed" || { echo "$changed"; exit 1; }')
inside || die "make test or the quick reproduction changed the committed tree inside the image (above)"
say "the committed tree is unchanged inside the image (the quick run wrote artifacts/_quick/)"

# 4. JupyterLab: the image's CMD on a free port, token from the environment, stopped by /api/shutdown
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
read -ra CMD < <($ENGINE image inspect --format '{{range .Config.Cmd}}{{.}} {{end}}' $IMAGE)
say "inside: ${CMD[*]} (port $PORT)"
CMD=(timeout 300 "${CMD[@]}" --ServerApp.port_retries=0)
if [ $ENGINE = podman ]; then  # chroot isolation shares the host's network
  inside --env JUPYTER_PORT=$PORT --env JUPYTER_TOKEN=$TOKEN > "$WORKDIR/jupyter.log" 2>&1 &
else
  inside -p 127.0.0.1:$PORT:8888 -e JUPYTER_TOKEN=$TOKEN > "$WORKDIR/jupyter.log" 2>&1 &
fi
JUPYTER_PID=$!
url=http://127.0.0.1:$PORT
jupyter_fails() { cat "$WORKDIR/jupyter.log" >&2; die "$*"; }
for _ in $(seq 120); do
  curl -s -o /dev/null "$url/api/status" && break
  kill -0 $JUPYTER_PID 2>/dev/null || jupyter_fails "JupyterLab exited"
  sleep 1
done
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
auth=(-H "Authorization: token $TOKEN")
[ "$(code "$url/api/status")" = 403 ] || jupyter_fails "JupyterLab answers without the token"
[ "$(code "${auth[@]}" "$url/lab")" = 200 ] || jupyter_fails "JupyterLab does not serve /lab with the token"
opens=$(curl -s -o /dev/null -w '%{redirect_url}' "${auth[@]}" "$url/")
[[ "$opens" == */lab/tree/README.md ]] || jupyter_fails "JupyterLab does not open on the README: / redirects to $opens"
listing=$(curl -sf "${auth[@]}" "$url/api/contents") || jupyter_fails "JupyterLab does not list its root"
for dir in notebooks artifacts; do
  grep -q "\"name\": *\"$dir\"" <<< "$listing" || jupyter_fails "JupyterLab's root does not show $dir/: $listing"
done
curl -sf -X POST "${auth[@]}" "$url/api/shutdown" >/dev/null || jupyter_fails "JupyterLab refused /api/shutdown"
wait $JUPYTER_PID || jupyter_fails "JupyterLab did not shut down cleanly"
JUPYTER_PID=
say "JupyterLab answered on its port: 403 without the token; /lab, the README and the repository (notebooks/, artifacts/) with it"

say "passed in $(elapsed $START): image built in $BUILD_TIME, $((SIZE / 1000000)) MB; make test, make reproduce ONLY=quickstart SCALE=quick and JupyterLab passed inside it"
