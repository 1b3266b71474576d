#!/usr/bin/env bash
# The README's second command: `bash tools/test.sh` passes the whole test suite on a fresh Debian or
# Ubuntu machine. It brings what the tests need when it is missing (tools/machine/setup.sh): Node
# 24, the dependencies, MariaDB on 127.0.0.1:3306 and an account that may create pcs_test_*
# databases, RabbitMQ on 127.0.0.1:5672, redis-server and Debian's Chromium; then runs `npm test`,
# then `npm run test:serial` (the suites that hold the whole database server, alone).
# .ci/run runs it too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
LOG_TAG=test
# shellcheck source=tools/machine/setup.sh
. tools/machine/setup.sh

ensure_node24
install_node_modules
ensure_mariadb
choose_test_admin_url
ensure_rabbitmq
ensure_redis_server
ensure_chromium
log "npm test"
npm test
# Suites that hold the whole server (every COMMIT blocked for a moment) run alone, after the rest.
log "npm run test:serial"
npm run test:serial
