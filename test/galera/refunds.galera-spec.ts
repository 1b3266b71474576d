import { Pool } from 'mysql2/promise';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { randomAlphanumeric } from '../../tools/simulator/platform-signers';
import { sleep } from '../support/eventually';
import { nodeDatabaseUrl, syncedPool } from '../support/galera-cluster';
import { paidOrder } from '../support/paid-orders';
import { RefundEffects } from '../support/refund-effects';
import {
  count,
  createTestPlatforms,
  fakePlatformOptions,
  HttpAnswer,
  RunningApp,
  startApp,
  TestClient,
  TestPlatforms,
  uniqueId,
} from '../support/test-app';

/**
 * Refunds and four eyes on two Galera nodes: two replicas, each writing through its own node, take
 * the same refund and the same approval at once. The refund number's unique key and the approval's
 * compare-and-set meet at certification, not at a lock: the loser is aborted at COMMIT, answered
 * 503 (transient), and its retry finds the winner's row.
 */
const THRESHOLD = 5000;
const AT_ONCE = 20;
/** An operator's client tries a 503 again; this bounds the test's retries. */
const MAX_ATTEMPTS = 10;

describe('refunds and four eyes on two Galera nodes', () => {
  let platforms: TestPlatforms;
  let carol: string;
  let fake: FakePlatform;
  const replicas: RunningApp[] = [];
  let clients: TestClient[];
  let pool: Pool;
  let refunds: RefundEffects;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    carol = randomAlphanumeric(40);
    fake = await FakePlatform.start(fakePlatformOptions(platforms));
    const env = {
      ...platforms.env,
      ADMIN_TOKENS: `${platforms.env.ADMIN_TOKENS},carol:${carol}:admin`,
      ...fake.apiEnv,
      REFUND_APPROVAL_THRESHOLD: String(THRESHOLD),
      REFUND_POLL_INTERVAL_MS: '100',
      REFUND_RETRY_BASE_DELAY_MS: '500',
      REFUND_RETRY_MAX_DELAY_MS: '1000',
    };
    // One after the other: the first applies the migrations, the second finds them applied.
    for (const node of [1, 2] as const) replicas.push(await startApp({ ...env, DATABASE_URL: nodeDatabaseUrl(node) }));
    clients = replicas.map((replica) => new TestClient(replica.url, platforms));
    pool = syncedPool(1);
    refunds = new RefundEffects(pool);
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.close();
    await fake?.close();
    await pool?.end();
  });

  /** The answer once it is not 503: a certification abort is transient, and the operator's client tries again. */
  async function untilAnswered(send: () => Promise<HttpAnswer>): Promise<HttpAnswer> {
    for (let attempt = 1; ; attempt++) {
      const answer = await send();
      if (answer.status !== 503 || attempt === MAX_ATTEMPTS) return answer;
      await sleep(50 * attempt);
    }
  }

  const emergencyRefund = (client: TestClient, token: string, body: Record<string, unknown>) =>
    untilAnswered(() => client.admin('POST', '/admin/refunds/emergency', token, { reason: 'galera', ...body }));

  it('records one refund and calls the channel once when both nodes take it at once', async () => {
    const { orderNo, paidBy } = await paidOrder(clients[0], 'WECHATPAY', 3000);
    const refundNo = uniqueId('GRF');

    const answers = await Promise.all(
      Array.from({ length: AT_ONCE }, (_, i) =>
        emergencyRefund(clients[i % 2], i % 2 ? carol : platforms.admins.admin, {
          orderNo,
          transactionId: paidBy,
          refundNo,
        }),
      ),
    );

    expect(answers.map((a) => a.status)).toEqual(Array(AT_ONCE).fill(202));
    expect(answers.filter((a) => a.json().created === true)).toHaveLength(1);
    await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(await count(pool, 'SELECT COUNT(*) FROM refund WHERE transaction_id = ?', [paidBy])).toBe(1);
    expect(await refunds.reserved(paidBy)).toBe(3000);
  });

  it('lets exactly one approval apply when two admins approve through both nodes at once', async () => {
    const { orderNo, paidBy } = await paidOrder(clients[0], 'ALIPAY', 9000);
    const refundNo = uniqueId('GRA');
    const requested = await emergencyRefund(clients[0], platforms.admins.admin, {
      orderNo,
      transactionId: paidBy,
      refundNo,
    });
    expect(requested.json().status).toBe('AWAITING_APPROVAL');

    const answers = await Promise.all(
      Array.from({ length: AT_ONCE }, (_, i) =>
        untilAnswered(() =>
          clients[i % 2].admin('POST', `/admin/refunds/${refundNo}/approve`, i % 2 ? carol : platforms.admins.admin2),
        ),
      ),
    );

    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(AT_ONCE - 1);
    await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refundNo)).toBe(1);
    expect(
      await count(pool, "SELECT COUNT(*) FROM admin_audit WHERE action = 'REFUND_APPROVED' AND target = ?", [
        `refund:${refundNo}`,
      ]),
    ).toBe(1);
  });
});
