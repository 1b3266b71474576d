import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { register } from 'prom-client';
import { Channel } from '../../src/domain/notification';
import { ChannelKeyFiles } from '../../src/payments/credentials/channel-key-files';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { randomAlphanumeric, wechatpayDelivery, wechatpayTransaction } from '../../tools/simulator/platform-signers';
import { eventually } from '../support/eventually';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { receive } from '../support/medium-intake';
import { metricValue } from '../support/order-effects';
import { createTestPlatforms, TestPlatforms, uniqueId } from '../support/test-app';
import { roundsFrom } from '../support/worker-rounds';

/**
 * The WeChat Pay APIv3 key given as a file (WECHATPAY_APIV3_KEY_PATH) the way a Kubernetes Secret
 * mounts it (a symbolic link through `..data`, swapped at once), on two replicas on one database: a
 * key rotated in its file decrypts the notifications on both without a restart and the old key no
 * longer does; a file that holds no 32-character key is refused and the key in use stays.
 */
const MODULES = [OrderModule, NotifyModule];
const KEY_FILE = 'wechatpay-apiv3.key';

let setup: Medium;
let platforms: TestPlatforms;
let pool: Pool;
let secret: string;
let version = 0;
/** The APIv3 key the Secret holds now. */
let apiV3Key: string;

/** Writes a new version of the Secret's key file and swaps `..data` to it, as the kubelet does. */
function rotateSecret(content: string): void {
  version += 1;
  const dir = join(secret, `..v${version}`);
  mkdirSync(dir);
  writeFileSync(join(dir, KEY_FILE), content);
  symlinkSync(`..v${version}`, join(secret, '..data_tmp'));
  renameSync(join(secret, '..data_tmp'), join(secret, '..data'));
}

beforeAll(async () => {
  platforms = await createTestPlatforms();
  secret = mkdtempSync(join(tmpdir(), 'pcs-secret-'));
  apiV3Key = platforms.wechatpay.apiV3Key;
  rotateSecret(`${apiV3Key}\n`);
  symlinkSync(join('..data', KEY_FILE), join(secret, KEY_FILE));
  setup = await startMedium(
    { WECHATPAY_APIV3_KEY: '', WECHATPAY_APIV3_KEY_PATH: join(secret, KEY_FILE) },
    { imports: MODULES, fake: false, platforms, replicas: 2 },
  );
  ({ pool } = setup);
});

afterAll(() => setup?.close());

/** A WeChat Pay payment of the order, its resource encrypted under `key`, signed by the platform's key. */
function paymentEncryptedUnder(key: string, order: { orderNo: string; amount: number }) {
  return wechatpayDelivery(
    { ...platforms.wechatpay.publicKeySigner, apiV3Key: key },
    {
      resource: wechatpayTransaction({
        mchid: platforms.wechatpay.mchid,
        appid: platforms.wechatpay.appid,
        outTradeNo: order.orderNo,
        transactionId: uniqueId('42'),
        total: order.amount,
      }),
    },
  );
}

type Delivery = ReturnType<typeof paymentEncryptedUnder>;
const deliver = (ctx: MediumContext, d: Delivery) => receive(ctx, 'wechatpay', d.headers, d.body);
const acked = (reply: { status: number }) => reply.status === 204;

async function orderStatus(orderNo: string): Promise<string> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM payment_order WHERE order_no = ?', [orderNo]);
  return String(rows[0]?.status);
}

async function keptRefusals(body: string): Promise<Array<{ reason: string }>> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT reason FROM refused_notification WHERE channel = ? AND body_sha256 = ?',
    [Channel.Wechatpay, createHash('sha256').update(body, 'utf8').digest()],
  );
  return rows as Array<{ reason: string }>;
}

const metric = async (name: string, labels: Record<string, string>) =>
  metricValue(await register.metrics(), name, labels);

/** Each replica acks a payment of a new order encrypted under `key` (delivered again until the rotation reached it). */
async function paysOnEveryReplica(key: string): Promise<void> {
  for (const [i, ctx] of setup.replicas.entries()) {
    const order = await setup.make.order({ channel: Channel.Wechatpay });
    const delivery = paymentEncryptedUnder(key, order);
    await eventually(
      `replica ${i} to pay under the APIv3 key`,
      async () => acked(await deliver(ctx, delivery)),
      20_000,
    );
    expect(await orderStatus(order.orderNo)).toBe('PAID');
  }
}

/** Each replica refuses a payment of a new order encrypted under `key`, and keeps it. */
async function refusedOnEveryReplica(key: string): Promise<void> {
  for (const ctx of setup.replicas) {
    const order = await setup.make.order({ channel: Channel.Wechatpay });
    const delivery = paymentEncryptedUnder(key, order);
    expect(acked(await deliver(ctx, delivery))).toBe(false);
    expect(await orderStatus(order.orderNo)).toBe('WAIT_PAY');
    expect(await keptRefusals(delivery.body)).toEqual([{ reason: 'Undecryptable' }]);
  }
}

describe('the WeChat Pay APIv3 key file re-read while the service runs', () => {
  it('should pay under an APIv3 key rotated in its file on both replicas without a restart, and refuse the old key after', async () => {
    await paysOnEveryReplica(apiV3Key);
    const applied = await metric('payment_credential_reloads_total', {
      channel: Channel.Wechatpay,
      outcome: 'applied',
    });

    const next = randomAlphanumeric(32);
    rotateSecret(`${next}\n`);
    await paysOnEveryReplica(next);

    await refusedOnEveryReplica(apiV3Key);
    expect(await metric('payment_credential_reloads_total', { channel: Channel.Wechatpay, outcome: 'applied' })).toBe(
      applied + 2,
    );
    apiV3Key = next;
  });

  it('should keep the APIv3 key in use when the new file holds 31 characters, say why without the key, and raise payment_credential_files_refused until a valid one comes', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error');
    try {
      expect(await metric('payment_credential_files_refused', { channel: Channel.Wechatpay })).toBe(0);
      const corrupt = randomAlphanumeric(31);
      rotateSecret(`${corrupt}\n`);

      await eventually(
        'both replicas to refuse the 31-character file',
        async () =>
          (await metric('payment_credential_reloads_total', { channel: Channel.Wechatpay, outcome: 'refused' })) >= 2,
        20_000,
      );
      expect(await metric('payment_credential_files_refused', { channel: Channel.Wechatpay })).toBe(1);
      const said = errors.mock.calls
        .map((call) => String(call[0]))
        .filter((m) => m.includes(`${Channel.Wechatpay} key files`));
      expect(said.length).toBeGreaterThanOrEqual(2);
      for (const message of said) {
        expect(message).toContain(join(secret, KEY_FILE));
        expect(message).toContain('32 characters');
        expect(message).not.toContain(corrupt);
        expect(message).not.toContain(apiV3Key);
      }
      // The key in use stays, on both replicas, after whole rounds of each replica's file check
      // begun once the file had been refused; a notification under the 31 characters' key is refused.
      await roundsFrom(...setup.replicas.map((ctx) => ctx.get(ChannelKeyFiles)))('the corrupt file was refused');
      await paysOnEveryReplica(apiV3Key);

      const fixed = randomAlphanumeric(32);
      rotateSecret(fixed);
      await paysOnEveryReplica(fixed);
      await refusedOnEveryReplica(apiV3Key);
      apiV3Key = fixed;
      await eventually(
        'the refusal to clear',
        async () => (await metric('payment_credential_files_refused', { channel: Channel.Wechatpay })) === 0,
      );
    } finally {
      errors.mockRestore();
    }
  });
});
