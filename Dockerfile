# hypercache-server container image: one process is one cache node.
#
# Base images are pinned by exact tag, not by digest: they could not be pulled where this file
# was written, and a digest nobody has checked is worse than an honest tag. Pin the digests in
# your release pipeline (`docker buildx imagetools inspect <image>`), e.g. with Renovate.
#   build:   Node 20.20.2 (the version the test suite runs on) on Debian 12 "bookworm"
#   runtime: distroless Node 20 on Debian 12, the variant that runs as uid/gid 65532 ("nonroot")

# ---- build: install from the lockfile, compile, assemble build/image-root --------------------
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /src
# The manifest and the lockfile come first, so the dependency layer is reused until they change.
# No install scripts: `prepare` would generate and compile before the sources are here, and no
# dependency needs a script of its own.
COPY package.json package-lock.json ./
# The workspaces (the SDK, whose browser build the dashboard bundles, and the CLI) are installed
# and linked by the same npm ci: their manifests come with it, their sources after, so an edit of
# the SDK or the CLI does not install every dependency again.
COPY packages/client/package.json packages/client/
COPY packages/cli/package.json packages/cli/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY packages/ packages/
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/ scripts/
COPY openapi/ openapi/
COPY gen/ gen/
COPY src/ src/
COPY dashboard/ dashboard/
# dist/ (the server and the dashboard's built files) plus the production node_modules, package.json and openapi/ into build/image-root
# (tini joins them below).
RUN npm run package
# tini runs as PID 1 and passes signals on to node: node as PID 1 ignores a signal that arrives
# before its handlers are in place (its own start-up, about 40 ms), and a pod deleted then would
# run until it is killed at the end of its grace period. The static build needs no library.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && cp /usr/bin/tini-static build/image-root/tini \
 && rm -rf /var/lib/apt/lists/*

# ---- runtime: the assembled folder only -------------------------------------------------------
FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
# Owned by root and read-only for the server's user: the process cannot change its own code.
COPY --from=build /src/build/image-root/ /app/
ENV NODE_ENV=production
USER 65532:65532
# client API, management API (/livez, /readyz, /metrics), peer transport
EXPOSE 8080 8081 7946
# SIGTERM starts a drain (bounded by SERVICE_DRAIN_TIMEOUT), then a clean exit 0; tini hands it on.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/tini", "--", "/nodejs/bin/node"]
CMD ["/app/dist/src/main.js"]
