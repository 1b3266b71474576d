#!/usr/bin/env node
// bench-same.js — the project and the bare reference (ideal-service.js) driven by the SAME load
// generator (autocannon, in this process, pre-signed requests) with the SAME delivery mix, in turn
// (A B A B ...), so that their ratio holds while the machine's speed drifts.
//
// The mix: WeChat Pay APIv3 TRANSACTION.SUCCESS notifications, 3.2 deliveries per payment (every
// payment 3 times, every 5th a 4th time; repeats 500-1500 requests after the first), each delivery
// signed afresh (its own nonce and signature, a current timestamp), as WeChat's retries are.
//
// Project: the production build of the checkout (dist/src/main.js), configured only by its
// environment with its defaults (no RabbitMQ: in-process events; example handlers off), on a fresh
// database; orders registered through its API. Reference: ideal-service.js on the probe schema.
// Exactly-once is checked in both databases after each run.
//
// Usage: node bench-same.js --project /path/to/checkout [--pairs 2] [--conn 64] [--dur 15] [--warm 3]
//        [--pool 16] [--payments 25000] [--only project|ideal] [--mix default|firsts|repeats]
//
// This copy (bench/reference-bench/) differs from the team's shared reference bench only by --mix, which
// measures one population of the default mix alone, for both targets alike:
//   default  the mix above;
//   firsts   each payment's first delivery only (every delivery needs a transaction; raise --payments
//            past what the window takes);
//   repeats  three repeats of each payment, after its first delivery was sent (untimed) to both.
// BENCH_DATABASE_ADMIN_URL (default mysql://root@127.0.0.1:3306): an account that may create databases;
// the reference uses the database reference_bench, each project run a fresh bench_same_* one (dropped after).
// PROJECT_NODE_ARGS: runtime flags for the project's process, e.g. "--cpu-prof --cpu-prof-dir=prof".
'use strict';
const { spawn } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const mysql = require('mysql2/promise');
const autocannon = require('autocannon');
const { waitQuiet } = require('./quiet');

function arg(name, def) { const i = process.argv.indexOf('--' + name); return i >= 0 ? process.argv[i + 1] : def; }
const PROJECT = path.resolve(arg('project', '.'));
const PAIRS = Number(arg('pairs', '2'));
const CONN = Number(arg('conn', '64'));
const DUR = Number(arg('dur', '15'));
const WARM = Number(arg('warm', '3'));
const POOL = Number(arg('pool', '16'));
const NPAY = Number(arg('payments', '25000'));
const ONLY = arg('only', '');
const MIX = arg('mix', 'default');
if (!['default', 'firsts', 'repeats'].includes(MIX)) throw new Error(`--mix ${MIX}: default, firsts or repeats`);
const CLK_TCK = 100;
// An account that may create databases (MariaDB's root with an empty password on the development machine).
const ROOT_URL = new URL(process.env.BENCH_DATABASE_ADMIN_URL || 'mysql://root@127.0.0.1:3306');
const ROOT = { host: ROOT_URL.hostname, port: Number(ROOT_URL.port || 3306), user: decodeURIComponent(ROOT_URL.username), password: decodeURIComponent(ROOT_URL.password) };
const REF_DB = 'reference_bench';
const PROBE_DB = { ...ROOT, database: REF_DB };
const SCHEMA = [
  `CREATE DATABASE IF NOT EXISTS ${REF_DB} CHARACTER SET utf8mb4`,
  `CREATE TABLE IF NOT EXISTS ${REF_DB}.payment_order (order_no VARCHAR(64) NOT NULL PRIMARY KEY, amount BIGINT NOT NULL,
     status VARCHAR(16) NOT NULL, transaction_id VARCHAR(64) NULL, paid_at DATETIME(3) NULL, version INT NOT NULL DEFAULT 0) ENGINE=InnoDB`,
  `CREATE TABLE IF NOT EXISTS ${REF_DB}.callback_record (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, channel VARCHAR(16) NOT NULL,
     transaction_id VARCHAR(64) NOT NULL, out_trade_no VARCHAR(64) NOT NULL, raw_payload TEXT NOT NULL, created_at DATETIME(3) NOT NULL,
     UNIQUE KEY uk_channel_tx (channel, transaction_id)) ENGINE=InnoDB`,
  `CREATE TABLE IF NOT EXISTS ${REF_DB}.outbox_event (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, event_type VARCHAR(64) NOT NULL,
     aggregate_id VARCHAR(64) NOT NULL, payload JSON NOT NULL, created_at DATETIME(3) NOT NULL, published_at DATETIME(3) NULL) ENGINE=InnoDB`,
];
const MCHID = '1900000001';
const APPID = 'wx0000000000000000';
const SERIAL = 'PUB_KEY_ID_0119000000012025010100000000';
const MARIADB_PID = Number(fs.readFileSync(process.env.MARIADB_PID_FILE || '/run/mysqld/mysqld.pid', 'utf8').trim());
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (s) => console.error(`# ${s}`);
function ticks(pid) { const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return Number(f[11]) + Number(f[12]); }
function sys() { const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number); return { busy: f[0] + f[1] + f[2] + f[5] + f[6] + f[7], total: f.reduce((a, b) => a + b, 0) }; }
function freePort() { return new Promise((res) => { const s = require('net').createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); }); }
function beijing(d = new Date()) { return new Date(d.getTime() + 8 * 3600e3).toISOString().replace(/\.\d+Z$/, '+08:00'); }

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-same-'));
const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const apiv3Key = crypto.randomBytes(16).toString('hex'); // 32 ASCII characters, used as bytes by both
fs.writeFileSync(path.join(work, 'platform.pub.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
fs.writeFileSync(path.join(work, 'keys.json'), JSON.stringify({ publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }), aesKeyB64: Buffer.from(apiv3Key).toString('base64') }));
const token = crypto.randomBytes(24).toString('hex');

