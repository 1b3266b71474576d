import { randomUUID } from 'node:crypto';
import { Pool, ResultSetHeader } from 'mysql2/promise';
import { register } from 'prom-client';
import { WebhooksModule } from '../../src/events/webhooks/webhooks.module';
import { ReportingDatabase } from '../../src/platform/database/reporting-database';
import { Medium, MediumContext, startMedium } from '../support/medium';

/**
 * The webhook backlog's gauges on the real database: the pending count and the oldest pending age
 * come from one query per scrape, and each reports what the table holds.
 */
let medium: Medium;
let ctx: MediumContext;
let pool: Pool;

beforeAll(async () => {
  // The fan-out gives every enabled endpoint the events other suites left in a shared database.
  medium = await startMedium(() => ({}), { imports: [WebhooksModule], fake: false, ownDatabase: true });
  ({ ctx, pool } = medium);
});

afterAll(async () => {
  await medium?.close();
});

const HOUR_MS = 3600_000;

async function endpointWithPendingDeliveries(ages: number[]): Promise<string> {
  const [endpoint] = await pool.query<ResultSetHeader>(
    `INSERT INTO webhook_endpoint (url, enabled, secret, created_at, updated_at)
     VALUES ('https://receiver.example/hook', 1, 'whsec_gauges', NOW(3), NOW(3))`,
  );
  for (const ageMs of ages) {
    // Due tomorrow: the dispatcher leaves them pending while the test scrapes.
    await pool.query(
      `INSERT INTO webhook_delivery (endpoint_id, event_id, event_type, order_no, body, status, attempts,
         schedule_start, next_attempt_at, created_at)
       VALUES (?, ?, 'payment.succeeded', 'ORDER-GAUGES', '{}', 'PENDING', 0, 0, NOW(3) + INTERVAL 1 DAY, ?)`,
      [endpoint.insertId, randomUUID(), new Date(Date.now() - ageMs)],
    );
  }
  return String(endpoint.insertId);
}

/** A query of the deliveries that reads the pending ones, whatever its text (the failed count is another gauge's). */
function readsPending([sql, params]: unknown[]): boolean {
  const text = String(sql);
  const pending = /'PENDING'/.test(text) || (Array.isArray(params) && params.includes('PENDING'));
  return /\bwebhook_delivery\b/.test(text) && pending;
}

function sample(metrics: string, name: string, endpoint: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{endpoint="${endpoint}"} `));
  return Number(line?.split(' ')[1]);
}

it('reads the pending count and the oldest pending age with one query per scrape', async () => {
  const endpoint = await endpointWithPendingDeliveries([2 * HOUR_MS, 0, HOUR_MS]);
  const { dataSource } = await ctx.get(ReportingDatabase).connection();
  const query = jest.spyOn(dataSource, 'query');
  try {
    const metrics = await register.metrics();

    const pendingReads = query.mock.calls.filter(readsPending);
    expect(pendingReads).toHaveLength(1);
    expect(sample(metrics, 'webhook_pending_deliveries', endpoint)).toBe(3);
    const oldest = sample(metrics, 'webhook_oldest_pending_age_seconds', endpoint);
    expect(oldest).toBeGreaterThanOrEqual(7200);
    expect(oldest).toBeLessThan(7200 + 600);
  } finally {
    query.mockRestore();
  }
});

it('reads again at the next scrape', async () => {
  const endpoint = await endpointWithPendingDeliveries([0]);
  const { dataSource } = await ctx.get(ReportingDatabase).connection();
  const query = jest.spyOn(dataSource, 'query');
  try {
    const first = await register.metrics();
    await pool.query(
      `INSERT INTO webhook_delivery (endpoint_id, event_id, event_type, order_no, body, status, attempts,
         schedule_start, next_attempt_at, created_at)
       VALUES (?, ?, 'payment.succeeded', 'ORDER-GAUGES', '{}', 'PENDING', 0, 0, NOW(3) + INTERVAL 1 DAY, NOW(3))`,
      [endpoint, randomUUID()],
    );
    const second = await register.metrics();

    const pendingReads = query.mock.calls.filter(readsPending);
    expect(pendingReads).toHaveLength(2);
    expect(sample(first, 'webhook_pending_deliveries', endpoint)).toBe(1);
    expect(sample(second, 'webhook_pending_deliveries', endpoint)).toBe(2);
  } finally {
    query.mockRestore();
  }
});
