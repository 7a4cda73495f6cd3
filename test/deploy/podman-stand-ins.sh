#!/usr/bin/env bash
# Prepares podman on a machine without a Docker engine or an image registry, for the deployment tests
# (test/deploy): a containers.conf that works without cgroup delegation or raised rlimits, and
# stand-ins for the two public images the project uses, built once per machine and kept in podman's
# image store:
#   node:<major>-bookworm-slim   Debian bookworm (minbase) + this machine's node and npm, user node (1000)
#   <redis image>                 that base + Debian's redis-server, started as the official image
#                                 starts it (no protected mode: it serves the compose network)
#   <prometheus image>            that base + Debian's prometheus, the binary as entrypoint
# Usage: podman-stand-ins.sh <cache-dir> <redis image> <prometheus image> (the names docker-compose.yml
# runs, fully qualified). Prints the containers.conf path on its last line;
# point CONTAINERS_CONF at it for every podman call. Progress goes to stderr with durations.
set -euo pipefail

cache_dir=$1
redis_image=$2
prometheus_image=$3
node_major=$(node -p 'process.versions.node.split(".")[0]')
node_image=docker.io/library/node:${node_major}-bookworm-slim
# Raised whenever what a stand-in holds changes, so machines that cached an older one rebuild it.
revision=2
mkdir -p "$cache_dir"

step() { printf 'stand-ins: %s\n' "$*" >&2; }
timed() {
  local what=$1 started=$SECONDS
  shift
  step "$what…"
  "$@"
  step "$what: done in $((SECONDS - started)) s"
}

# crun (podman's default) fails here on setrlimit(RLIMIT_NOFILE) and on hybrid cgroups; runc with the
# rlimits inherited as they are works on the same machines.
conf=$cache_dir/containers.conf
cat >"$conf" <<'CONF'
[containers]
default_ulimits = []

[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF=$conf

build_node_base() {
  local root=$cache_dir/rootfs
  rm -rf "$root"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$root" >"$cache_dir/debootstrap.log" 2>&1 ||
    { tail -20 "$cache_dir/debootstrap.log" >&2; return 1; }
  # Node as the official image lays it out: the binary and npm under /usr/local.
  local prefix
  prefix=$(dirname "$(dirname "$(command -v node)")")
  install -m 0755 "$(command -v node)" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$prefix/lib/node_modules/npm" "$root/usr/local/lib/node_modules/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  # Traffic from inside a build may pass a TLS-inspecting proxy whose authority only this machine's
  # bundle carries: npm (through node) and apt trust that bundle.
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/archives/"*.deb
  tar -C "$root" -c . | podman import --quiet \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' \
    --change "LABEL tributary.stand-in=$revision" \
    --message "stand-in for $node_image" - "$node_image" >/dev/null
  rm -rf "$root"
}

build_redis() {
  local context=$cache_dir/redis
  mkdir -p "$context"
  # The official image's entrypoint turns protected mode off for a server configured on its command
  # line: without it Redis refuses every client that is not on loopback.
  cat >"$context/entrypoint.sh" <<'SH'
#!/bin/sh
if [ "$1" = redis-server ]; then set -- "$@" --protected-mode no; fi
exec "$@"
SH
  cat >"$context/Containerfile" <<FILE
FROM $node_image
RUN apt-get update && apt-get install -y --no-install-recommends redis-server && rm -rf /var/lib/apt/lists/*
COPY --chmod=0755 entrypoint.sh /usr/local/bin/redis-entrypoint.sh
WORKDIR /data
LABEL tributary.stand-in=$revision
ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]
CMD ["redis-server"]
FILE
  podman build --quiet --network host --tag "$redis_image" -f "$context/Containerfile" "$context" >/dev/null
}

build_prometheus() {
  local context=$cache_dir/prometheus
  mkdir -p "$context"
  cat >"$context/Containerfile" <<FILE
FROM $node_image
RUN apt-get update && apt-get install -y --no-install-recommends prometheus && rm -rf /var/lib/apt/lists/*
WORKDIR /prometheus
LABEL tributary.stand-in=$revision
ENTRYPOINT ["/usr/bin/prometheus"]
FILE
  podman build --quiet --network host --tag "$prometheus_image" -f "$context/Containerfile" "$context" >/dev/null
}

current() { [[ $(podman image inspect --format '{{index .Labels "tributary.stand-in"}}' "$1" 2>/dev/null) == "$revision" ]]; }

if current "$node_image"; then step "$node_image present"; else
  timed "building $node_image (debootstrap bookworm, about 1-3 min the first time)" build_node_base
fi
if current "$redis_image"; then step "$redis_image present"; else
  timed "building $redis_image (Debian redis-server)" build_redis
fi
if current "$prometheus_image"; then step "$prometheus_image present"; else
  timed "building $prometheus_image (Debian prometheus)" build_prometheus
fi
echo "$conf"
