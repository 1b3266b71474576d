import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { AccountMaterial } from '../../src/channels/account-material';
import { PaymentChannels } from '../../src/channels/payment-channels';
import { Channel } from '../../src/domain/notification';
import { NotifyModule } from '../../src/intake/notify.module';
import { AuditLog } from '../../src/operators/audit/audit-log';
import { OrderModule } from '../../src/order/order.module';
import { MerchantAccountChanges, RewrapReport } from '../../src/payments/merchants/merchant-account-changes';
import { MerchantChange } from '../../src/payments/merchants/merchant-change.entity';
import { MerchantChanges } from '../../src/payments/merchants/merchant-changes';
import { MerchantDirectory } from '../../src/payments/merchants/merchant-directory';
import { PlatformKeyDryRun } from '../../src/payments/merchants/platform-key-dry-run';
import {
  alipayDelivery,
  alipayTradeParams,
  generateRsaKeyPair,
  wechatpayDelivery,
  wechatpayTransaction,
  yuan,
} from '../../tools/simulator/platform-signers';
import { eventually, sleep } from '../support/eventually';
import { domainFailure, Medium, MediumContext, Replica, startMedium, theOneThatWon } from '../support/medium';
import { metric } from '../support/medium-intake';
import { acked, Intake } from '../support/medium-notify';
import {
  AlipayTestAccount,
  createAlipayAccount,
  createWechatpayAccount,
  WechatpayTestAccount,
} from '../support/merchant-accounts';
import { createTestPlatforms, TestPlatforms, uniqueId } from '../support/test-app';

/**
 * Accounts added and changed through the merchant directory, on two replicas sharing one database:
 * an account is its channel's accounts-file entry with its files' content, sealed (AES-256-GCM)
 * under MERCHANT_SECRETS_KEYS_FILE's first key; every replica opens it, writes its files privately
 * and builds the channel with it within the directory's poll, without a restart. The keys here
 * are real (node:crypto), the notifications signed with them, verified by the channels' own code.
 */
const MODULES = [OrderModule, NotifyModule, AdminModule];

let setup: Medium;
let platforms: TestPlatforms;
let pool: Pool;
let keysFile: string;
let wechat: WechatpayTestAccount;
let alipay: AlipayTestAccount;
/** The password an entry carries (APIv2's certificate's): a secret the database must not hold in the clear. */
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;

const keyLine = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  keysFile = join(mkdtempSync(join(tmpdir(), 'pcs-secrets-keys-')), 'keys');
  writeFileSync(keysFile, `${keyLine('k1')}\n`, { mode: 0o600 });
  wechat = createWechatpayAccount('1900007171', ['wx7a0000000000a071']);
  alipay = createAlipayAccount('2021000117607171', '2088531891667171');
  setup = await startMedium(
    { MERCHANT_SECRETS_KEYS_FILE: keysFile },
    // The accounts added here are this database's: no other suite's replicas must try to open them.
    { imports: MODULES, fake: false, platforms, replicas: 2, ownDatabase: true },
  );
  ({ pool } = setup);
});

afterAll(() => setup?.close());

const [A, B] = [0, 1];
const replica = (i: number) => setup.replicas[i];
const accountChanges = (ctx: MediumContext = replica(A)) => ctx.get(MerchantAccountChanges);
const audited = (ctx: MediumContext, operatorId: string, action: string) => (change: MerchantChange) =>
  ctx.get(AuditLog).record({
    operatorId,
    action,
    target: `merchant:${change.channel}:${change.accountId}`,
    requestBody: { facts: change.accountFacts },
    result: { changeId: change.id },
  });

function wechatMaterial(
  account: WechatpayTestAccount,
  platformKeyPem = readFileSync(account.publicKeyPath, 'utf8'),
): AccountMaterial {
  return {
    entry: {
      mchid: account.mchid,
      appids: account.appids,
      apiV3Key: account.apiV3Key,
      platformPublicKey: { id: account.signer.serial },
      merchantSerialNo: account.merchantSerialNo,
      apiV2CertPassword: PASSWORD,
    },
    files: {
      'platformPublicKey.path': platformKeyPem,
      merchantPrivateKeyPath: readFileSync(account.merchantPrivateKeyPath, 'utf8'),
    },
  };
}

