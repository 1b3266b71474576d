import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, KeyObject } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { register } from 'prom-client';
import { AdminModule } from '../../src/admin/admin.module';
import { OperationsOverviewQuery } from '../../src/admin/operations-overview.queries';
import { Channel } from '../../src/domain/notification';
import { ChannelKeyFiles } from '../../src/payments/credentials/channel-key-files';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { AuditLog } from '../../src/operators/audit/audit-log';
import { PlatformKeyDryRun } from '../../src/payments/merchants/platform-key-dry-run';
import {
  alipayDelivery,
  alipayTradeParams,
  generateCertificate,
  generateRsaKeyPair,
  yuan,
} from '../../tools/simulator/platform-signers';
import { eventually } from '../support/eventually';
import { domainFailure, Medium, MediumContext, startMedium } from '../support/medium';
import { FORM, receive } from '../support/medium-intake';
import { metricValue } from '../support/order-effects';
import { createTestPlatforms, TestPlatforms, uniqueId } from '../support/test-app';
import { roundsFrom } from '../support/worker-rounds';

/**
 * The channels' key and certificate files as a Kubernetes Secret mounts them (each file a symbolic
 * link through `..data` to a directory of one version, swapped at once by the kubelet), on two
 * replicas of the service on one database: a rotated key takes effect on both without a restart,
 * a broken one is refused and the keys in use stay, and every certificate held has its expiry.
 */
const MODULES = [OrderModule, NotifyModule, AdminModule];

let setup: Medium;
let platforms: TestPlatforms;
let pool: Pool;
let secret: string;
let version = 0;

/** Writes a new version of the Secret's files and swaps `..data` to it, as the kubelet does. */
function rotateSecret(files: Record<string, string>): void {
  version += 1;
  const dir = join(secret, `..v${version}`);
  mkdirSync(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  symlinkSync(`..v${version}`, join(secret, '..data_tmp'));
  renameSync(join(secret, '..data_tmp'), join(secret, '..data'));
}

/** The Alipay key pair the Secret holds now. */
let alipay: { privateKey: KeyObject; publicKeyPem: string };
let certPem: string;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  secret = mkdtempSync(join(tmpdir(), 'pcs-secret-'));
  alipay = generateRsaKeyPair();
  certPem = await generateCertificate(generateRsaKeyPair(), 'AB01', { notAfter: new Date('2031-06-01T00:00:00Z') });
  rotateSecret({ 'alipay-pub.pem': alipay.publicKeyPem, 'wechatpay-cert.pem': certPem });
  for (const name of ['alipay-pub.pem', 'wechatpay-cert.pem']) symlinkSync(join('..data', name), join(secret, name));
  setup = await startMedium(
    {
      ALIPAY_PUBLIC_KEY_PATH: join(secret, 'alipay-pub.pem'),
      WECHATPAY_PLATFORM_CERT_PATHS: join(secret, 'wechatpay-cert.pem'),
    },
    { imports: MODULES, fake: false, platforms, replicas: 2 },
  );
  ({ pool } = setup);
});

afterAll(() => setup?.close());

async function newOrder(): Promise<{ orderNo: string; amount: number }> {
  return setup.make.order({ channel: Channel.Alipay });
}

/** An Alipay payment of the order signed with `key`, as Alipay would post it. */
function paymentSignedWith(key: KeyObject, order: { orderNo: string; amount: number }): string {
  return alipayDelivery(
    key,
    alipayTradeParams({
      appId: platforms.alipay.appId,
      sellerId: platforms.alipay.sellerId,
      outTradeNo: order.orderNo,
      tradeNo: uniqueId('T'),
      totalAmount: yuan(order.amount),
      tradeStatus: 'TRADE_SUCCESS',
    }),
  );
}

const deliver = (ctx: MediumContext, form: string) => receive(ctx, 'alipay', { 'content-type': FORM }, form);
const acked = (reply: { status: number; body: string }) => reply.status === 200 && reply.body === 'success';

async function orderStatus(orderNo: string): Promise<string> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM payment_order WHERE order_no = ?', [orderNo]);
  return String(rows[0]?.status);
}

async function keptRefusals(form: string): Promise<Array<{ reason: string }>> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT reason FROM refused_notification WHERE channel = ? AND body_sha256 = ?',
    [Channel.Alipay, createHash('sha256').update(form, 'utf8').digest()],
  );
  return rows as Array<{ reason: string }>;
}

const metric = async (name: string, labels: Record<string, string>) =>
  metricValue(await register.metrics(), name, labels);

