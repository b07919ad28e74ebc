# hepkg image: JupyterLab on port 8888 with every backend installed.
#   docker build -t hepkg .                      (CPU)
#   docker build --build-arg COMPUTE=gpu -t hepkg:gpu .   (adds CuPy on a CUDA base)
#   docker run -p 8888:8888 hepkg
ARG COMPUTE=cpu
FROM ubuntu:22.04 AS base-cpu
FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04 AS base-gpu
FROM base-${COMPUTE}
ARG COMPUTE
ENV DEBIAN_FRONTEND=noninteractive PIP_NO_CACHE_DIR=1 MPLBACKEND=Agg
RUN apt-get update && apt-get install -y --no-install-recommends \
        python3.10 python3.10-venv python3.10-dev build-essential make git ca-certificates \
        libmsgsl-dev libzstd-dev zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 1000 hepkg
USER hepkg
WORKDIR /home/hepkg/hepkg
COPY --chown=hepkg:hepkg . .
RUN make setup PYTHON=/usr/bin/python3.10 \
    && if [ "$COMPUTE" = gpu ]; then .venv/bin/pip install -e ".[gpu]"; fi \
    && rm -rf ~/.cache/pip
ENV PATH=/home/hepkg/hepkg/.venv/bin:$PATH
EXPOSE 8888
CMD ["jupyter", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser", "--notebook-dir=/home/hepkg/hepkg"]
