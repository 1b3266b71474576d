import { loadDatabaseConfig } from '../src/platform/config/database.config';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { createConnection } from 'mysql2/promise';
import { ADMIN_URL, runAsAdmin } from './admin-database';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../src/platform/database/data-source-options';
import { billDateOf, billDayRange, shiftBillDate } from '../src/domain/bill';
import { beijingTime, wechatpayBillLine } from '../test/support/bill-files';
import { FakePlatform } from '../tools/simulator/fake-platform';
import { createTestPlatforms, fakePlatformOptions } from '../test/support/test-app';

/**
 * `npm run bench:reconcile [-- --lines 1000000]`: one WeChat Pay account's bill of a day with a million lines,
 * gzipped, served by the fake platform with its SHA1; the same payments in a throwaway database (plus injected
 * differences); the production build's `npm run reconcile` run against them as a child process. Prints the wall
 * time and the reconciling process's peak RSS (run with the Docker image's `--max-old-space-size=192`;
 * `RECONCILE_NODE_OPTIONS=` to change it). Needs `npm run build` (the npm script does it).
 */
const LINES = process.argv.includes('--lines') ? Number(process.argv[process.argv.indexOf('--lines') + 1]) : 1_000_000;
/** Injected differences of each kind. */
const DIFFERENCES = 10;
const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const runId = Date.now().toString(36);
  const database = `pcs_bench_recon_${runId}`;
  const url = `mariadb://${ADMIN_URL.replace(/^\w+:\/\//, '')}/${database}`;
  const date = shiftBillDate(billDateOf(new Date()), -1);
  const dir = mkdtempSync(join(tmpdir(), 'pcs-bench-recon-'));
  const platforms = await createTestPlatforms();
  const fake = await FakePlatform.start(fakePlatformOptions(platforms));
  await runAsAdmin([`CREATE DATABASE ${database}`]);
  try {
    await migrate(url);
    say(`payments: ${LINES} in the database, ${DIFFERENCES} of each difference…`);
    await prefill(url, date, platforms.wechatpay.mchid);
    say('bill: writing the gzipped CSV…');
    const bill = await writeBill(join(dir, 'bill.csv.gz'), date, platforms.wechatpay.mchid);
    fake.serveBill(platforms.wechatpay.mchid, date, { channel: 'WECHATPAY', ...bill });
    say(`reconciling ${date}…`);
    const started = process.hrtime.bigint();
    const output = await reconcile(
      {
        ...platforms.env,
        DATABASE_URL: url,
        ...fake.apiEnv,
        PAYMENT_QUERY_SCHEDULE_SECONDS: '86400',
        LOG_LEVEL: 'warn',
      },
      date,
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    say(output.trim());
    say(`lines: ${LINES}  time: ${seconds.toFixed(1)} s  (${Math.round(LINES / seconds)} lines/s)`);
  } finally {
    await fake.close();
    await runAsAdmin([`DROP DATABASE IF EXISTS ${database}`]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Line i of the bill: payment i, at a time spread over the day (away from its edges). */
function billRow(i: number, start: Date) {
  return {
    kind: 'PAYMENT' as const,
    transactionId: `4200002${String(i).padStart(15, '0')}`,
    orderNo: `BENCH${String(i).padStart(10, '0')}`,
    amount: 100 + (i % 9900),
    at: beijingTime(new Date(start.getTime() + 600_000 + Math.floor((i * 85_000_000) / LINES))),
  };
}

/**
 * The database holds lines DIFFERENCES+1…LINES as paid (the first DIFFERENCES are lost here: MISSING_LOCAL, which
 * the fake does not confirm), the next DIFFERENCES with another amount (AMOUNT_DIFFERS), and DIFFERENCES payments
 * the bill does not have (MISSING_CHANNEL).
 */
async function prefill(url: string, date: string, mchid: string): Promise<void> {
  const conn = await createConnection({ uri: url.replace(/^mariadb:/, 'mysql:'), timezone: 'Z' });
  const { start } = billDayRange(date);
  const at = (seq: string) => `FROM_UNIXTIME(${start.getTime() / 1000} + 600 + FLOOR(${seq} * 85000 / ${LINES}))`;
  try {
    await conn.query(
      `INSERT INTO payment_callback (channel, transaction_id, merchant_id, order_no, amount, currency, first_received_at, paid_at)
       SELECT 'WECHATPAY', CONCAT('4200002', LPAD(seq, 15, '0')), ?, CONCAT('BENCH', LPAD(seq, 10, '0')),
              100 + seq % 9900 + IF(seq <= ${2 * DIFFERENCES}, 1, 0), 'CNY', ${at('seq')}, ${at('seq')}
       FROM seq_${DIFFERENCES + 1}_to_${LINES}`,
      [mchid],
    );
    await conn.query(
      `INSERT INTO payment_callback (channel, transaction_id, merchant_id, order_no, amount, currency, first_received_at, paid_at)
       SELECT 'WECHATPAY', CONCAT('4200009', LPAD(seq, 15, '0')), ?, CONCAT('FORGED', seq), 100, 'CNY', ${at('seq')}, ${at('seq')}
       FROM seq_1_to_${DIFFERENCES}`,
      [mchid],
    );
  } finally {
    await conn.end();
  }
}

/** The CSV streamed through gzip to disk, hashed (unzipped, as WeChat does) on the way. */
async function writeBill(path: string, date: string, mchid: string): Promise<{ path: string; sha1: string }> {
  const { start } = billDayRange(date);
  const hash = createHash('sha1');
  const source = new PassThrough();
  const written = pipeline(source, createGzip(), createWriteStream(path));
  const write = async (text: string) => {
    hash.update(text);
    if (!source.write(text)) await new Promise((resolve) => source.once('drain', resolve));
  };
  await write(
    '交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,' +
      '微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注\r\n',
  );
  let chunk = '';
  for (let i = 1; i <= LINES; i++) {
    chunk += `${wechatpayBillLine(billRow(i, start), mchid)}\r\n`;
    if (chunk.length > 1 << 16) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(
    `${chunk}总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额\r\n`,
  );
  await write(`\`${LINES},\`0.00,\`0.00,\`0.00,\`0.00000,\`0.00,\`0.00\r\n`);
  source.end();
  await written;
  return { path, sha1: hash.digest('hex') };
}

/** The production CLI in a child process, its peak RSS printed by the preload. */
function reconcile(env: Record<string, string>, date: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        join(__dirname, 'print-peak-rss.js'),
        'dist/src/reconciliation/reconcile.cli.js',
        '--date',
        date,
        '--channel',
        'WECHATPAY',
      ],
      {
        // The Docker image's heap bound by default, as the service runs in production.
        env: { ...process.env, ...env, NODE_OPTIONS: process.env.RECONCILE_NODE_OPTIONS ?? '--max-old-space-size=192' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      process.stdout.write(d);
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 || code === 1
        ? resolve(
            output
              .split('\n')
              .filter((l) => /peak RSS/.test(l))
              .join('\n'),
          )
        : reject(new Error(`reconcile exited ${code}: ${output}`)),
    );
  });
}

async function migrate(url: string): Promise<void> {
  const dataSource = await new DataSource(
    buildDataSourceOptions({ ...loadDatabaseConfig({}), url, poolSize: 2, runMigrations: true }),
  ).initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