/** Each replica acks a payment of a new order signed with `key` (delivered again until the rotation reached it). */
async function paysOnEveryReplica(key: KeyObject): Promise<void> {
  for (const [i, ctx] of setup.replicas.entries()) {
    const order = await newOrder();
    const form = paymentSignedWith(key, order);
    await eventually(`replica ${i} to pay under the rotated key`, async () => acked(await deliver(ctx, form)), 20_000);
    expect(await orderStatus(order.orderNo)).toBe('PAID');
  }
}

/** Each replica refuses a payment of a new order signed with `key`, and keeps it. */
async function refusedOnEveryReplica(key: KeyObject): Promise<void> {
  for (const ctx of setup.replicas) {
    const order = await newOrder();
    const form = paymentSignedWith(key, order);
    const reply = await deliver(ctx, form);
    expect(acked(reply)).toBe(false);
    expect(await orderStatus(order.orderNo)).toBe('WAIT_PAY');
    expect(await keptRefusals(form)).toEqual([{ reason: 'InvalidSignature' }]);
  }
}

describe('channel key files re-read while the service runs', () => {
  it('should pay under a platform key rotated in its file on both replicas without a restart, and refuse the old key after', async () => {
    await paysOnEveryReplica(alipay.privateKey);
    const applied = await metric('payment_credential_reloads_total', { channel: Channel.Alipay, outcome: 'applied' });

    const next = generateRsaKeyPair();
    rotateSecret({ 'alipay-pub.pem': next.publicKeyPem, 'wechatpay-cert.pem': certPem });
    await paysOnEveryReplica(next.privateKey);

    await refusedOnEveryReplica(alipay.privateKey);
    expect(await metric('payment_credential_reloads_total', { channel: Channel.Alipay, outcome: 'applied' })).toBe(
      applied + 2,
    );
    alipay = next;
  });

  it('should keep the keys in use when the new file is not a key, say why without its content, and raise payment_credential_files_refused until a valid one comes', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error');
    try {
      expect(await metric('payment_credential_files_refused', { channel: Channel.Alipay })).toBe(0);
      const corrupt = '-----BEGIN PUBLIC KEY-----\nTHIS-IS-NOT-A-KEY-SECRET-MATERIAL\n-----END PUBLIC KEY-----\n';
      rotateSecret({ 'alipay-pub.pem': corrupt, 'wechatpay-cert.pem': certPem });

      await eventually(
        'both replicas to refuse the corrupt file',
        async () =>
          (await metric('payment_credential_reloads_total', { channel: Channel.Alipay, outcome: 'refused' })) >= 2,
        20_000,
      );
      expect(await metric('payment_credential_files_refused', { channel: Channel.Alipay })).toBe(1);
      const said = errors.mock.calls
        .map((call) => String(call[0]))
        .filter((m) => m.includes(`${Channel.Alipay} key files`));
      expect(said.length).toBeGreaterThanOrEqual(2);
      for (const message of said) {
        expect(message).toContain(join(secret, 'alipay-pub.pem'));
        expect(message).not.toContain('THIS-IS-NOT-A-KEY');
      }
      // The keys in use stay: the current key still pays, on both replicas, for as long as the file is
      // wrong, after whole rounds of each replica's file check begun once it had been refused.
      await roundsFrom(...setup.replicas.map((ctx) => ctx.get(ChannelKeyFiles)))('the corrupt file was refused');
      await paysOnEveryReplica(alipay.privateKey);

      const fixed = generateRsaKeyPair();
      rotateSecret({ 'alipay-pub.pem': fixed.publicKeyPem, 'wechatpay-cert.pem': certPem });
      await paysOnEveryReplica(fixed.privateKey);
      alipay = fixed;
      await eventually(
        'the refusal to clear',
        async () => (await metric('payment_credential_files_refused', { channel: Channel.Alipay })) === 0,
      );
    } finally {
      errors.mockRestore();
    }
  });

  it('should give each certificate held its expiry as payment_credential_expiry_seconds and in the overview, and follow a rotated one', async () => {
    const expiry = (kind: string) =>
      metric('payment_credential_expiry_seconds', {
        channel: Channel.Wechatpay,
        account: platforms.wechatpay.mchid,
        kind,
      });
    expect(await expiry('platformCert')).toBe(Date.parse('2031-06-01T00:00:00Z') / 1000);
    // A bare public key has no expiry: no series.
    expect(await metric('payment_credential_expiry_seconds', { channel: Channel.Alipay })).toBe(0);

    const sooner = await generateCertificate(generateRsaKeyPair(), 'AB02', {
      notAfter: new Date('2027-01-15T00:00:00Z'),
    });
    rotateSecret({ 'alipay-pub.pem': alipay.publicKeyPem, 'wechatpay-cert.pem': sooner });
    await eventually(
      'the rotated certificate expiry',
      async () => (await expiry('platformCert')) === Date.parse('2027-01-15T00:00:00Z') / 1000,
      20_000,
    );
    for (const ctx of setup.replicas) {
      await eventually('the replica to hold the rotated certificate', async () => {
        const overview = await ctx.get(OperationsOverviewQuery).read();
        return overview.expiringCredentials[0]?.validTo === '2027-01-15T00:00:00.000Z';
      });
      expect((await ctx.get(OperationsOverviewQuery).read()).expiringCredentials[0]).toEqual({
        channel: Channel.Wechatpay,
        account: platforms.wechatpay.mchid,
        kind: 'platformCert',
        validTo: '2027-01-15T00:00:00.000Z',
      });
    }
  });

  it('should report how many recent notifications verify under the current key, a candidate, or both, and change nothing', async () => {
    const since = new Date(Date.now() - 1);
    // Other suites of this worker's database dry-run the same test account: count only this test's audit rows.
    const [[{ lastAudit }]] = await pool.query<RowDataPacket[]>(
      'SELECT COALESCE(MAX(id), 0) AS lastAudit FROM admin_audit',
    );
    await paysOnEveryReplica(alipay.privateKey);
    // Alipay switched to its next key before the Secret did: its notifications are refused and kept.
    const next = generateRsaKeyPair();
    await refusedOnEveryReplica(next.privateKey);
    const forged = paymentSignedWith(generateRsaKeyPair().privateKey, await newOrder());
    expect(acked(await deliver(setup.ctx, forged))).toBe(false);

    const dryRun = (pem: string, kind = 'publicKey') =>
      setup.ctx
        .get(PlatformKeyDryRun)
        .run(
          { channel: Channel.Alipay, account: platforms.alipay.appId, kind, pem, since, operatorId: 'alice' },
          (report) =>
            setup.ctx.get(AuditLog).record({
              operatorId: 'alice',
              action: 'PLATFORM_KEY_DRY_RUN',
              target: `merchant:${Channel.Alipay}:${platforms.alipay.appId}`,
              requestBody: { kind, candidateFingerprint: report.candidateFingerprint },
              result: report,
            }),
        );
    expect(await dryRun(next.publicKeyPem)).toMatchObject({
      examined: 5,
      currentOnly: 2,
      candidateOnly: 2,
      both: 0,
      neither: 1,
    });
    expect(await dryRun(alipay.publicKeyPem)).toMatchObject({ examined: 5, both: 2, neither: 3 });
    const [audits] = await pool.query<RowDataPacket[]>(
      'SELECT COUNT(*) AS n FROM admin_audit WHERE action = ? AND target = ? AND id > ?',
      ['PLATFORM_KEY_DRY_RUN', `merchant:${Channel.Alipay}:${platforms.alipay.appId}`, lastAudit],
    );
    expect(Number(audits[0].n)).toBe(2);

    // A dry run changes nothing: the current key pays, the candidate's notifications are refused.
    await paysOnEveryReplica(alipay.privateKey);
    await refusedOnEveryReplica(next.privateKey);
    expect(await domainFailure(dryRun('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n'))).toMatchObject({
      code: 'MalformedRequest',
      status: 400,
    });
    expect(await domainFailure(dryRun(next.publicKeyPem, 'rootCert'))).toMatchObject({ code: 'NotFound', status: 404 });
  });
  it("should hold the expiry of a platform certificate the directory activated in place of its file's, and the file's again once it is gone", async () => {
    const expiry = () =>
      metric('payment_credential_expiry_seconds', {
        channel: Channel.Wechatpay,
        account: platforms.wechatpay.mchid,
        kind: 'platformCert',
      });
    const fileExpiry = await expiry();
    // Sooner than the file's: the gauge must follow the certificate in force, not the latest of the two.
    const notAfter = new Date(Math.floor(Date.now() / 1000 + 10 * 86_400) * 1000);
    const activated = await generateCertificate(generateRsaKeyPair(), 'AB03', { notAfter });
    const directoryKeys = (pem?: string) => {
      for (const ctx of setup.replicas) {
        ctx
          .get(ChannelKeyFiles)
          .applyDirectoryKeys(
            Channel.Wechatpay,
            pem ? [{ account: platforms.wechatpay.mchid, kind: 'platformCert', pem, activatedAt: new Date() }] : [],
          );
      }
    };
    directoryKeys(activated);
    expect(await expiry()).toBe(notAfter.getTime() / 1000);
    for (const ctx of setup.replicas) {
      expect((await ctx.get(OperationsOverviewQuery).read()).expiringCredentials[0]).toEqual({
        channel: Channel.Wechatpay,
        account: platforms.wechatpay.mchid,
        kind: 'platformCert',
        validTo: notAfter.toISOString(),
      });
    }
    directoryKeys();
    expect(await expiry()).toBe(fileExpiry);
  });
});
