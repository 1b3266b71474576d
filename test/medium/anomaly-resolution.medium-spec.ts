import { Pool, RowDataPacket } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { toAnomalyView } from '../../src/admin/dto/admin-views';
import { Channel } from '../../src/domain/notification';
import { AnomalyResolution, ResolutionRequest } from '../../src/payments/anomaly/anomaly-resolution';
import { PaymentAnomaly, ResolutionReason } from '../../src/payments/anomaly/anomaly.entity';
import { AuditLog } from '../../src/operators/audit/audit-log';
import { Refunds } from '../../src/refund/refunds';
import { domainFailure, Medium, MediumContext, startMedium } from '../support/medium';
import { count, uniqueId } from '../support/test-app';

/**
 * Closing an anomaly without a refund, as a service on two replicas of one
 * database: idempotent, four eyes at or above REFUND_APPROVAL_THRESHOLD, and never together with a
 * refund. What only HTTP shows (tokens, validation,
 * the audit of refused calls, the decisions' history) is in test/refunds.e2e-spec.ts.
 */
const THRESHOLD = 5000;

let setup: Medium;
let replicas: MediumContext[];
let pool: Pool;

beforeAll(async () => {
  // The refund worker takes every due refund of its database: other suites' would come first.
  setup = await startMedium(
    { REFUND_APPROVAL_THRESHOLD: String(THRESHOLD), REFUND_POLL_INTERVAL_MS: '50' },
    { ownDatabase: true, replicas: 2 },
  );
  ({ replicas, pool } = setup);
});

afterAll(() => setup?.close());

/** An order paid twice: the second transaction's DUPLICATE_PAYMENT anomaly, of `amount`. */
async function duplicateAnomaly(amount: number, channel: Channel = Channel.Wechatpay) {
  const { orderNo, duplicateBy } = await setup.makes[0].paidOrder(channel, amount, true);
  const [[row]] = await pool.query<RowDataPacket[]>('SELECT id FROM payment_anomaly WHERE transaction_id = ?', [
    duplicateBy,
  ]);
  return { orderNo, transactionId: duplicateBy, id: String(row.id) };
}

/** One step of the resolution, with its audit row in the step's own transaction, as the admin route runs it. */
function audited<T extends PaymentAnomaly | { anomaly: PaymentAnomaly }>(
  replica: number,
  operatorId: string,
  id: string,
  action: (anomaly: PaymentAnomaly) => string,
  step: (resolution: AnomalyResolution, alongside: (result: T) => Promise<void>) => Promise<T>,
): Promise<T> {
  const ctx = replicas[replica];
  const alongside = async (result: T) => {
    const anomaly = result instanceof PaymentAnomaly ? result : result.anomaly;
    await ctx.get(AuditLog).record({
      operatorId,
      action: action(anomaly),
      target: `anomaly:${id}`,
      requestBody: null,
      result: { status: anomaly.status, resolution: anomaly.resolutionStatus },
    });
  };
  return ctx.inContext(() => step(ctx.get(AnomalyResolution), alongside));
}

const accepted: ResolutionRequest = { reason: ResolutionReason.AcceptedAsPaid, note: 'the merchant keeps it' };
const resolve = (id: string, operatorId: string, request: ResolutionRequest = accepted, replica = 0) =>
  audited<{ anomaly: PaymentAnomaly; created: boolean }>(
    replica,
    operatorId,
    id,
    (a) => (a.status === 'RESOLVED' ? 'ANOMALY_RESOLVED' : 'ANOMALY_RESOLUTION_REQUESTED'),
    (r, alongside) => r.request(id, request, operatorId, alongside),
  );
const approve = (id: string, operatorId: string, replica = 0) =>
  audited<PaymentAnomaly>(
    replica,
    operatorId,
    id,
    () => 'ANOMALY_RESOLUTION_APPROVED',
    (r, alongside) => r.approve(id, operatorId, alongside),
  );
const reject = (id: string, operatorId: string) =>
  audited<{ withdrawn: PaymentAnomaly; anomaly: PaymentAnomaly }>(
    0,
    operatorId,
    id,
    () => 'ANOMALY_RESOLUTION_REJECTED',
    (r, alongside) => r.reject(id, alongside),
  );
const refund = (orderNo: string, transactionId: string, replica = 0) =>
  replicas[replica]
    .get(Refunds)
    .request({ orderNo, transactionId, refundNo: uniqueId('RR'), reason: 'paid twice' }, 'alice');

const anomalyRow = async (id: string) =>
  (
    await pool.query<Array<RowDataPacket & { resolution_status: string | null }>>(
      'SELECT * FROM payment_anomaly WHERE id = ?',
      [id],
    )
  )[0][0];