/** One run's deliveries, each signed afresh now. */
function prepare(tag) {
  const orderNo = (i) => `${tag}${String(i).padStart(10, '0')}`;
  const txId = (i) => `4200${tag.replace(/\D/g, '').padStart(4, '0')}${String(i).padStart(20, '0')}`;
  const resources = new Array(NPAY);
  for (let i = 0; i < NPAY; i++) {
    const plain = JSON.stringify({ mchid: MCHID, appid: APPID, out_trade_no: orderNo(i), transaction_id: txId(i), trade_type: 'JSAPI',
      trade_state: 'SUCCESS', trade_state_desc: '支付成功', bank_type: 'CMC', attach: '', success_time: beijing(),
      payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' }, amount: { total: 100, payer_total: 100, currency: 'CNY', payer_currency: 'CNY' } });
    const nonce = crypto.randomBytes(6).toString('hex');
    const c = crypto.createCipheriv('aes-256-gcm', Buffer.from(apiv3Key), Buffer.from(nonce)); c.setAAD(Buffer.from('transaction'));
    const ct = Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]).toString('base64');
    resources[i] = { original_type: 'transaction', algorithm: 'AEAD_AES_256_GCM', ciphertext: ct, associated_data: 'transaction', nonce };
  }
  const schedule = [];
  for (let b = 0; b < NPAY; b += 500) {
    const ids = []; for (let i = b; i < Math.min(NPAY, b + 500); i++) ids.push(i);
    for (let r = 0; r < 4; r++) for (const i of ids) if (r < 3 || i % 5 === 0) schedule.push(i);
  }
  const ts = String(Math.floor(Date.now() / 1000));
  const sign = (i, n) => {
    const body = JSON.stringify({ id: `EV-${tag}-${n}`, create_time: beijing(), resource_type: 'encrypt-resource', event_type: 'TRANSACTION.SUCCESS', summary: '支付成功', resource: resources[i] });
    const hn = crypto.randomBytes(16).toString('hex');
    const sig = crypto.sign('sha256', Buffer.from(`${ts}\n${hn}\n${body}\n`), privateKey).toString('base64');
    return { i, body, headers: { 'content-type': 'application/json', 'wechatpay-timestamp': ts, 'wechatpay-nonce': hn, 'wechatpay-signature': sig, 'wechatpay-serial': SERIAL } };
  };
  const all = Array.from({ length: NPAY }, (_, i) => i);
  if (MIX === 'firsts') return { orderNo, primers: [], deliveries: all.map(sign) };
  if (MIX === 'default') return { orderNo, primers: [], deliveries: schedule.map(sign) };
  const repeats = [];
  for (let b = 0; b < NPAY; b += 500) for (let r = 0; r < 3; r++) for (let i = b; i < Math.min(NPAY, b + 500); i++) repeats.push(i);
  return { orderNo, primers: all.map((i) => sign(i, `P${i}`)), deliveries: repeats.map(sign) };
}