function alipayMaterial(account: AlipayTestAccount): AccountMaterial {
  return {
    entry: { appId: account.appId, sellerId: account.sellerId },
    files: {
      alipayPublicKeyPath: readFileSync(account.alipayPublicKeyPath, 'utf8'),
      appPrivateKeyPath: readFileSync(account.appPrivateKeyPath, 'utf8'),
    },
  };
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const [rows] = await pool.query<RowDataPacket[]>(sql, params);
  return Number(rows[0].n);
}

const written = async () => ({
  changes: await count('SELECT COUNT(*) AS n FROM merchant_change'),
  secrets: await count('SELECT COUNT(*) AS n FROM merchant_secret'),
});

async function orderStatus(orderNo: string): Promise<string> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM payment_order WHERE order_no = ?', [orderNo]);
  return String(rows[0]?.status);
}

/** A new order paid on replica `i` by a WeChat Pay notification signed and encrypted as `account` (with `signer`). */
async function wechatPays(
  on: number | Replica,
  account: WechatpayTestAccount,
  signer = account.signer,
): Promise<boolean> {
  const r = typeof on === 'number' ? replica(on) : on;
  const order = await r.make.order({ channel: Channel.Wechatpay });
  const delivery = wechatpayDelivery(signer, {
    resource: wechatpayTransaction({
      mchid: account.mchid,
      appid: account.appids[0],
      outTradeNo: order.orderNo,
      transactionId: uniqueId('T'),
      total: order.amount,
    }),
  });
  const reply = await new Intake(r).wechatpay(delivery);
  return acked(reply) && (await orderStatus(order.orderNo)) === 'PAID';
}

async function alipayPays(on: number | Replica, account: AlipayTestAccount): Promise<boolean> {
  const r = typeof on === 'number' ? replica(on) : on;
  const order = await r.make.order({ channel: Channel.Alipay });
  const form = alipayDelivery(
    account.alipayKey.privateKey,
    alipayTradeParams({
      appId: account.appId,
      sellerId: account.sellerId,
      outTradeNo: order.orderNo,
      tradeNo: uniqueId('T'),
      totalAmount: yuan(order.amount),
      tradeStatus: 'TRADE_SUCCESS',
    }),
  );
  const reply = await new Intake(r).alipay(form);
  return acked(reply) && (await orderStatus(order.orderNo)) === 'PAID';
}

const holds = (ctx: MediumContext, channel: string, account: string) =>
  ctx.get(PaymentChannels).get(channel)?.accountIds().includes(account) === true;

/** Every column of every row of the tables, as bytes and as text. */
async function everyValue(table: string): Promise<Buffer[]> {
  const [rows] = await pool.query<RowDataPacket[]>(`SELECT * FROM ${table}`);
  return rows.flatMap((row) =>
    Object.values(row as Record<string, unknown>)
      .filter((v) => v !== null && v !== undefined)
      .map((v) => (Buffer.isBuffer(v) ? v : Buffer.from(textOf(v), 'utf8'))),
  );
}

