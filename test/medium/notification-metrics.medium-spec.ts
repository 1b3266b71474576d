import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { exposition, receive } from '../support/medium-intake';
import { metricValue } from '../support/order-effects';
import { notificationsOnly, uniqueId } from '../support/test-app';

/**
 * What the notify use case counts in payment_notifications_total, read from the registry /metrics
 * serves (the scrape's format, the alert rules' metrics and the gauges stay in
 * test/operations-metrics.e2e-spec.ts).
 */
let setup: Medium;
let ctx: MediumContext;
let make: Factories;

beforeAll(async () => {
  setup = await startMedium((p) => notificationsOnly(p.env), {
    imports: [OrderModule, SettlementModule, TradeModule, NotifyModule],
    fake: false,
  });
  ({ ctx, make } = setup);
});

afterAll(() => setup?.close());

it('should count a notification for an unknown order as REFUSED, which PaymentNotificationsRefused reads', async () => {
  const notificationsOf = async (outcome: string) =>
    metricValue(await exposition(), 'payment_notifications_total', {
      channel: 'WECHATPAY',
      outcome,
      reason: 'OrderNotFound',
    });
  const before = await notificationsOf('REFUSED');

  const delivery = make.deliveries.wechatpayPayment({
    outTradeNo: uniqueId('UNKNOWN'),
    transactionId: uniqueId('T'),
    total: 500,
  });
  const answer = await receive(ctx, 'wechatpay', delivery.headers, delivery.body);

  expect(answer.status).toBe(404);
  expect(await notificationsOf('REFUSED')).toBe(before + 1);
  expect(await notificationsOf('FAILED')).toBe(0);
});