function post(port, p, body, headers) {
  return new Promise((res, rej) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (r) => {
      let t = ''; r.on('data', (c) => (t += c)); r.on('end', () => res({ status: r.statusCode, text: t }));
    });
    req.on('error', rej); req.end(body);
  });
}

async function startProject(db) {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH, PORT: String(port), NODE_ENV: 'production', LOG_LEVEL: 'warn',
    DATABASE_URL: `mysql://${ROOT_URL.username ? `${ROOT_URL.username}${ROOT_URL.password ? `:${ROOT_URL.password}` : ''}@` : ''}${ROOT.host}:${ROOT.port}/${db}`, DB_MIGRATIONS_RUN: 'true',
    WECHATPAY_MCHID: MCHID, WECHATPAY_APPIDS: APPID, WECHATPAY_APIV3_KEY: apiv3Key,
    WECHATPAY_PUBLIC_KEY_ID: SERIAL, WECHATPAY_PUBLIC_KEY_PATH: path.join(work, 'platform.pub.pem'),
    INTERNAL_API_TOKEN: token,
  };
  const nodeArgs = (process.env.PROJECT_NODE_ARGS || '').split(' ').filter(Boolean); // e.g. --cpu-prof --cpu-prof-dir=prof
  const srv = spawn(process.execPath, [...nodeArgs, path.join(PROJECT, 'dist/src/main.js')], { cwd: PROJECT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = ''; srv.stdout.on('data', (c) => (out += c)); srv.stderr.on('data', (c) => (out += c));
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise((res) => http.get({ host: '127.0.0.1', port, path: '/health/ready' }, (r) => { r.resume(); res(r.statusCode === 200); }).on('error', () => res(false)));
    if (ok) return { srv, port, out: () => out };
    if (srv.exitCode !== null) break;
    await sleep(200);
  }
  srv.kill('SIGKILL');
  throw new Error(`project did not become ready:\n${out.slice(-3000)}`);
}

