#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on loopback, for the Galera suite and the benchmark.
#
#   tools/galera/cluster.sh start          bootstrap node 1, join nodes 2 and 3 (rsync SST), wait until all are Synced
#   tools/galera/cluster.sh stop           stop every node and remove the cluster's folder
#   tools/galera/cluster.sh status         one line per node: its SQL port and wsrep state
#   tools/galera/cluster.sh kill N         SIGKILL node N (what a crashed server looks like to the others)
#   tools/galera/cluster.sh start-node N   start node N again and wait until it has rejoined and is Synced
#   tools/galera/cluster.sh wait-whole     wait until the cluster has three Synced nodes
#
# Node N listens for SQL on 127.0.0.1:3306N, for the group on 4567N, for IST on 4568N and for SST
# on 4569N (N = 1..3); root has no password over TCP. Run as root: mariadbd drops to the mysql user,
# as Debian's service does. Everything lives under $GALERA_DIR (default /tmp/pcs-galera): data
# directories, sockets, logs, pid files; `stop` removes it. Needs mariadb-server, galera-4 and rsync.
set -euo pipefail

GALERA_DIR=${GALERA_DIR:-/tmp/pcs-galera}
PROVIDER=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
NODES=(1 2 3)
WAIT_SECONDS=${GALERA_WAIT_SECONDS:-60}

log() { printf '[galera] %s\n' "$*" >&2; }
die() {
  printf '[galera] ERROR: %s\n' "$*" >&2
  exit 1
}

node_dir() { echo "$GALERA_DIR/node$1"; }
sql_port() { echo "3306$1"; }
pid_of() { cat "$(node_dir "$1")/mariadbd.pid" 2>/dev/null || true; }
alive() {
  local pid
  pid=$(pid_of "$1")
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null
}

# Runs SQL on node N through its socket (root, unix_socket authentication).
node_sql() {
  local n=$1
  shift
  mariadb --connect-timeout=2 --socket="$(node_dir "$n")/mariadbd.sock" -uroot -N -B -e "$*"
}

wsrep_status() { node_sql "$1" "SHOW STATUS LIKE '$2'" 2>/dev/null | cut -f2; }

write_config() {
  local n=$1 dir
  dir=$(node_dir "$n")
  mkdir -p "$dir/data"
  cat >"$dir/my.cnf" <<CNF
[mariadbd]
user=mysql
datadir=$dir/data
socket=$dir/mariadbd.sock
pid-file=$dir/mariadbd.pid
log-error=$dir/error.log
port=$(sql_port "$n")
bind-address=127.0.0.1
skip-name-resolve
innodb_buffer_pool_size=32M
innodb_log_file_size=16M
innodb_flush_log_at_trx_commit=2
max_connections=300
performance_schema=OFF
# What Galera needs, and what the service checks at start-up.
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
# A transaction (BEGIN) and a read wait until this node has applied what the others committed before.
wsrep_sync_wait=1
wsrep_on=ON
wsrep_provider=$PROVIDER
wsrep_cluster_name=pcs_galera
wsrep_cluster_address=gcomm://127.0.0.1:45671,127.0.0.1:45672,127.0.0.1:45673
wsrep_node_name=node$n
wsrep_node_address=127.0.0.1:4567$n
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:4567$n;ist.recv_addr=127.0.0.1:4568$n;gcache.size=64M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.install_timeout=PT6S"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:4569$n
wsrep_slave_threads=2
CNF
  chown -R mysql:mysql "$dir"
}

launch() {
  local n=$1
  shift
  local dir
  dir=$(node_dir "$n")
  # setsid: the node outlives this script and is nobody's child; stop/kill find it by its pid file.
  setsid /usr/sbin/mariadbd --defaults-file="$dir/my.cnf" "$@" </dev/null >>"$dir/console.log" 2>&1 &
}

# Waits until node N says Synced and ready, or fails with its log's tail.
wait_synced() {
  local n=$1 i state ready
  for ((i = 0; i < WAIT_SECONDS * 2; i++)); do
    state=$(wsrep_status "$n" wsrep_local_state_comment || true)
    ready=$(wsrep_status "$n" wsrep_ready || true)
    if [[ $state == Synced && $ready == ON ]]; then
      log "node $n Synced (127.0.0.1:$(sql_port "$n")) after $((i / 2)) s"
      return 0
    fi
    sleep 0.5
  done
  tail -n 30 "$(node_dir "$n")/error.log" >&2 || true
  die "node $n did not reach Synced within $WAIT_SECONDS s"
}

