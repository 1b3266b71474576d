#!/usr/bin/env bash
# The README's first command: `bash tools/start.sh` starts the service on a fresh Debian or Ubuntu
# machine. It brings Node 24 and MariaDB when they are missing (tools/machine/setup.sh, as CI does),
# installs the dependencies, builds, creates the database `payments` (with an account of its own
# when root needs the socket, its DATABASE_URL written to .env), applies the migrations and starts
# the service in the foreground on http://localhost:3000 (PORT) and the management port 9464
# (METRICS_PORT). Running it again changes nothing but the build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
LOG_TAG=start
# shellcheck source=tools/machine/setup.sh
. tools/machine/setup.sh

ensure_node24
install_node_modules
ensure_mariadb
choose_service_database_url
log "npm run build"
npm run build
log "npm run db:create"
npm run db:create
log "npm run migrate"
npm run migrate
log "npm start"
exec npm start
