# The set-up of a Debian or Ubuntu machine, shared by the README's two commands (tools/start.sh,
# tools/test.sh) and CI (.ci/run): each function installs or starts one thing only when it is
# missing, so that running it again changes nothing. Source it from the repository's root:
#   . tools/machine/setup.sh && ensure_mariadb && choose_test_admin_url && echo "$TEST_DATABASE_ADMIN_URL"
# As root it runs apt-get and starts the servers itself; as another user, through sudo.

LOG_TAG=${LOG_TAG:-setup}
if [[ $(id -u) == 0 ]]; then SUDO=; else SUDO=sudo; fi

log() { printf '[%s] %s\n' "$LOG_TAG" "$*"; }
warn() { printf '[%s] WARNING: %s\n' "$LOG_TAG" "$*" >&2; }

# Debian's packages, installed only when missing. `apt-get update` runs at most once per run.
APT_UPDATED=false
apt_install() {
  if [[ $APT_UPDATED != true ]]; then
    log "apt-get update"
    $SUDO apt-get update -qq
    APT_UPDATED=true
  fi
  log "apt-get install $*"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" </dev/null
}

# True while something accepts TCP connections on 127.0.0.1:$1.
port_open() { timeout 3 bash -c "</dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# ---------------------------------------------------------------- dependencies
install_node_modules() {
  if [[ ${NODE_MODULES_INSTALLED:-} == true ]]; then
    return 0
  elif [[ ! -d node_modules || ${CI:-} == true ]]; then
    log "npm ci"
    npm ci --no-audit --no-fund
    export NODE_MODULES_INSTALLED=true # once per run, however many scripts it calls
  else
    log "node_modules present, skipping npm ci (set CI=true to force it)"
  fi
}

# ---------------------------------------------------------------- MariaDB
mariadb_socket_ok() { $SUDO mariadb --connect-timeout=2 -uroot -e 'select 1' >/dev/null 2>&1; }

ensure_mariadb() {
  if mariadb_socket_ok; then
    log "MariaDB answers on its socket"
  else
    if [[ ! -x /usr/sbin/mariadbd ]] || ! command -v mariadb >/dev/null; then
      apt_install mariadb-server
    fi
    # A fresh data directory (the package's postinst normally does this).
    if [[ ! -d /var/lib/mysql/mysql ]]; then
      log "initialising /var/lib/mysql"
      $SUDO mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
    fi
    $SUDO mkdir -p /run/mysqld
    $SUDO chown mysql:mysql /run/mysqld
    # Debian's /etc/mysql/my.cnf sets user=mysql, so mariadbd started as root drops to mysql.
    log "starting MariaDB"
    $SUDO start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  fi

  local i
  for ((i = 0; i < 60; i++)); do
    if mariadb_socket_ok && port_open 3306; then
      log "MariaDB is up (socket and 127.0.0.1:3306)"
      return 0
    fi
    sleep 1
  done
  echo "[$LOG_TAG] ERROR: MariaDB did not answer on its socket and 127.0.0.1:3306 within 60 s" >&2
  tail -n 30 /var/log/mysql/error.log >&2 2>/dev/null || true
  return 1
}

# Sets and exports TEST_DATABASE_ADMIN_URL (see test/support/test-database.ts).
choose_test_admin_url() {
  if [[ -n ${TEST_DATABASE_ADMIN_URL:-} ]]; then
    log "using TEST_DATABASE_ADMIN_URL from the environment"
  elif mariadb --connect-timeout=2 --protocol=TCP -h127.0.0.1 -P3306 -uroot -e 'select 1' >/dev/null 2>&1; then
    log "root with an empty password works over TCP: tests use it"
    export TEST_DATABASE_ADMIN_URL=mysql://root@127.0.0.1:3306
  else
    # Debian's default: root only through unix_socket auth. A dedicated account that can
    # create and drop only the pcs_test_* databases (the backslashes keep _ literal).
    log "root needs the socket: creating the account pcs_test for the tests"
    $SUDO mariadb -uroot <<'SQL'
CREATE USER IF NOT EXISTS 'pcs_test'@'127.0.0.1' IDENTIFIED BY 'pcs_test';
CREATE USER IF NOT EXISTS 'pcs_test'@'localhost' IDENTIFIED BY 'pcs_test';
ALTER USER 'pcs_test'@'127.0.0.1' IDENTIFIED BY 'pcs_test';
ALTER USER 'pcs_test'@'localhost' IDENTIFIED BY 'pcs_test';
GRANT ALL PRIVILEGES ON `pcs\_test\_%`.* TO 'pcs_test'@'127.0.0.1';
GRANT ALL PRIVILEGES ON `pcs\_test\_%`.* TO 'pcs_test'@'localhost';
-- test/medium/commit-ack.medium-spec.ts holds every COMMIT for a moment (BACKUP STAGE BLOCK_COMMIT)
-- and reads which session waits with what written (INNODB_TRX): RELOAD and PROCESS.
GRANT RELOAD, PROCESS ON *.* TO 'pcs_test'@'127.0.0.1';
GRANT RELOAD, PROCESS ON *.* TO 'pcs_test'@'localhost';
SQL
    export TEST_DATABASE_ADMIN_URL=mysql://pcs_test:pcs_test@127.0.0.1:3306
  fi
}

# ---------------------------------------------------------------- RabbitMQ (the event suites publish to it)
ensure_rabbitmq() {
  if port_open 5672; then
    log "RabbitMQ answers on 127.0.0.1:5672"
    return 0
  fi
  if ! command -v rabbitmq-server >/dev/null; then
    apt_install rabbitmq-server || { warn "could not install rabbitmq-server"; return 1; }
  fi
  log "starting RabbitMQ"
  $SUDO rabbitmq-server -detached </dev/null || { warn "rabbitmq-server -detached failed"; return 1; }
  local i
  for ((i = 0; i < 90; i++)); do
    if port_open 5672; then
      log "RabbitMQ is up on 127.0.0.1:5672"
      return 0
    fi
    sleep 1
  done
  warn "RabbitMQ did not answer on 127.0.0.1:5672 within 90 s"
  return 1
}

# ---------------------------------------------------------------- promtool (tests the alert rules)
ensure_promtool() {
  if command -v promtool >/dev/null; then
    log "promtool $(promtool --version 2>&1 | head -n 1)"
    return 0
  fi
  # Debian's prometheus package ships promtool; the server it also installs is not started.
  apt_install --no-install-recommends prometheus
}

# ---------------------------------------------------------------- redis-server (the fast path's suites start their own)
ensure_redis_server() {
  if command -v redis-server >/dev/null; then
    log "$(redis-server --version)"
    return 0
  fi
  # Only the binary is needed: the suites run private servers on free ports, never the system one.
  apt_install --no-install-recommends redis-server
}

# ---------------------------------------------------------------- Chromium (the console's browser suite)
ensure_chromium() {
  # A CJK font: without one the console's Chinese pages (and their screenshots) are boxes.
  if ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then
    apt_install --no-install-recommends fonts-noto-cjk
  fi
  if [[ -x /usr/bin/chromium ]]; then
    log "$(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
    return 0
  fi
  # Debian's build: the browser suite never lets a test tool download a browser of its own.
  apt_install chromium
}

# ---------------------------------------------------------------- Galera (its own suite on a three-node cluster)
run_galera_suite() {
  [[ -r /usr/lib/galera/libgalera_smm.so ]] || apt_install galera-4
  command -v rsync >/dev/null || apt_install rsync # the state transfer (wsrep_sst_method=rsync)
  local status=0
  if bash tools/galera/cluster.sh start; then
    TEST_DATABASE_ADMIN_URL=mysql://root@127.0.0.1:33061 npm run test:galera || status=$?
  else
    status=1
  fi
  bash tools/galera/cluster.sh stop || true
  return "$status"
}

# ---------------------------------------------------------------- Node 24 (tools/node/use-node24.sh)
# use-node24.sh fetches Node 24 with npm when the machine's node is older; a machine without npm
# gets Debian's (any version will do to fetch Node 24).
ensure_node24() {
  command -v npm >/dev/null || apt_install --no-install-recommends npm
  # shellcheck source=tools/node/use-node24.sh
  . tools/node/use-node24.sh
  log "node $(node --version), npm $(npm --version)"
}

# ---------------------------------------------------------------- the service's database
# DATABASE_URL when the environment or .env sets it; else root over TCP when it needs no password;
# else (Debian's default: root only through its socket) an account `payments` that may use only the
# database `payments`, with a password made now, written to .env (read by the service at start).
choose_service_database_url() {
  if [[ -n ${DATABASE_URL:-} ]] || grep -qs '^DATABASE_URL=' .env; then
    log "using DATABASE_URL from the environment or .env"
  elif mariadb --connect-timeout=2 --protocol=TCP -h127.0.0.1 -P3306 -uroot -e 'select 1' >/dev/null 2>&1; then
    log "root with an empty password works over TCP: the service uses it (the default DATABASE_URL)"
  else
    log "root needs the socket: creating the account payments for the service, its URL in .env"
    local password
    password="$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')"
    $SUDO mariadb -uroot <<SQL
CREATE USER IF NOT EXISTS 'payments'@'127.0.0.1';
ALTER USER 'payments'@'127.0.0.1' IDENTIFIED BY '$password';
GRANT ALL PRIVILEGES ON \`payments\`.* TO 'payments'@'127.0.0.1';
SQL
    (umask 077 && printf 'DATABASE_URL=mariadb://payments:%s@127.0.0.1:3306/payments\n' "$password" >>.env)
  fi
  if [[ -z ${DATABASE_URL:-} ]] && grep -qs '^DATABASE_URL=' .env; then
    DATABASE_URL="$(grep '^DATABASE_URL=' .env | tail -n 1 | cut -d= -f2-)"
    export DATABASE_URL
  fi
}