async function startIdeal() {
  const port = await freePort();
  const env = { ...process.env, PORT: String(port), POOL: String(POOL), KEYS_FILE: path.join(work, 'keys.json'), NODE_ENV: 'production',
    DB_HOST: ROOT.host, DB_PORT: String(ROOT.port), DB_USER: ROOT.user, DB_PASS: ROOT.password || '', DB_NAME: REF_DB };
  const srv = spawn(process.execPath, [path.join(__dirname, 'ideal-service.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = ''; srv.stdout.on('data', (c) => (out += c)); srv.stderr.on('data', (c) => (out += c));
  for (let i = 0; i < 100 && !out.includes('listening'); i++) await sleep(100);
  return { srv, port, out: () => out };
}

async function stop(srv) {
  srv.kill('SIGTERM');
  await new Promise((r) => { const to = setTimeout(() => { srv.kill('SIGKILL'); r(); }, 10000); srv.on('exit', () => { clearTimeout(to); r(); }); });
}

/** Sends each payment's first delivery (--mix repeats), untimed, before the measured run. */
async function prime(port, primers, path_) {
  let ptr = 0;
  const requests = [{ method: 'POST', path: path_, setupRequest: (req) => {
    const d = primers[ptr++ % primers.length]; // autocannon may ask once past `amount`: a repeat of a primer is harmless
    return { ...req, headers: d.headers, body: d.body };
  } }];
  if (primers.length > 0) await autocannon({ url: `http://127.0.0.1:${port}`, connections: CONN, amount: primers.length, requests });
}

async function measure(target, port, pid, deliveries, path_, counts, primers = []) {
  let ptr = 0;
  let exhausted = false;
  // Thrown inside autocannon's callback, an error would end this process before `finally` stops the
  // service (which then holds its ports): the last delivery is sent again and the run fails after.
  const requests = [{ method: 'POST', path: path_, setupRequest: (req) => {
    const d = deliveries[ptr++] ?? ((exhausted = true), deliveries[deliveries.length - 1]);
    return { ...req, headers: d.headers, body: d.body };
  } }];
  const run = (d) => autocannon({ url: `http://127.0.0.1:${port}`, connections: CONN, duration: d, requests });
  await run(WARM);
  const quiet = await waitQuiet({ maxWaitS: Number(process.env.BENCH_QUIET_MAX_S || 180) });
  const status = async () => {
    const c = await mysql.createConnection(ROOT);
    const [rows] = await c.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions','Com_commit','Com_begin','Com_insert','Com_update','Com_select','Com_delete','Com_rollback','Com_insert_select')");
    await c.end();
    return Object.fromEntries(rows.map((r) => [r.Variable_name, Number(r.Value)]));
  };
  const q0 = await status();
  const a = { s: ticks(pid), d: ticks(MARIADB_PID), me: process.cpuUsage(), sys: sys(), t: Date.now(), sent: ptr };
  const r = await run(DUR);
  if (exhausted) throw new Error('schedule exhausted: raise --payments');
  const b = { s: ticks(pid), d: ticks(MARIADB_PID), me: process.cpuUsage(a.me), sys: sys(), t: Date.now(), sent: ptr };
  const wall = (b.t - a.t) / 1000;
  const q1 = await status();
  await sleep(1500);
  const sent = new Set([...primers, ...deliveries.slice(0, ptr)].map((d) => d.i));
  const integrity = await counts(sent.size);
  const res = {
    target, conn: CONN, dur: DUR,
    deliveries_per_s: Math.round(r.requests.average), p50_ms: r.latency.p50, p99_ms: r.latency.p99, max_ms: r.latency.max,
    non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts,
    service_cores: +(((b.s - a.s) / CLK_TCK) / wall).toFixed(2), mariadb_cores: +(((b.d - a.d) / CLK_TCK) / wall).toFixed(2),
    loadgen_cores: +(((b.me.user + b.me.system) / 1e6) / wall).toFixed(2),
    box_busy_pct: +((100 * (b.sys.busy - a.sys.busy)) / (b.sys.total - a.sys.total)).toFixed(1),
    service_us_per_delivery: +((((b.s - a.s) / CLK_TCK) * 1e6) / r.requests.total).toFixed(0),
    mariadb_us_per_delivery: +((((b.d - a.d) / CLK_TCK) * 1e6) / r.requests.total).toFixed(0),
    waited_for_quiet_s: quiet.waited_s, integrity,
    // statements the server received per delivery in the window (a multi-statement query counts each statement)
    sql_per_delivery: Object.fromEntries(Object.keys(q1).map((k) => [k, +((q1[k] - q0[k]) / r.requests.total).toFixed(2)])),
  };
  res.other_cores = +((res.box_busy_pct * 2) / 100 - res.service_cores - res.mariadb_cores - res.loadgen_cores).toFixed(2);
  return res;
}

async function runProject(n) {
  const tag = `SB${n}P`;
  const db = `bench_same_${crypto.randomBytes(4).toString('hex')}`;
  const root = await mysql.createConnection(ROOT);
  await root.query(`CREATE DATABASE ${db}`);
  const svc = await startProject(db);
  try {
    const { orderNo, primers, deliveries } = prepare(tag);
    log(`project: registering ${NPAY} orders through the API`);
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < NPAY) {
        const i = next++;
        const r = await post(svc.port, '/payment-orders', JSON.stringify({ orderNo: orderNo(i), userId: 'u1', amount: 100, currency: 'CNY', channel: 'WECHATPAY' }), { authorization: `Bearer ${token}` });
        if (r.status !== 201 && r.status !== 200) throw new Error(`register ${orderNo(i)}: ${r.status} ${r.text}`);
      }
    }));
    const counts = async (distinct) => {
      const [[c]] = await root.query(`SELECT (SELECT COUNT(*) FROM ${db}.payment_callback) cb,
        (SELECT COUNT(*) FROM ${db}.payment_order WHERE status='PAID') paid,
        (SELECT COUNT(*) FROM ${db}.outbox_event) outbox,
        (SELECT COUNT(*) FROM ${db}.payment_anomaly) anomalies`);
      return { ...c, distinct_payments_sent: distinct, consistent: c.cb === c.paid && c.paid === c.outbox && c.anomalies === 0 && c.cb <= distinct };
    };
    await prime(svc.port, primers, '/notify/wechatpay');
    return await measure('project', svc.port, svc.srv.pid, deliveries, '/notify/wechatpay', counts, primers);
  } finally {
    await stop(svc.srv);
    fs.writeFileSync(path.join(work, `project-${n}.log`), svc.out());
    await root.query(`DROP DATABASE ${db}`);
    await root.end();
  }
}

