# syntax=docker/dockerfile:1
# ferry as a container image, for the CronJob and the sharded Job in deploy/kubernetes:
#   docker build -t registry.example.com/ferry:0.1.0 .
# (docs/scale-out.md, "The container image"). The run stage holds Node, tini, and ferry with its
# production dependencies under /opt/ferry; it runs as user 65532, writes only to
# /var/lib/ferry (FERRY_STATE_DIR, a volume) and /tmp, and so works with a read-only root.
# test/deploy/install.test.ts lays out the same tree with deploy/image/layout.sh and runs it;
# `npm run test:image` builds both targets and runs them (docs/scale-out.md, "The image, tested").

# The Active LTS line (docs/scale-out.md, *Node lines*).
ARG NODE_VERSION=26

FROM node:${NODE_VERSION}-bookworm-slim AS build
# better-sqlite3 builds from source where no prebuilt binary can be fetched.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
# The build tools only (tsc): the addon is built where the tarball is installed, below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# /opt/ferry/sbom.cdx.json: the SBOM of the production dependencies the image carries (CycloneDX,
# by CycloneDX's own npm tool: `npm sbom --omit dev` of npm 11 leaves out the ones dev tools share).
RUN node deploy/package/pack.mjs --out /tmp \
  && sh deploy/image/layout.sh /tmp/ferry-*.tgz /image \
  && npx cyclonedx-npm --omit dev --output-format JSON --output-file /image/opt/ferry/sbom.cdx.json

FROM node:${NODE_VERSION}-bookworm-slim AS run
# What the image is (OCI annotations): its version is package.json's (test/deploy/install.test.ts
# holds them equal); the revision and the source address come from the build
# (`--build-arg REVISION=$(git rev-parse HEAD) --build-arg SOURCE=https://…`).
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE=
LABEL org.opencontainers.image.title="ferry" \
      org.opencontainers.image.description="Bulk sync and migration toolkit for the document, playbook and assistant management service, with its emulator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="MIT"
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
COPY --from=build /image/opt/ferry /opt/ferry
COPY --from=build --chown=65532:65532 /image/var/lib/ferry /var/lib/ferry
COPY --from=build /src/deploy/image/emulator-health.mjs /opt/ferry/emulator-health.mjs
ENV PATH=/opt/ferry/bin:$PATH \
    FERRY_STATE_DIR=/var/lib/ferry \
    HOME=/var/lib/ferry \
    NODE_ENV=production
USER 65532:65532
WORKDIR /var/lib/ferry
VOLUME ["/var/lib/ferry"]
# tini is PID 1: it forwards SIGTERM and SIGINT to ferry, which stops cleanly and leaves a
# resumable store, and it reaps any child.
ENTRYPOINT ["/usr/bin/tini", "--", "ferry"]
CMD ["--help"]

# The emulator alone, for other teams' CI (docs/emulator.md, "In your own tests"):
#   docker build --target emulator -t ferry-emulator .
# Its command is the emulator, since a CI service container cannot be given one. State is in
# memory unless `--data /var/lib/ferry/emulator` is added; the admin token comes from
# FERRY_EMULATOR_ADMIN_TOKEN, or is made up and given in the ready line (`--ready-json`).
FROM run AS emulator
EXPOSE 4010
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=3 CMD ["node", "/opt/ferry/emulator-health.mjs"]
CMD ["emulator", "--host", "0.0.0.0", "--port", "4010"]

# The default target: ferry itself (the CronJob and the sharded Job in deploy/kubernetes).
FROM run
