import { createHash, KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { PaymentChannels } from '../../src/channels/payment-channels';
import { Channel } from '../../src/domain/notification';
import { NotifyModule } from '../../src/intake/notify.module';
import { AuditLog } from '../../src/operators/audit/audit-log';
import { OrderModule } from '../../src/order/order.module';
import { MerchantChange } from '../../src/payments/merchants/merchant-change.entity';
import { MerchantChanges } from '../../src/payments/merchants/merchant-changes';
import { DirectoryClock, MerchantDirectory } from '../../src/payments/merchants/merchant-directory';
import { PlatformKeyDryRun } from '../../src/payments/merchants/platform-key-dry-run';
import {
  alipayDelivery,
  alipayTradeParams,
  generateRsaKeyPair,
  RsaKeyPair,
  yuan,
} from '../../tools/simulator/platform-signers';
import { eventually } from '../support/eventually';
import { domainFailure, Medium, MediumContext, startMedium, theOneThatWon } from '../support/medium';
import { FORM, receive } from '../support/medium-intake';
import { createTestPlatforms, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * A platform key rotated through the merchant directory on two replicas sharing one database:
 * tried in a dry run first, proposed, approved by a second admin, then verified beside the key in
 * force for the overlap window, and alone after it. The window's end is the replicas' directory
 * clock (DirectoryClock), moved past it here; each replica's channel is built again within a poll.
 */
const MODULES = [OrderModule, NotifyModule, AdminModule];
const OVERLAP_SECONDS = 3600;

let setup: Medium;
let platforms: TestPlatforms;
let pool: Pool;
let keyFile: string;
/** The Alipay key pair of the key file. */
let current: RsaKeyPair;
let appId: string;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  current = generateRsaKeyPair();
  keyFile = join(mkdtempSync(join(tmpdir(), 'pcs-directory-key-')), 'alipay-pub.pem');
  writeFileSync(keyFile, current.publicKeyPem);
  setup = await startMedium(
    { ALIPAY_PUBLIC_KEY_PATH: keyFile },
    // A key activated here is the database's: it must not reach another suite's notifications.
    { imports: MODULES, fake: false, platforms, replicas: 2, ownDatabase: true },
  );
  ({ pool } = setup);
  appId = platforms.alipay.appId;
});

/** The replicas' directory clocks, once a test moved them. */
const movedClocks: jest.SpyInstance[] = [];

afterAll(async () => {
  for (const spy of movedClocks) spy.mockRestore();
  await setup?.close();
});

const account = () => ({ channel: Channel.Alipay, account: appId });
const changes = (ctx: MediumContext = setup.ctx) => ctx.get(MerchantChanges);
const audited = (ctx: MediumContext, operatorId: string, action: string) => (change: MerchantChange) =>
  ctx.get(AuditLog).record({
    operatorId,
    action,
    target: `merchant:${change.channel}:${change.accountId}`,
    requestBody: null,
    result: { changeId: change.id },
  });

