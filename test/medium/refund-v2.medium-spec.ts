import { Pool } from 'mysql2/promise';
import { DomainError } from '../../src/domain/domain-error';
import { Channel } from '../../src/domain/notification';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { randomAlphanumeric } from '../../tools/simulator/platform-signers';
import { FakeWechatpayV2Api } from '../../tools/simulator/wechatpay/v2/fake-wechatpay-v2-api';
import { createV2TlsMaterial } from '../../tools/simulator/wechatpay/v2/v2-tls';
import { waitFor } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { OrderEffects } from '../support/order-effects';
import { RefundEffects } from '../support/refund-effects';
import { notificationsOnly, uniqueId } from '../support/test-app';

/**
 * Refunds of a WeChat Pay account with only an APIv2 key (its API calls go to a local fake of APIv2
 * over HTTPS, refunds with the merchant's client certificate), as services on the real database.
 * Payments come by APIv3 notifications, which the account still verifies.
 */
const API_V2_KEY = randomAlphanumeric(32);

let medium: Medium;
let fake: FakeWechatpayV2Api;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;
let orders: OrderEffects;
let refunds: RefundEffects;

beforeAll(async () => {
  // The refund worker takes every due refund in its database: other suites' would come first.
  medium = await startMedium({}, { fake: false, replicas: 0, ownDatabase: true });
  const { platforms } = medium;
  const { mchid, appid } = platforms.wechatpay;
  const tls = createV2TlsMaterial(mchid);
  fake = await FakeWechatpayV2Api.start({ mchid, appid, apiV2Key: API_V2_KEY }, tls);
  ctx = await medium.another(
    (p) => ({
      // Without the merchant's APIv3 key, the account's API calls go to APIv2.
      ...notificationsOnly(p.env),
      WECHATPAY_APIV2_KEY: API_V2_KEY,
      WECHATPAY_APIV2_CERT_PATH: tls.clientP12Path,
      WECHATPAY_APIV2_CA_PATH: tls.serverCertPath,
      WECHATPAY_API_BASE_URL: fake.url,
      REFUND_REQUEST_TIMEOUT_MS: '2000',
      REFUND_RETRY_BASE_DELAY_MS: '500',
      REFUND_RETRY_MAX_DELAY_MS: '1000',
      REFUND_POLL_INTERVAL_MS: '100',
    }),
    [OrderModule, SettlementModule],
  );
  make = new Factories(ctx, platforms);
  pool = medium.pool;
  orders = new OrderEffects(pool);
  refunds = new RefundEffects(pool);
});

afterAll(async () => {
  await ctx?.close();
  await fake?.close();
  await medium?.close();
});

describe('an APIv2 refund the channel made, whose answer was lost', () => {
  it('should ask refundquery about it instead of sending it again, end SUCCEEDED, and refuse a second full refund', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 5400);
    const refundNo = uniqueId('V2L');
    fake.refundAnswersToLose = 1;

    await make.refund({ orderNo, transactionId: paidBy, refundNo });

    const settled = await waitFor(
      `refund ${refundNo} to settle`,
      async () => {
        const refund = await refunds.row(refundNo);
        return refund && !['PENDING', 'PROCESSING'].includes(String(refund.status)) && refund;
      },
      60_000,
    );
    expect(settled.status).toBe('SUCCEEDED');
    const second = await make
      .refund({ orderNo, transactionId: paidBy, refundNo: uniqueId('V2M') })
      .catch((e: unknown) => e);
    expect(second).toBeInstanceOf(DomainError);
    expect((second as DomainError).code).toBe('OverRefund');
    expect(fake.refundsOf(paidBy)).toBe(1);
    expect(fake.callsTo('/secapi/pay/refund').filter((c) => c.fields.transaction_id === paidBy)).toHaveLength(1);
    expect(fake.callsTo('/pay/refundquery').filter((c) => c.fields.out_refund_no === refundNo).length).toBeGreaterThan(
      0,
    );
    expect(await refunds.reserved(paidBy)).toBe(5400);
    expect(await orders.status(orderNo)).toBe('REFUNDED');
  });
});