start() {
  [[ $(id -u) == 0 ]] || die "run as root (mariadbd drops to the mysql user)"
  [[ -r $PROVIDER ]] || die "no Galera provider at $PROVIDER (apt-get install galera-4)"
  command -v rsync >/dev/null || die "wsrep_sst_method=rsync needs rsync (apt-get install rsync)"
  if alive 1 || alive 2 || alive 3; then die "a cluster already runs under $GALERA_DIR (stop it first)"; fi
  rm -rf "$GALERA_DIR"
  mkdir -p "$GALERA_DIR"
  chmod 755 "$GALERA_DIR"
  local n
  for n in "${NODES[@]}"; do write_config "$n"; done

  log "initialising node 1"
  mariadb-install-db --defaults-file="$(node_dir 1)/my.cnf" --user=mysql --skip-test-db \
    >"$(node_dir 1)/install.log" 2>&1 || {
    cat "$(node_dir 1)/install.log" >&2
    die "mariadb-install-db failed"
  }
  log "bootstrapping node 1"
  launch 1 --wsrep-new-cluster
  wait_synced 1
  # Root over TCP without a password, as on the single test server (the tests' admin URL).
  node_sql 1 "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION"
  # Both at once: a donor serves one state transfer at a time, and the other joiner retries
  # every second until a donor is free.
  log "joining nodes 2 and 3"
  launch 2
  launch 3
  wait_synced 2
  wait_synced 3
  wait_whole
}

wait_whole() {
  local i size
  for ((i = 0; i < WAIT_SECONDS * 2; i++)); do
    size=$(wsrep_status 1 wsrep_cluster_size || true)
    [[ -n $size ]] || size=$(wsrep_status 2 wsrep_cluster_size || true)
    if [[ $size == 3 ]] && for n in "${NODES[@]}"; do [[ $(wsrep_status "$n" wsrep_local_state_comment || true) == Synced ]] || exit 1; done; then
      log "cluster whole: 3 nodes Synced"
      return 0
    fi
    sleep 0.5
  done
  status >&2
  die "the cluster did not have 3 Synced nodes within $WAIT_SECONDS s"
}

stop_node() {
  local n=$1 pid i
  pid=$(pid_of "$n")
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 60; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.5
  done
  log "node $n did not stop within 30 s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
}

stop() {
  local n
  # Highest first, so that the last one standing is node 1.
  for n in 3 2 1; do stop_node "$n"; done
  # An rsync daemon a state transfer left behind (its pid file is under the data directory).
  for pidfile in "$GALERA_DIR"/node*/data/rsync_sst.pid; do
    [[ -f $pidfile ]] && kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
  done
  rm -rf "$GALERA_DIR"
  log "stopped; $GALERA_DIR removed"
}

status() {
  local n
  for n in "${NODES[@]}"; do
    if alive "$n"; then
      printf 'node%s 127.0.0.1:%s pid=%s state=%s cluster_size=%s\n' "$n" "$(sql_port "$n")" "$(pid_of "$n")" \
        "$(wsrep_status "$n" wsrep_local_state_comment || echo '?')" "$(wsrep_status "$n" wsrep_cluster_size || echo '?')"
    else
      printf 'node%s 127.0.0.1:%s down\n' "$n" "$(sql_port "$n")"
    fi
  done
}

kill_node() {
  local n=$1 pid
  pid=$(pid_of "$n")
  [[ -n $pid ]] || die "node $n has no pid file"
  kill -KILL "$pid"
  local i
  for ((i = 0; i < 20; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  # A killed server leaves its pid file; a restart must not mistake it for the new one.
  rm -f "$(node_dir "$n")/mariadbd.pid"
  log "node $n SIGKILLed"
}

start_node() {
  local n=$1
  alive "$n" && die "node $n already runs"
  launch "$n"
  wait_synced "$n"
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
kill) kill_node "${2:?node number}" ;;
start-node) start_node "${2:?node number}" ;;
wait-whole) wait_whole ;;
*) die "usage: $0 start|stop|status|kill N|start-node N|wait-whole" ;;
esac