function textOf(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** The files of every replica's private directory of decrypted account files that hold one of the material's private keys. */
function decryptedCopies(material: AccountMaterial): string[] {
  const privateKeys = Object.entries(material.files)
    .filter(([option]) => /PrivateKey/.test(option))
    .map(([, content]) => content as string);
  return (
    readdirSync(tmpdir())
      .filter((name) => name.startsWith('pcs-directory-accounts-'))
      .flatMap((dir) => readdirSync(join(tmpdir(), dir)).map((file) => join(tmpdir(), dir, file)))
      // Another suite's replica may delete one of its own between the listing and the read.
      .filter((path) => existsSync(path) && privateKeys.includes(readFileSync(path, 'utf8')))
  );
}

/** A line of the PEM's base64 body, from its middle. */
const pemBodyLine = (pem: string) => pem.split('\n').filter((l) => l && !l.startsWith('-----'))[3];

describe('accounts through the merchant directory', () => {
  it('should pay a WeChat Pay account added through one replica on the other within the poll, and hold no secret of it in the clear', async () => {
    expect(await wechatPays(B, wechat)).toBe(false);
    const added = await accountChanges(replica(A)).add(
      Channel.Wechatpay,
      wechatMaterial(wechat),
      'alice',
      audited(replica(A), 'alice', 'MERCHANT_ACCOUNT_ADDED'),
    );
    const committed = Date.now();
    expect(added).toMatchObject({
      action: 'ACCOUNT_ADDED',
      accountId: wechat.mchid,
      secretId: expect.stringMatching(/^\d+$/) as unknown as string,
    });
    await eventually('replica B to hold the account', () => holds(replica(B), Channel.Wechatpay, wechat.mchid), 10_000);
    // The stated delay: one poll and its query, with room for a loaded machine (as the sub-merchants' test).
    expect(Date.now() - committed).toBeLessThan(5 * MerchantChanges.applyWithinMs);
    expect(await wechatPays(B, wechat)).toBe(true);
    expect(await wechatPays(A, wechat)).toBe(true);
    // The configured account keeps paying beside it.
    expect(
      await wechatPays(
        B,
        {
          ...wechat,
          mchid: platforms.wechatpay.mchid,
          appids: [platforms.wechatpay.appid],
          apiV3Key: platforms.wechatpay.apiV3Key,
        },
        platforms.wechatpay.publicKeySigner,
      ),
    ).toBe(true);

    // Public facts only: the listing, the change row, the audit row.
    const listed = replica(B)
      .get(MerchantChanges)
      .list()
      .find((a) => a.account === wechat.mchid);
    expect(listed).toMatchObject({
      source: 'directory',
      facts: {
        public: { mchid: wechat.mchid, appids: wechat.appids, 'platformPublicKey.id': wechat.signer.serial },
        files: {
          'platformPublicKey.path': [expect.stringMatching(/^[0-9a-f]{64}$/) as unknown as string],
          merchantPrivateKeyPath: [null],
        },
      },
    });
    const secrets = [wechat.apiV3Key, pemBodyLine(readFileSync(wechat.merchantPrivateKeyPath, 'utf8')), PASSWORD].map(
      (s) => Buffer.from(s, 'utf8'),
    );
    const stored = [
      ...(await everyValue('merchant_change')),
      ...(await everyValue('merchant_secret')),
      ...(await everyValue('admin_audit')),
    ];
    expect(stored.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(stored.filter((v) => v.includes(secret))).toEqual([]);
    expect(JSON.stringify(listed)).not.toContain(wechat.apiV3Key);
  });

  it('should pay an Alipay app (public key mode) added through one replica on the other', async () => {
    expect(await alipayPays(B, alipay)).toBe(false);
    await accountChanges(replica(A)).add(Channel.Alipay, alipayMaterial(alipay), 'alice');
    await eventually('replica B to hold the app', () => holds(replica(B), Channel.Alipay, alipay.appId), 10_000);
    expect(await alipayPays(B, alipay)).toBe(true);
    // A dry run of the configured app's key reads the channel with the directory's app in it: its notifications verify.
    const dryRun = await replica(B).get(PlatformKeyDryRun).run({
      channel: Channel.Alipay,
      account: platforms.alipay.appId,
      kind: 'publicKey',
      pem: generateRsaKeyPair().publicKeyPem,
      operatorId: 'alice',
    });
    expect(dryRun).toMatchObject({ examined: 2, neither: 0 });
    const stored = [...(await everyValue('merchant_change')), ...(await everyValue('merchant_secret'))];
    const body = Buffer.from(pemBodyLine(readFileSync(alipay.appPrivateKeyPath, 'utf8')), 'utf8');
    expect(stored.filter((v) => v.includes(body))).toEqual([]);
  });

  it.each<[string, () => [string, AccountMaterial], object]>([
    [
      'an unknown channel',
      () => ['PAYPAL', wechatMaterial(createWechatpayAccount('1900007172', []))],
      { code: 'NotFound', status: 404 },
    ],
    [
      "a malformed entry, with the accounts file's message",
      () => {
        const m = wechatMaterial(createWechatpayAccount('1900007173', []));
        return [Channel.Wechatpay, { ...m, entry: { ...m.entry, mchid: 'abc' } }];
      },
      { code: 'MalformedRequest', status: 400, message: 'entry.mchid must be the digits of a mchid' },
    ],
    [
      'an entry without the fields it needs together',
      () => {
        const m = wechatMaterial(createWechatpayAccount('1900007174', []));
        const { merchantSerialNo: _serial, ...entry } = m.entry;
        return [Channel.Wechatpay, { ...m, entry }];
      },
      { status: 400, message: 'entry needs merchantPrivateKeyPath and merchantSerialNo together' },
    ],
    [
      'a path in place of a file',
      () => {
        const m = wechatMaterial(createWechatpayAccount('1900007175', []));
        return [Channel.Wechatpay, { ...m, entry: { ...m.entry, merchantPrivateKeyPath: '/etc/passwd' } }];
      },
      { status: 400, message: expect.stringContaining('entry.merchantPrivateKeyPath is a path') as unknown as string },
    ],
    [
      'a file that is not a key',
      () => {
        const m = wechatMaterial(createWechatpayAccount('1900007176', []));
        return [Channel.Wechatpay, { ...m, files: { ...m.files, 'platformPublicKey.path': 'not a key at all' } }];
      },
      {
        status: 400,
        // Named as the request named it: no path on the replica's disk, no environment variable.
        message: expect.stringMatching(
          /^the account is refused: files\.platformPublicKey\.path is not a PEM public key \([^/]*\)$/,
        ) as unknown as string,
      },
    ],
    [
      'an Alipay app without its seller id (the check the configuration gets at start)',
      () => {
        const m = alipayMaterial(createAlipayAccount('2021000117607179', '2088531891667179'));
        const { sellerId: _seller, ...entry } = m.entry;
        return [Channel.Alipay, { ...m, entry }];
      },
      { status: 400, message: expect.stringContaining('has no seller id') as unknown as string },
    ],
    [
      'an account of the configuration',
      () => {
        const m = wechatMaterial(createWechatpayAccount(platforms.wechatpay.mchid, []));
        return [Channel.Wechatpay, m];
      },
      {
        code: 'MerchantConflict',
        status: 409,
        message: expect.stringMatching(/^account \d+ of WECHATPAY exists already$/) as unknown as string,
      },
    ],
    [
      'an account the directory added already',
      () => [Channel.Wechatpay, wechatMaterial(wechat)],
      { code: 'MerchantConflict', status: 409 },
    ],
  ])('should refuse %s, and write nothing', async (what, input, failure) => {
    const before = await written();
    const [channel, material] = input();
    expect(await domainFailure(accountChanges().add(channel, material, 'alice'))).toMatchObject(failure);
    expect(await written()).toEqual(before);
    // Nor does it leave a decrypted copy of its private key on disk (but for the account held already).
    if (what !== 'an account the directory added already') expect(decryptedCopies(material)).toEqual([]);
  });

  it('should add a new account id once of five adds at once on two replicas, the others 409 writing nothing, and pay with the keys of the one added', async () => {
    const mchid = '1900007181';
    const tries = [0, 1, 2, 3, 4].map(() => createWechatpayAccount(mchid, ['wx7a0000000000a081']));
    const before = await written();
    const audits = () =>
      count("SELECT COUNT(*) AS n FROM admin_audit WHERE action = 'MERCHANT_ACCOUNT_ADDED' AND target = ?", [
        `merchant:${Channel.Wechatpay}:${mchid}`,
      ]);
    // Each add's audit row takes a while: every add reads the directory and passes its check while the first's transaction is open.
    const added = await theOneThatWon(
      tries.map((account, i) =>
        accountChanges(replica(i % 2)).add(Channel.Wechatpay, wechatMaterial(account), `admin-${i}`, async (change) => {
          await sleep(1000);
          await audited(replica(i % 2), `admin-${i}`, 'MERCHANT_ACCOUNT_ADDED')(change);
        }),
      ),
      { code: 'MerchantConflict', status: 409, message: `account ${mchid} of WECHATPAY exists already` },
    );
    expect(await written()).toEqual({ changes: before.changes + 1, secrets: before.secrets + 1 });
    expect(
      await count("SELECT COUNT(*) AS n FROM merchant_change WHERE action = 'ACCOUNT_ADDED' AND account_id = ?", [
        mchid,
      ]),
    ).toBe(1);
    expect(await audits()).toBe(1);
    const [claims] = await pool.query<RowDataPacket[]>(
      'SELECT channel, account_id, sub_merchant_id, change_id FROM merchant_added WHERE account_id = ?',
      [mchid],
    );
    expect(claims.map((c) => ({ ...c, change_id: String(c.change_id) }))).toEqual([
      { channel: Channel.Wechatpay, account_id: mchid, sub_merchant_id: '', change_id: added.id },
    ]);

    // In force on both replicas: the keys of the add that was written, no other's.
    const winner = tries[Number(added.operatorId.replace('admin-', ''))];
    for (const i of [A, B]) {
      await eventually(`replica ${i} to hold the account`, () => holds(replica(i), Channel.Wechatpay, mchid), 10_000);
      expect(await wechatPays(i, winner)).toBe(true);
      for (const loser of tries.filter((t) => t !== winner)) expect(await wechatPays(i, loser)).toBe(false);
    }
  });

  it('should refuse to add an account without MERCHANT_SECRETS_KEYS_FILE, naming it, and write nothing', async () => {
    const withoutKeys = await setup.another((p, apiEnv) => ({ ...p.env, ...apiEnv }));
    const before = await written();
    expect(
      await domainFailure(
        accountChanges(withoutKeys).add(
          Channel.Wechatpay,
          wechatMaterial(createWechatpayAccount('1900007177', [])),
          'alice',
        ),
      ),
    ).toMatchObject({
      status: 409,
      message: expect.stringContaining('MERCHANT_SECRETS_KEYS_FILE is not configured') as unknown as string,
    });
    expect(await written()).toEqual(before);
    // It cannot open the directory's accounts: they are left out, the configured ones pay.
    expect(holds(withoutKeys, Channel.Wechatpay, wechat.mchid)).toBe(false);
    expect(holds(withoutKeys, Channel.Wechatpay, platforms.wechatpay.mchid)).toBe(true);
    await withoutKeys.close();
  });

  it("should change a directory account's keys only with a second admin, on both replicas", async () => {
    const next = generateRsaKeyPair();
    const nextSigner = { ...wechat.signer, privateKey: next.privateKey };
    const proposal = wechatMaterial(wechat, next.publicKeyPem);
    const proposed = await accountChanges(replica(A)).proposeChange(
      { channel: Channel.Wechatpay, account: wechat.mchid },
      proposal,
      'alice',
      audited(replica(A), 'alice', 'MERCHANT_ACCOUNT_CHANGE_PROPOSED'),
    );
    expect(proposed).toMatchObject({ action: 'ACCOUNT_CHANGE_PROPOSED' });
    await eventually('every replica to see the proposal', () =>
      setup.replicas.every((ctx) => ctx.get(MerchantDirectory).current.pending.some((p) => p.id === proposed.id)),
    );
    // A proposal changes nothing.
    expect(await wechatPays(B, wechat)).toBe(true);
    expect(await wechatPays(B, wechat, nextSigner)).toBe(false);

    // The proposer's approval is refused and writes nothing.
    const before = await written();
    expect(await domainFailure(replica(A).get(MerchantChanges).approve(proposed.id, 'alice'))).toMatchObject({
      code: 'Forbidden',
      status: 403,
    });
    expect(await written()).toEqual(before);
    expect(await wechatPays(A, wechat, nextSigner)).toBe(false);

    const approval = await replica(B)
      .get(MerchantChanges)
      .approve(proposed.id, 'bob', audited(replica(B), 'bob', 'MERCHANT_CHANGE_APPROVED'));
    await eventually('every replica at the approval', () =>
      setup.replicas.every((ctx) => BigInt(ctx.get(MerchantDirectory).current.version) >= BigInt(approval.id)),
    );
    for (const i of [A, B]) {
      await eventually(`replica ${i} to pay with the new key`, () => wechatPays(i, wechat, nextSigner), 10_000);
      expect(await wechatPays(i, wechat)).toBe(false);
    }
    wechat = { ...wechat, signer: nextSigner };
    writeFileSync(wechat.publicKeyPath, next.publicKeyPem);
    const [rows] = await pool.query<Array<RowDataPacket & { action: string; operator_id: string }>>(
      "SELECT action, operator_id FROM admin_audit WHERE action IN ('MERCHANT_ACCOUNT_CHANGE_PROPOSED', 'MERCHANT_CHANGE_APPROVED') ORDER BY id",
    );
    expect(rows.map((r) => [r.action, r.operator_id])).toEqual([
      ['MERCHANT_ACCOUNT_CHANGE_PROPOSED', 'alice'],
      ['MERCHANT_CHANGE_APPROVED', 'bob'],
    ]);
  });

  it('should disable and enable a directory account with the routes of any account', async () => {
    const proposal = await replica(A)
      .get(MerchantChanges)
      .proposeDisable({ channel: Channel.Wechatpay, account: wechat.mchid }, 'contract ended', 'alice');
    const approval = await replica(B).get(MerchantChanges).approve(proposal.id, 'bob');
    await eventually('every replica at the approval', () =>
      setup.replicas.every((ctx) => BigInt(ctx.get(MerchantDirectory).current.version) >= BigInt(approval.id)),
    );
    expect(await wechatPays(B, wechat)).toBe(false);
    const enabled = await replica(A)
      .get(MerchantChanges)
      .enable({ channel: Channel.Wechatpay, account: wechat.mchid }, 'alice');
    await eventually('every replica enabled', () =>
      setup.replicas.every((ctx) => BigInt(ctx.get(MerchantDirectory).current.version) >= BigInt(enabled.id)),
    );
    expect(await wechatPays(B, wechat)).toBe(true);
  });

  it('should refuse to change an account of the configuration through the directory', async () => {
    const before = await written();
    const material = wechatMaterial({ ...wechat, mchid: platforms.wechatpay.mchid });
    expect(
      await domainFailure(
        accountChanges().proposeChange(
          { channel: Channel.Wechatpay, account: platforms.wechatpay.mchid },
          material,
          'alice',
        ),
      ),
    ).toMatchObject({
      code: 'MerchantConflict',
      status: 409,
      message: expect.stringContaining('comes from the configuration') as unknown as string,
    });
    expect(await written()).toEqual(before);
  });

  it('should seal every secret under a new first key once, of two rewraps at once, and pay on a replica started with the old key gone', async () => {
    const k1 = readFileSync(keysFile, 'utf8').trim();
    writeFileSync(keysFile, `${keyLine('k2')}\n${k1}\n`);
    const rows = await count('SELECT COUNT(*) AS n FROM merchant_secret');
    expect(rows).toBeGreaterThanOrEqual(3);
    const reports: RewrapReport[] = await Promise.all([
      accountChanges(replica(A)).rewrap('alice', 'k2'),
      accountChanges(replica(B)).rewrap('bob', undefined),
    ]);
    expect(reports.map((r) => r.keyId)).toEqual(['k2', 'k2']);
    expect(reports.reduce((n, r) => n + r.rewrapped, 0)).toBe(rows);
    expect(reports.reduce((n, r) => n + r.failed, 0)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM merchant_secret WHERE key_id = 'k2'")).toBe(rows);
    expect((await accountChanges(replica(A)).rewrap('alice', undefined)).rewrapped).toBe(0);
    expect(await domainFailure(accountChanges(replica(A)).rewrap('alice', 'k1'))).toMatchObject({ status: 409 });

    // The old line removed: a replica started afresh opens every account with the new key alone.
    writeFileSync(keysFile, readFileSync(keysFile, 'utf8').split('\n')[0] + '\n');
    const fresh = await setup.another({ MERCHANT_SECRETS_KEYS_FILE: keysFile });
    expect(holds(fresh, Channel.Wechatpay, wechat.mchid)).toBe(true);
    expect(await wechatPays(fresh, wechat)).toBe(true);
    expect(await alipayPays(fresh, alipay)).toBe(true);
    await fresh.close();
  });

  it('should leave out an account whose secret was tampered with, and keep the others of its channel paying', async () => {
    const other = createAlipayAccount('2021000117607172', '2088531891667172');
    await accountChanges(replica(A)).add(Channel.Alipay, alipayMaterial(other), 'alice');
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT c.secret_id FROM merchant_change c WHERE c.channel = 'ALIPAY' AND c.account_id = ? AND c.action = 'ACCOUNT_ADDED'",
      [alipay.appId],
    );
    await pool.query('UPDATE merchant_secret SET tag = UNHEX(REPEAT(?, 16)) WHERE id = ?', ['00', rows[0].secret_id]);
    const fresh = await setup.another({ MERCHANT_SECRETS_KEYS_FILE: keysFile });
    expect(holds(fresh, Channel.Alipay, alipay.appId)).toBe(false);
    expect(await alipayPays(fresh, alipay)).toBe(false);
    // Seen: listed as not applied on that replica, and counted.
    expect(fresh.get(MerchantChanges).list()).toContainEqual(
      expect.objectContaining({ channel: Channel.Alipay, account: alipay.appId, source: 'directory', applied: false }),
    );
    expect(await metric('payment_directory_accounts_left_out', { channel: Channel.Alipay })).toBe(1);
    expect(await alipayPays(fresh, other)).toBe(true);
    expect(holds(fresh, Channel.Wechatpay, wechat.mchid)).toBe(true);
    expect(holds(fresh, Channel.Alipay, platforms.alipay.appId)).toBe(true);
    await fresh.close();
  });
});
