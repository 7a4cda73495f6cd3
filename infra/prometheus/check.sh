#!/usr/bin/env bash
# Checks the Prometheus rules, their unit tests and the scrape config with promtool.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v promtool >/dev/null 2>&1; then
  echo "check.sh: promtool not found; install the Debian package 'prometheus'" >&2
  echo "  (DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus)" >&2
  exit 1
fi

promtool check rules rules.yml
promtool test rules rules.test.yml
promtool check config prometheus.yml
