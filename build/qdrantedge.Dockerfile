# qdrant-edge: a Qdrant-compatible gRPC service built on Qdrant Edge
# (services/qdrantedge), for machines where Qdrant's own image cannot be
# pulled. The wheels come in the build context (downloaded on the host with
# pip, hashes checked); nothing here reaches a package index.
ARG BASE=sandox/base:bookworm
FROM ${BASE} AS install
# python3-venv is already in a base made by debootstrap; a pulled
# debian:bookworm-slim needs it installed.
RUN set -eu; \
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then \
      export DEBIAN_FRONTEND=noninteractive; \
      apt-get update; \
      apt-get install -y --no-install-recommends python3 python3-venv; \
      rm -rf /var/lib/apt/lists/*; \
    fi
COPY requirements.txt /tmp/requirements.txt
COPY wheels/ /tmp/wheels/
RUN python3 -m venv /opt/qdrantedge \
    && /opt/qdrantedge/bin/pip install --no-cache-dir --no-index --find-links /tmp/wheels \
       --require-hashes --only-binary=:all: -r /tmp/requirements.txt

FROM ${BASE}
RUN set -eu; \
    if ! command -v python3 >/dev/null; then \
      export DEBIAN_FRONTEND=noninteractive; \
      apt-get update; \
      apt-get install -y --no-install-recommends python3; \
      rm -rf /var/lib/apt/lists/*; \
    fi; \
    groupadd --gid 10003 qdrant; \
    useradd --uid 10003 --gid 10003 --no-create-home --shell /usr/sbin/nologin qdrant; \
    mkdir -p /data; \
    chown qdrant:qdrant /data
COPY --from=install /opt/qdrantedge /opt/qdrantedge
COPY src/ /opt/qdrantedge/src/
COPY tests/ /opt/qdrantedge/tests/
ENV PYTHONPATH=/opt/qdrantedge/src \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    QDRANT_EDGE_DATA=/data \
    QDRANT_EDGE_LISTEN=0.0.0.0:6334
USER 10003:10003
WORKDIR /opt/qdrantedge
VOLUME /data
EXPOSE 6334
HEALTHCHECK --interval=5s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/opt/qdrantedge/bin/python", "-m", "qdrantedge.healthcheck"]
ENTRYPOINT ["/opt/qdrantedge/bin/python", "-m", "qdrantedge"]