const changes = async (id: string) =>
  (
    await pool.query<RowDataPacket[]>('SELECT operator_id, action FROM admin_audit WHERE target = ? ORDER BY id', [
      `anomaly:${id}`,
    ])
  )[0].map((a) => `${a.operator_id} ${a.action}`);
const refundsOf = (transactionId: string) =>
  count(pool, 'SELECT COUNT(*) FROM refund WHERE transaction_id = ?', [transactionId]);
const reserved = (transactionId: string) =>
  count(pool, 'SELECT refund_reserved_amount FROM payment_callback WHERE transaction_id = ?', [transactionId]);

describe('a resolution below the threshold', () => {
  it('should close the anomaly at once, audited, and answer a repeat without changing anything', async () => {
    const { id } = await duplicateAnomaly(THRESHOLD - 1);

    const first = await resolve(id, 'alice');
    const again = await resolve(id, 'alice', accepted, 1);

    expect({ ...toAnomalyView(first.anomaly), created: first.created }).toMatchObject({
      id,
      status: 'RESOLVED',
      created: true,
      resolution: {
        status: 'APPLIED',
        reason: 'ACCEPTED_AS_PAID',
        reference: null,
        note: 'the merchant keeps it',
        requestedBy: 'alice',
        reviewedBy: null,
      },
    });
    expect({ status: again.anomaly.status, created: again.created }).toEqual({ status: 'RESOLVED', created: false });
    expect(await anomalyRow(id)).toMatchObject({
      status: 'RESOLVED',
      resolution_status: 'APPLIED',
      resolution_reason: 'ACCEPTED_AS_PAID',
      resolution_requested_by: 'alice',
    });
    expect(await changes(id)).toEqual(['alice ANOMALY_RESOLVED', 'alice ANOMALY_RESOLVED']);
    const stored = await replicas[0].get(DataSource).getRepository(PaymentAnomaly).findOneByOrFail({ id });
    expect(toAnomalyView(stored)).toMatchObject({ status: 'RESOLVED', resolution: { status: 'APPLIED' } });
  });

  it('should refuse another resolution, and any refund of it afterwards, writing nothing', async () => {
    const { id, orderNo, transactionId } = await duplicateAnomaly(THRESHOLD - 1, Channel.Alipay);
    await resolve(id, 'alice', { reason: ResolutionReason.RefundedOutside, note: 'bank transfer' });

    const other = await domainFailure(resolve(id, 'bob'));
    const refunded = await domainFailure(refund(orderNo, transactionId));

    expect(other.status).toBe(409);
    expect(other.message).toContain('already has a resolution APPLIED (REFUNDED_OUTSIDE, by alice)');
    expect(refunded.status).toBe(409);
    expect(refunded.message).toContain('resolved without a refund');
    expect(await refundsOf(transactionId)).toBe(0);
    expect(await reserved(transactionId)).toBe(0);
    expect(await anomalyRow(id)).toMatchObject({ status: 'RESOLVED', resolution_reason: 'REFUNDED_OUTSIDE' });
    expect(await changes(id)).toEqual(['alice ANOMALY_RESOLVED']);
  });
});

