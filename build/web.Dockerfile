# The base of the sandbox image with web_tools' browser: the Debian base
# plus the distribution's Chromium and fonts, which the browser tools drive
# through go-rod (never a downloaded browser). build.Builder.WebSandbox
# builds sandbox.Dockerfile on top of it, so this slow layer is cached
# while the executor changes. Until the tool-family registry installs each
# family's packages in the generated Dockerfile, it is its own image.
ARG BASE=sandox/base:bookworm
FROM ${BASE}
RUN set -eu; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update; \
    apt-get install -y --no-install-recommends chromium fonts-liberation fonts-dejavu-core; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
