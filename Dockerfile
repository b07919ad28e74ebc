# hepkg image: JupyterLab on the repository, every HE backend installed by `make setup`
# (the exact pins of pyproject.toml, Pyfhel built against the system GSL/zlib/zstd).
#   docker build -t hepkg .                                   CPU, on python:3.10-slim-bookworm
#   docker build --build-arg BASE=nvidia/cuda:12.4.1-runtime-ubuntu22.04 \
#                --build-arg COMPUTE=gpu -t hepkg:gpu .       adds CuPy; Ubuntu's python3.10
#   docker run --rm --init -p 8888:8888 hepkg                 then open the URL with the token it prints
# BASE may be any Debian or Ubuntu image with a Python 3.10 on PATH or python3.10 in its apt
# repositories. `make docker-test` builds this file on a local stand-in base and tests the image.
ARG BASE=python:3.10-slim-bookworm

# What both stages share: the runtime libraries of the Pyfhel build and of the wheels
# (OpenMP, zstd, zlib), git (artifacts record the revision they were computed from),
# make, and the unprivileged user.
FROM ${BASE} AS runtime
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 PIP_DISABLE_PIP_VERSION_CHECK=1 MPLBACKEND=Agg
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git make libgomp1 libzstd1 zlib1g \
       $(command -v python3.10 >/dev/null || echo python3.10) \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 --shell /bin/bash hepkg

# .venv as `make setup` makes it; compilers and headers stay in this stage.
FROM runtime AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential libmsgsl-dev libzstd-dev zlib1g-dev \
       $(command -v python3.10 | grep -q '^/usr/bin/' && echo python3.10-venv python3.10-dev) \
    && rm -rf /var/lib/apt/lists/*
USER hepkg
WORKDIR /home/hepkg/hepkg
COPY --chown=hepkg:hepkg pyproject.toml README.md Makefile ./
COPY --chown=hepkg:hepkg scripts/setup.sh scripts/build_pyfhel.py scripts/
COPY --chown=hepkg:hepkg hepkg/ hepkg/
ARG COMPUTE=cpu
# The cache keeps pip's downloads and setup's Pyfhel wheel across rebuilds, outside the image.
RUN --mount=type=cache,target=/home/hepkg/.cache,uid=1000,gid=1000 \
    make setup \
    && if [ "$COMPUTE" = gpu ]; then .venv/bin/pip install -q -e ".[gpu]"; fi

FROM runtime
USER hepkg
WORKDIR /home/hepkg/hepkg
COPY --from=build --chown=hepkg:hepkg /home/hepkg/hepkg/.venv .venv
COPY --chown=hepkg:hepkg . .
# The copied sources are older than the venv built from them: make sees setup as done.
RUN touch .venv/.hepkg-installed
ENV PATH=/home/hepkg/hepkg/.venv/bin:$PATH
EXPOSE 8888
# Port 8888 (JUPYTER_PORT changes it). Token authentication stays on (Jupyter Server's default):
# the server prints a random token in its URL, or takes yours from -e JUPYTER_TOKEN=... or from
# the file named by JUPYTER_TOKEN_FILE; a password instead: append
# --PasswordIdentityProvider.hashed_password='argon2:...' (jupyter_server.auth.passwd makes one).
# It opens on the README, Markdown shown rendered (.jupyterlab/overrides.json), as `make lab` does.
CMD ["jupyter", "lab", "--ip=0.0.0.0", "--no-browser", "--ServerApp.root_dir=/home/hepkg/hepkg", \
     "--LabApp.default_url=/lab/tree/README.md", "--LabApp.app_settings_dir=/home/hepkg/hepkg/.jupyterlab"]