describe('a resolution at or above REFUND_APPROVAL_THRESHOLD', () => {
  it("should wait for another admin's approval, closed to refunds meanwhile, and never be approved by its requester", async () => {
    const { id, orderNo, transactionId } = await duplicateAnomaly(THRESHOLD);

    const requested = await resolve(id, 'alice', {
      reason: ResolutionReason.DuplicateOf,
      reference: 'ticket-42',
      note: 'counted twice',
    });
    const refundMeanwhile = await domainFailure(refund(orderNo, transactionId));
    const own = await domainFailure(approve(id, 'alice'));

    expect({ ...toAnomalyView(requested.anomaly), created: requested.created }).toMatchObject({
      status: 'OPEN',
      created: true,
      resolution: { status: 'AWAITING_APPROVAL', reason: 'DUPLICATE_OF', reference: 'ticket-42' },
    });
    expect(refundMeanwhile.status).toBe(409);
    expect(own).toMatchObject({ code: 'Forbidden', status: 403 });
    expect(own.message).toContain('alice asked to resolve anomaly');
    expect(await anomalyRow(id)).toMatchObject({ status: 'OPEN', resolution_status: 'AWAITING_APPROVAL' });
    expect(await refundsOf(transactionId)).toBe(0);

    const approved = await approve(id, 'bob', 1);

    expect(toAnomalyView(approved)).toMatchObject({
      status: 'RESOLVED',
      resolution: { status: 'APPLIED', requestedBy: 'alice', reviewedBy: 'bob' },
    });
    expect(await changes(id)).toEqual(['alice ANOMALY_RESOLUTION_REQUESTED', 'bob ANOMALY_RESOLUTION_APPROVED']);
  });

  it('should open the anomaly to a refund again once rejected', async () => {
    const { id, orderNo, transactionId } = await duplicateAnomaly(THRESHOLD + 1000, Channel.Alipay);
    await resolve(id, 'alice');

    const rejected = await reject(id, 'carol');
    const refunded = await refund(orderNo, transactionId);

    expect(toAnomalyView(rejected.anomaly)).toMatchObject({ status: 'OPEN', resolution: null });
    expect(refunded.created).toBe(true);
    expect((await anomalyRow(id)).resolution_status).toBeNull();
    expect(await refundsOf(transactionId)).toBe(1);
    expect(await domainFailure(approve(id, 'bob'))).toMatchObject({ status: 409 });
    expect(await changes(id)).toEqual(['alice ANOMALY_RESOLUTION_REQUESTED', 'carol ANOMALY_RESOLUTION_REJECTED']);
  });

  it('should not be resolved while a refund of it is in flight', async () => {
    const { id, orderNo, transactionId } = await duplicateAnomaly(THRESHOLD);
    // AWAITING_APPROVAL: the anomaly is REFUNDING.
    expect((await refund(orderNo, transactionId)).refund.status).toBe('AWAITING_APPROVAL');

    const refused = await domainFailure(resolve(id, 'bob'));

    expect(refused.status).toBe(409);
    expect(refused.message).toContain('has a refund in flight');
    expect(await anomalyRow(id)).toMatchObject({ status: 'REFUNDING', resolution_status: null });
  });
});

describe('at once', () => {
  it('should let one of ten different resolutions on two replicas win, and apply a repeated one once', async () => {
    const { id } = await duplicateAnomaly(1000);
    const answers = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        resolve(id, i % 2 ? 'carol' : 'alice', { ...accepted, note: `note ${i}` }, i % 2),
      ),
    );
    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    const refused = answers.flatMap((a) => (a.status === 'rejected' ? [a.reason as { status: number }] : []));
    expect(refused.map((e) => e.status)).toEqual(Array(9).fill(409));
    expect(await changes(id)).toHaveLength(1);

    const same = await duplicateAnomaly(1000, Channel.Alipay);
    const repeats = await Promise.all(Array.from({ length: 10 }, (_, i) => resolve(same.id, 'alice', accepted, i % 2)));
    expect(repeats.filter((a) => a.created)).toHaveLength(1);
    expect(
      await count(pool, 'SELECT COUNT(*) FROM payment_anomaly WHERE id = ? AND status = ?', [same.id, 'RESOLVED']),
    ).toBe(1);
  });

  it('should let exactly one of a resolution and a refund apply, 10 times out of 10', async () => {
    for (let iteration = 0; iteration < 10; iteration++) {
      const { id, orderNo, transactionId } = await duplicateAnomaly(
        1000,
        iteration % 2 ? Channel.Alipay : Channel.Wechatpay,
      );

      const [resolved, refunded] = await Promise.allSettled([
        resolve(id, 'bob', accepted, iteration % 2),
        refund(orderNo, transactionId, (iteration + 1) % 2),
      ]);

      const statusOf = (a: PromiseSettledResult<unknown>) =>
        a.status === 'fulfilled' ? 'applied' : (a.reason as { status: number }).status;
      const resolutionWon = resolved.status === 'fulfilled';
      expect({ resolved: statusOf(resolved), refunded: statusOf(refunded) }).toEqual(
        resolutionWon ? { resolved: 'applied', refunded: 409 } : { resolved: 409, refunded: 'applied' },
      );
      const row = await anomalyRow(id);
      expect({
        resolution: row.resolution_status,
        refunds: await refundsOf(transactionId),
        reserved: await reserved(transactionId),
        resolutions: (await changes(id)).length,
      }).toEqual(
        resolutionWon
          ? { resolution: 'APPLIED', refunds: 0, reserved: 0, resolutions: 1 }
          : { resolution: null, refunds: 1, reserved: 1000, resolutions: 0 },
      );
    }
  });
});

describe('its audit rows', () => {
  it('should refuse an audit row outside a transaction, writing nothing, so that none commits apart from its change', async () => {
    const target = `anomaly:${uniqueId('NT')}`;
    const entry = { operatorId: 'alice', action: 'ANOMALY_RESOLVED', target, requestBody: null, result: null };

    await expect(replicas[0].inContext(() => replicas[0].get(AuditLog).record(entry))).rejects.toThrow(/transaction/i);

    expect(await count(pool, 'SELECT COUNT(*) AS n FROM admin_audit WHERE target = ?', [target])).toBe(0);
  });
});
