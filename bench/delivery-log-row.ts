import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { format, SqlValue } from 'mysql2';
import { Channel, VerifiedNotification } from '../src/domain/notification';
import { DeliveryRow, RECORD_DELIVERIES, toRow } from '../src/payments/idempotency/callback-record.repository';
import { percentile } from './http-load';

/**
 * What writing one delivery-log row costs the process before it leaves for the database, in the
 * two protocols mysql2 speaks: the text protocol the delivery log uses (`VALUES ?` escaped into the
 * statement, the raw body as hex, then the statement encoded into its packet), and the binary
 * protocol of a prepared statement (the values copied into the packet as they are). Rows of a WeChat
 * Pay APIv3 payment as the service records them, in groups of 64. No database: the packets are
 * built by mysql2's own packet classes, not sent.
 *
 *   npm run bench:delivery-log-row
 */
const ROWS_PER_INSERT = 64;
const INSERTS_PER_ROUND = 300;
const ROUNDS = 9;

/** mysql2's own packet classes, which its package does not export: loaded by their file's path. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- mysql2's packet classes are not among its exports: required by their file's path at run time
const { Query, Execute } = require(join(dirname(require.resolve('mysql2')), 'lib/packets/index.js')) as {
  Query: new (sql: string, charsetNumber: number) => { toPacket(): Packet };
  Execute: new (id: number, parameters: unknown[], charsetNumber: number, timezone: string) => { toPacket(): Packet };
};
const UTF8MB4_GENERAL_CI = 45;
interface Packet {
  buffer: Buffer;
}

function main(): void {
  const rows = Array.from({ length: ROWS_PER_INSERT }, () => toRow(wechatpayDelivery()));
  const placeholders = `(${Array(rows[0].length).fill('?').join(', ')})`;
  const prepared = RECORD_DELIVERIES.replace('VALUES ?', `VALUES ${Array(rows.length).fill(placeholders).join(', ')}`);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it (unknown[][] is no SqlValue): the rule misreads format's union parameter
  const text = () => new Query(format(RECORD_DELIVERIES, [rows as SqlValue[][]]), UTF8MB4_GENERAL_CI).toPacket();
  const binary = () => new Execute(1, rows.flat(), UTF8MB4_GENERAL_CI, 'local').toPacket();
  console.log(
    `${rows.length} rows: text packet ${text().buffer.length} bytes, binary packet ${binary().buffer.length} bytes`,
  );
  console.log(`(the prepared statement, sent once per connection: ${prepared.length} bytes)`);
  const perRow = { text: [] as number[], binary: [] as number[] };
  for (let round = 0; round <= ROUNDS; round++) {
    const t = cpuMicrosPerRow(text);
    const b = cpuMicrosPerRow(binary);
    console.log(
      `round ${round}${round === 0 ? ' (warm-up)' : ''}: text ${t.toFixed(1)} µs, binary ${b.toFixed(1)} µs per row`,
    );
    if (round === 0) continue;
    perRow.text.push(t);
    perRow.binary.push(b);
  }
  console.log(
    `median CPU per row: text protocol ${percentile(perRow.text, 50).toFixed(1)} µs, ` +
      `binary protocol ${percentile(perRow.binary, 50).toFixed(1)} µs`,
  );
}

function cpuMicrosPerRow(buildPacket: () => Packet): number {
  const start = process.cpuUsage();
  for (let i = 0; i < INSERTS_PER_ROUND; i++) buildPacket();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / INSERTS_PER_ROUND / ROWS_PER_INSERT;
}

/** A payment notification as the WeChat Pay verifier hands it over, body and signature headers included. */
function wechatpayDelivery(): DeliveryRow {
  const resource = encrypt(
    JSON.stringify({
      out_trade_no: 'ORDER-0000012345',
      transaction_id: '4200001234202612031234567890',
      trade_state: 'SUCCESS',
      amount: { total: 100, currency: 'CNY' },
      payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
    }),
  );
  const body = JSON.stringify({
    id: `EV-${randomBytes(8).toString('hex')}`,
    create_time: '2026-12-03T18:00:00+08:00',
    resource_type: 'encrypt-resource',
    event_type: 'TRANSACTION.SUCCESS',
    summary: '支付成功',
    resource,
  });
  const headers = {
    'wechatpay-serial': 'PUB_KEY_ID_0114232134912410000000000000',
    'wechatpay-signature': randomBytes(256).toString('base64'),
    'wechatpay-timestamp': '1764756000',
    'wechatpay-nonce': randomBytes(16).toString('hex'),
    'content-type': 'application/json',
  };
  const notification: VerifiedNotification = {
    channel: Channel.Wechatpay,
    merchantId: '1900000001',
    eventType: 'TRANSACTION.SUCCESS',
    paid: true,
    outTradeNo: 'ORDER-0000012345',
    transactionId: '4200001234202612031234567890',
    amount: 100,
    currency: 'CNY',
    rawBody: Buffer.from(body),
    headers,
    replayKey: createHash('sha256').update(body).digest('hex'),
  };
  return { notification, outcome: 'DUPLICATE', receivedAt: new Date(), processingMs: 3 };
}

function encrypt(plain: string): Record<string, string> {
  const nonce = randomBytes(6).toString('hex');
  const cipher = createCipheriv('aes-256-gcm', randomBytes(32), Buffer.from(nonce));
  cipher.setAAD(Buffer.from('transaction'));
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]).toString('base64');
  return {
    original_type: 'transaction',
    algorithm: 'AEAD_AES_256_GCM',
    ciphertext,
    associated_data: 'transaction',
    nonce,
  };
}

main();
