/**
 * The notify route's use case without HTTP, for the medium suites about deliveries: a platform's
 * signed bytes handed to NotificationIntake.receive as the route hands them over, the reply it
 * would send, the app's readiness composition, and the process's metrics.
 */
import { randomUUID } from 'node:crypto';
import { register } from 'prom-client';
import { PlatformReply } from '../../src/channels/payment-channel';
import { EventsHealthIndicator } from '../../src/events/events.health';
import { EventsModule } from '../../src/events/events.module';
import { NotificationIntake } from '../../src/intake/notification-intake';
import { NotifyModule } from '../../src/intake/notify.module';
import { DeliverySpool } from '../../src/intake/spool/delivery-spool';
import { SpoolHealthIndicator } from '../../src/intake/spool/spool.health';
import { SpoolModule } from '../../src/intake/spool/spool.module';
import { OrderModule } from '../../src/order/order.module';
import { HealthModule } from '../../src/platform/health/health.module';
import { Readiness } from '../../src/platform/health/readiness';
import { LifecycleModule } from '../../src/platform/lifecycle/lifecycle.module';
import { yuan } from '../../tools/simulator/platform-signers';
import { Factories } from './factories';
import { createMediumModule, MediumContext } from './medium';
import { metricValue } from './order-effects';
import { inParallel, StormPayment } from './payment-storm';
import { SignedDeliveries, TestPlatforms } from './test-app';

/** The orders, the notify use case and readiness composed as in app.module.ts. */
export const INTAKE_MODULES = [
  OrderModule,
  NotifyModule,
  LifecycleModule,
  HealthModule.forRoot({
    imports: [EventsModule, SpoolModule],
    providers: [EventsHealthIndicator],
    reports: [EventsHealthIndicator, SpoolHealthIndicator],
    outageCover: DeliverySpool,
  }),
];

export const FORM = 'application/x-www-form-urlencoded; charset=utf-8';

/** One instance of the service without HTTP: the notify use case, its orders, its readiness. */
export class IntakeInstance {
  readonly make: Factories;
  readonly signed: SignedDeliveries;

  constructor(
    readonly ctx: MediumContext,
    platforms: TestPlatforms,
  ) {
    this.make = new Factories(ctx, platforms);
    this.signed = new SignedDeliveries(platforms);
  }

  static async start(platforms: TestPlatforms, env: Record<string, string>, extra: unknown[] = []) {
    const imports = [...INTAKE_MODULES, ...extra] as Parameters<typeof createMediumModule>[0];
    return new IntakeInstance(await createMediumModule(imports, env), platforms);
  }

  /** POST /notify/<notifyPath> of these bytes, as the route hands them to the use case. */
  receive(notifyPath: string, headers: Record<string, string>, body: string): Promise<PlatformReply> {
    return this.ctx.inContext(() =>
      this.ctx.get(NotificationIntake).receive({
        notifyPath,
        headers,
        body: Buffer.from(body, 'utf8'),
        requestId: randomUUID(),
      }),
    );
  }

  wechatpay(delivery: { headers: Record<string, string>; body: string }): Promise<PlatformReply> {
    return this.receive('wechatpay', delivery.headers, delivery.body);
  }

  alipay(form: string): Promise<PlatformReply> {
    return this.receive('alipay', { 'content-type': FORM }, form);
  }

  /** One delivery of the payment, freshly signed, as the platform sends each retry. */
  deliver(p: StormPayment): Promise<PlatformReply> {
    if (p.channel === 'WECHATPAY') {
      return this.wechatpay(
        this.signed.wechatpayPayment({ outTradeNo: p.orderNo, transactionId: p.transactionId, total: p.amount }),
      );
    }
    return this.alipay(
      this.signed.alipayPayment({ outTradeNo: p.orderNo, tradeNo: p.transactionId, totalAmount: yuan(p.amount) }),
    );
  }

  async registerAll(payments: StormPayment[], concurrency = 10): Promise<void> {
    await inParallel(payments, concurrency, async (p) => {
      await this.make.order({ orderNo: p.orderNo, amount: p.amount });
    });
  }

  /** /health/ready: whether the instance is ready, and its report's details. */
  async readiness(): Promise<{ ready: boolean; details: Record<string, Record<string, unknown>> }> {
    const { ready, report } = await this.ctx.get(Readiness).report();
    return { ready, details: report.details };
  }

  async spool() {
    return (await this.readiness()).details.spool;
  }

  close(): Promise<void> {
    return this.ctx.close();
  }
}

/** The channel's success ack: WeChat 204, Alipay 200 `success`. */
export function isAck(p: Pick<StormPayment, 'channel'>, reply: PlatformReply): boolean {
  return p.channel === 'WECHATPAY' ? reply.status === 204 : reply.status === 200 && reply.body === 'success';
}

/** A counter or gauge of this process's registry (every module of the suite shares it, as the apps did). */
export async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricValue(await register.metrics(), name, labels);
}