function paymentSignedWith(key: KeyObject, order: { orderNo: string; amount: number }): string {
  return alipayDelivery(
    key,
    alipayTradeParams({
      appId,
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

async function keptRefusals(form: string): Promise<string[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT reason FROM refused_notification WHERE channel = ? AND body_sha256 = ?',
    [Channel.Alipay, createHash('sha256').update(form, 'utf8').digest()],
  );
  return rows.map((r) => String(r.reason));
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const [rows] = await pool.query<RowDataPacket[]>(sql, params);
  return Number(rows[0].n);
}

/** Each replica pays a new order's payment signed with `key`, at once. */
async function paysOnEveryReplica(key: KeyObject): Promise<void> {
  for (const [i, ctx] of setup.replicas.entries()) {
    const order = await setup.makes[i].order({ channel: Channel.Alipay });
    expect(acked(await deliver(ctx, paymentSignedWith(key, order)))).toBe(true);
    expect(await orderStatus(order.orderNo)).toBe('PAID');
  }
}

/** Each replica refuses a new order's payment signed with `key`, and keeps it. */
async function refusedOnEveryReplica(key: KeyObject): Promise<void> {
  for (const [i, ctx] of setup.replicas.entries()) {
    const order = await setup.makes[i].order({ channel: Channel.Alipay });
    const form = paymentSignedWith(key, order);
    expect(acked(await deliver(ctx, form))).toBe(false);
    expect(await orderStatus(order.orderNo)).toBe('WAIT_PAY');
    expect(await keptRefusals(form)).toEqual(['InvalidSignature']);
  }
}

/** Every replica holds the directory at least at `version`. */
const reachedEveryReplica = (version: string) =>
  eventually(
    `every replica at directory version ${version}`,
    () => setup.replicas.every((ctx) => BigInt(ctx.get(MerchantDirectory).current.version) >= BigInt(version)),
    10_000,
  );

/** Runs `change` and waits until every replica built its Alipay channel again. */
async function everyReplicaRebuilt(change: () => void): Promise<void> {
  const before = setup.replicas.map((ctx) => ctx.get(PaymentChannels).get(Channel.Alipay));
  change();
  await eventually(
    'every replica to build its Alipay channel again',
    () => setup.replicas.every((ctx, i) => ctx.get(PaymentChannels).get(Channel.Alipay) !== before[i]),
    10_000,
  );
}

const dryRun = (pem: string, operatorId = 'alice') =>
  setup.ctx.get(PlatformKeyDryRun).run({ ...account(), kind: 'publicKey', pem, operatorId });

describe('a platform key rotated through the merchant directory', () => {
  it('should need a dry run and a second admin, then pay both keys on both replicas during the overlap window, and only the new one after it', async () => {
    const next = generateRsaKeyPair();
    const proposal = { kind: 'publicKey', pem: next.publicKeyPem, overlapSeconds: OVERLAP_SECONDS };

    // No dry run of this candidate: refused, and nothing written.
    const changesBut = 'SELECT COUNT(*) AS n FROM merchant_change WHERE action <> ?';
    const written = await count(changesBut, ['KEY_DRY_RUN']);
    expect(await domainFailure(changes().proposePlatformKey(account(), proposal, 'alice'))).toMatchObject({
      code: 'DryRunRequired',
      status: 409,
    });
    // A dry run of another candidate does not count.
    await dryRun(generateRsaKeyPair().publicKeyPem);
    expect(await domainFailure(changes().proposePlatformKey(account(), proposal, 'alice'))).toMatchObject({
      code: 'DryRunRequired',
    });
    expect(await count(changesBut, ['KEY_DRY_RUN'])).toBe(written);

    await setup.replicas[1]
      .get(PlatformKeyDryRun)
      .run({ ...account(), kind: 'publicKey', pem: next.publicKeyPem, operatorId: 'alice' });
    const proposed = await changes().proposePlatformKey(
      account(),
      proposal,
      'alice',
      audited(setup.ctx, 'alice', 'PLATFORM_KEY_PROPOSED'),
    );
    expect(proposed).toMatchObject({ action: 'PLATFORM_KEY_PROPOSED', keyKind: 'publicKey', overlapSeconds: 3600 });

    // A proposal changes nothing: the current key pays, the candidate's notifications are refused.
    await reachedEveryReplica(proposed.id);
    await paysOnEveryReplica(current.privateKey);
    await refusedOnEveryReplica(next.privateKey);

    // Four eyes: the proposer cannot approve; of two other admins at once, on the two replicas, one wins.
    expect(await domainFailure(changes().approve(proposed.id, 'alice'))).toMatchObject({
      code: 'Forbidden',
      status: 403,
    });
    const approval = await theOneThatWon(
      [
        changes(setup.replicas[0]).approve(
          proposed.id,
          'bob',
          audited(setup.replicas[0], 'bob', 'MERCHANT_CHANGE_APPROVED'),
        ),
        changes(setup.replicas[1]).approve(
          proposed.id,
          'carol',
          audited(setup.replicas[1], 'carol', 'MERCHANT_CHANGE_APPROVED'),
        ),
      ],
      { code: 'MerchantConflict' },
    );
    expect(await count('SELECT COUNT(*) AS n FROM merchant_change WHERE decides_change_id = ?', [proposed.id])).toBe(1);
    expect(await count('SELECT COUNT(*) AS n FROM admin_audit WHERE action = ?', ['MERCHANT_CHANGE_APPROVED'])).toBe(1);

    // The overlap window: both keys pay, on both replicas.
    await reachedEveryReplica(approval.id);
    await paysOnEveryReplica(current.privateKey);
    await paysOnEveryReplica(next.privateKey);
    for (const ctx of setup.replicas) {
      expect([...ctx.get(MerchantDirectory).current.platformKeys.values()]).toEqual([
        expect.objectContaining({
          account: appId,
          kind: 'publicKey',
          overlapUntil: new Date(new Date(approval.createdAt).getTime() + OVERLAP_SECONDS * 1000),
        }),
      ]);
    }

    // The window ends (the replicas' directory clock past it, for the rest of the suite): only the new key pays.
    await everyReplicaRebuilt(() => {
      for (const ctx of setup.replicas) {
        const clock = ctx.get(DirectoryClock);
        movedClocks.push(jest.spyOn(clock, 'now').mockImplementation(() => Date.now() + (OVERLAP_SECONDS + 1) * 1000));
      }
    });
    await paysOnEveryReplica(next.privateKey);
    await refusedOnEveryReplica(current.privateKey);

    // A dry run compares a candidate with the key in force, the directory's: the new key's notifications
    // (2 refused before the approval, 2 paid in the window, 2 after) verify under both, the old key's under neither.
    expect(await dryRun(next.publicKeyPem)).toMatchObject({ currentOnly: 0, candidateOnly: 0, both: 6 });
    current = next;
  });

  it("should let a key file changed after the directory's key was activated verify again, on both replicas", async () => {
    // The directory's key (the previous test's) verifies alone; the file still holds the old one.
    await paysOnEveryReplica(current.privateKey);
    const fromFile = generateRsaKeyPair();
    await everyReplicaRebuilt(() => writeFileSync(keyFile, fromFile.publicKeyPem));
    await paysOnEveryReplica(fromFile.privateKey);
    await refusedOnEveryReplica(current.privateKey);
  });

  it('should change nothing for a rejected proposal, and refuse one that is decided already', async () => {
    const next = generateRsaKeyPair();
    await dryRun(next.publicKeyPem, 'bob');
    const proposed = await changes().proposePlatformKey(
      account(),
      { kind: 'publicKey', pem: next.publicKeyPem, overlapSeconds: 0 },
      'bob',
    );
    const rejected = await changes(setup.replicas[1]).reject(proposed.id, 'carol', 'wrong key');
    await reachedEveryReplica(rejected.id);
    expect(await domainFailure(changes().approve(proposed.id, 'alice'))).toMatchObject({
      code: 'MerchantConflict',
      status: 409,
    });
    await refusedOnEveryReplica(next.privateKey);
  });
});
