# The default sandbox image: a Debian base, Python 3, uv, the sandox
# executor, and an unprivileged user. The orchestrator builds every
# sandbox's own image FROM this one, adding the user's tool files.
ARG BASE=sandox/base:bookworm
FROM ${BASE}

# python3 and procps are already in a base made by debootstrap; a pulled
# debian:bookworm-slim needs them installed.
RUN set -eu; \
    if ! command -v python3 >/dev/null || ! command -v ps >/dev/null; then \
      export DEBIAN_FRONTEND=noninteractive; \
      apt-get update; \
      apt-get install -y --no-install-recommends python3 python3-venv ca-certificates procps; \
      rm -rf /var/lib/apt/lists/*; \
    fi; \
    groupadd --gid 10001 sandox; \
    useradd --uid 10001 --gid 10001 --home-dir /workspace --shell /bin/bash --no-create-home sandox; \
    mkdir -p /workspace /opt/sandox/tools; \
    chown sandox:sandox /workspace

COPY uv /usr/local/bin/uv
COPY sandox-executor sandox-executor-full /usr/local/bin/

ENV HOME=/workspace \
    SANDOX_TOOLS_DIR=/opt/sandox/tools \
    SANDOX_WORKSPACE=/workspace \
    UV_PYTHON=python3 \
    UV_PYTHON_DOWNLOADS=never \
    UV_CACHE_DIR=/workspace/.cache/uv \
    UV_LINK_MODE=copy \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

USER 10001:10001
WORKDIR /workspace
ENTRYPOINT ["/usr/local/bin/sandox-executor"]
