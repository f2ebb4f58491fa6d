# The control-plane image: the NATS server, the orchestrator, the search
# service, the data service and the dashboard, each run as its own
# container from this one image (see compose.yaml).
ARG BASE=sandox/base:bookworm
FROM ${BASE}
RUN set -eu; \
    groupadd --gid 10002 sandox-nats; \
    useradd --uid 10002 --gid 10002 --no-create-home --shell /usr/sbin/nologin sandox-nats; \
    mkdir -p /var/lib/sandox/nats /run/sandox-nats; \
    chown sandox-nats:sandox-nats /var/lib/sandox/nats /run/sandox-nats; \
    chmod 0755 /run/sandox-nats
COPY sandox-nats /usr/local/bin/sandox-nats
COPY sandox-orchestrator /usr/local/bin/sandox-orchestrator
COPY sandox-search /usr/local/bin/sandox-search
COPY sandox-data /usr/local/bin/sandox-data
COPY sandox-dashboard /usr/local/bin/sandox-dashboard