async function runIdeal(n) {
  const tag = `SB${n}I`;
  const root = await mysql.createConnection(ROOT);
  for (const q of SCHEMA) await root.query(q);
  await root.end();
  const admin = await mysql.createConnection(PROBE_DB);
  for (const t of ['payment_order', 'callback_record', 'outbox_event']) await admin.query(`TRUNCATE TABLE ${t}`);
  const { orderNo, primers, deliveries } = prepare(tag);
  for (let s = 0; s < NPAY; s += 5000) {
    const rows = [];
    for (let i = s; i < Math.min(NPAY, s + 5000); i++) rows.push([orderNo(i), 100, 'WAIT_PAY', 0]);
    await admin.query('INSERT INTO payment_order (order_no, amount, status, version) VALUES ?', [rows]);
  }
  const svc = await startIdeal();
  try {
    const counts = async (distinct) => {
      const [[c]] = await admin.query("SELECT (SELECT COUNT(*) FROM callback_record) cb, (SELECT COUNT(*) FROM payment_order WHERE status='PAID') paid, (SELECT COUNT(*) FROM outbox_event) outbox");
      return { ...c, distinct_payments_sent: distinct, consistent: c.cb === c.paid && c.paid === c.outbox && c.cb <= distinct };
    };
    await prime(svc.port, primers, '/pay/notify');
    return await measure('ideal', svc.port, svc.srv.pid, deliveries, '/pay/notify', counts, primers);
  } finally {
    await stop(svc.srv);
    await admin.end();
  }
}

(async () => {
  if (!fs.existsSync(path.join(PROJECT, 'dist/src/main.js'))) throw new Error(`no ${PROJECT}/dist/src/main.js: build the project first (npm run build)`);
  const results = [];
  for (let n = 0; n < PAIRS; n++) {
    if (ONLY !== 'ideal') { const r = await runProject(n); results.push(r); console.log(JSON.stringify(r)); }
    if (ONLY !== 'project') { const r = await runIdeal(n); results.push(r); console.log(JSON.stringify(r)); }
  }
  const of = (t) => results.filter((r) => r.target === t);
  const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };
  const P = of('project'), I = of('ideal');
  const ratios = P.map((p, k) => (I[k] ? p.deliveries_per_s / I[k].deliveries_per_s : NaN)).filter((x) => !Number.isNaN(x));
  console.log(JSON.stringify({
    summary: true, mix: MIX,
    project: { deliveries_per_s: med(P.map((r) => r.deliveries_per_s)), p99_ms: med(P.map((r) => r.p99_ms)), service_us_per_delivery: med(P.map((r) => r.service_us_per_delivery)), mariadb_us_per_delivery: med(P.map((r) => r.mariadb_us_per_delivery)), all_consistent: P.every((r) => r.integrity.consistent && r.non2xx === 0 && r.errors === 0) },
    ideal: { deliveries_per_s: med(I.map((r) => r.deliveries_per_s)), p99_ms: med(I.map((r) => r.p99_ms)), service_us_per_delivery: med(I.map((r) => r.service_us_per_delivery)), mariadb_us_per_delivery: med(I.map((r) => r.mariadb_us_per_delivery)), all_consistent: I.every((r) => r.integrity.consistent && r.non2xx === 0) },
    ratio_pairwise: ratios.map((x) => +x.toFixed(2)),
    ratio_median: +med(ratios).toFixed(2),
  }));
  fs.rmSync(work, { recursive: true, force: true });
})().catch((e) => { console.error(e); process.exit(1); });
