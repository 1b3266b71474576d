/**
 * Orders, payments and refunds for the medium tests, made the way the service makes them: an order
 * by the order service, a payment by a notification the platform's real key signed, verified by
 * the channel's real verifier and applied by the settlement use case (what the notify route does,
 * without HTTP), a refund by the refund use case (what the admin route calls, without HTTP).
 */
import { PaymentChannels } from '../../src/channels/payment-channels';
import { Channel, VerifiedNotification } from '../../src/domain/notification';
import { PaymentOrder } from '../../src/order/payment-order.entity';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { TradeCloseService } from '../../src/trade/trade-close.service';
import { EmergencyRefundRequest } from '../../src/refund/emergency-refund.service';
import { Refund } from '../../src/refund/refund.entity';
import { Refunds } from '../../src/refund/refunds';
import { DeliveryOutcome, Settlement } from '../../src/settlement/settlement.service';
import { yuan } from '../../tools/simulator/platform-signers';
import { MediumContext } from './medium';
import { SignedDeliveries, TestPlatforms, uniqueId } from './test-app';

export interface OrderSpec {
  orderNo?: string;
  amount?: number;
  currency?: string;
  userId?: string;
  channel?: Channel;
}

export interface PaymentSpec {
  orderNo: string;
  transactionId?: string;
  amount: number;
  currency?: string;
  /** WeChat Pay's trade_state or Alipay's trade_status; a paying one when absent. */
  status?: string;
}

export interface RefundNoticeSpec {
  orderNo: string;
  transactionId: string;
  refundNo: string;
  /** The channel's refund id (WeChat Pay's refund_id). */
  channelRefundId?: string;
  /** What the transaction paid and what this refund gives back, in minor units. */
  total: number;
  refund: number;
  /** WeChat Pay's refund status: SUCCESS, CLOSED or ABNORMAL. */
  status?: 'SUCCESS' | 'CLOSED' | 'ABNORMAL';
}

export class Factories {
  readonly deliveries: SignedDeliveries;

  constructor(
    private readonly ctx: MediumContext,
    readonly platforms: TestPlatforms,
  ) {
    this.deliveries = new SignedDeliveries(platforms);
  }

  /** Registers a WAIT_PAY order (1000 minor units of CNY unless told). */
  async order(spec: OrderSpec = {}): Promise<{ orderNo: string; amount: number }> {
    const orderNo = spec.orderNo ?? uniqueId('MO');
    const amount = spec.amount ?? 1000;
    await this.ctx.inContext(() =>
      this.ctx.get(PaymentOrderService).register({
        orderNo,
        amount,
        userId: spec.userId ?? 'u-1',
        currency: spec.currency ?? 'CNY',
        channel: spec.channel,
      }),
    );
    return { orderNo, amount };
  }

  /** Closes a WAIT_PAY order as POST /payment-orders/:orderNo/close does (here only, when its channel's API is unavailable). */
  async close(orderNo: string): Promise<PaymentOrder> {
    const { order } = await this.ctx.inContext(() => this.ctx.get(TradeCloseService).close(orderNo));
    return order;
  }

  /** Verifies a signed payment notification of `channel` and settles it; the settlement's outcome. */
  async payment(channel: Channel, spec: PaymentSpec): Promise<DeliveryOutcome> {
    return this.settle(this.paymentNotification(channel, spec));
  }

  /** The verified notification of a signed payment, as the notify route would hand it to settlement. */
  paymentNotification(channel: Channel, spec: PaymentSpec): VerifiedNotification {
    const transactionId = spec.transactionId ?? uniqueId('T');
    if (channel === Channel.Wechatpay) {
      const delivery = this.deliveries.wechatpayPayment({
        outTradeNo: spec.orderNo,
        transactionId,
        total: spec.amount,
        currency: spec.currency,
        tradeState: spec.status,
      });
      return this.verify(channel, delivery.headers, delivery.body);
    }
    const form = this.deliveries.alipayPayment({
      outTradeNo: spec.orderNo,
      tradeNo: transactionId,
      totalAmount: yuan(spec.amount),
      tradeStatus: spec.status,
    });
    return this.verify(channel, ALIPAY_FORM, form);
  }

  /** An order paid by one transaction and, when `duplicate`, paid again by a second one (a DUPLICATE_PAYMENT). */
  async paidOrder(channel: Channel, amount: number, duplicate = false) {
    const { orderNo } = await this.order({ amount });
    const paidBy = uniqueId('T');
    const duplicateBy = uniqueId('D');
    expect(await this.payment(channel, { orderNo, transactionId: paidBy, amount })).toBe(DeliveryOutcome.Paid);
    if (duplicate) {
      expect(await this.payment(channel, { orderNo, transactionId: duplicateBy, amount })).toBe(
        DeliveryOutcome.DuplicatePayment,
      );
    }
    return { orderNo, paidBy, duplicateBy, amount };
  }

  /**
   * An emergency refund as an admin asks for it, through the refund use case: recorded in one
   * transaction, then, when it may go to the channel, sent after the commit in the background.
   */
  refund(
    request: Omit<EmergencyRefundRequest, 'reason'> & { reason?: string },
    operatorId = 'alice',
  ): Promise<{ refund: Refund; created: boolean }> {
    return this.ctx.get(Refunds).request({ reason: 'money taken twice', ...request }, operatorId);
  }

  /** A signed WeChat Pay REFUND.* notification, verified and settled. */
  async wechatpayRefundNotice(spec: RefundNoticeSpec): Promise<DeliveryOutcome> {
    return this.settle(this.wechatpayRefundNotification(spec));
  }

  wechatpayRefundNotification(spec: RefundNoticeSpec): VerifiedNotification {
    const status = spec.status ?? 'SUCCESS';
    const delivery = this.deliveries.wechatpayRefundNotice(
      {
        outTradeNo: spec.orderNo,
        transactionId: spec.transactionId,
        outRefundNo: spec.refundNo,
        refundId: spec.channelRefundId ?? '50000000382019052709732678859',
        refundStatus: status,
        total: spec.total,
        refund: spec.refund,
      },
      `REFUND.${status}`,
    );
    return this.verify(Channel.Wechatpay, delivery.headers, delivery.body);
  }

  /** A signed Alipay refund notification (trade_status_sync with out_biz_no), verified and settled. */
  async alipayRefundNotice(spec: RefundNoticeSpec): Promise<DeliveryOutcome> {
    return this.settle(this.alipayRefundNotification(spec));
  }

  alipayRefundNotification(spec: RefundNoticeSpec): VerifiedNotification {
    const form = this.deliveries.alipayRefundNotice({
      outTradeNo: spec.orderNo,
      tradeNo: spec.transactionId,
      totalAmount: yuan(spec.total),
      outBizNo: spec.refundNo,
      refundFee: yuan(spec.refund),
    });
    return this.verify(Channel.Alipay, ALIPAY_FORM, form);
  }

  /** Applies a verified notification as a platform's delivery: one transaction, then the delivery log. */
  settle(notification: VerifiedNotification): Promise<DeliveryOutcome> {
    return this.ctx.inContext(() =>
      this.ctx.get(Settlement).settle(notification, { source: 'ROUTE', receivedAt: new Date() }),
    );
  }

  /** The channel's real verifier on the bytes the platform sent. */
  verify(channel: Channel, headers: Record<string, string>, body: string): VerifiedNotification {
    return this.ctx
      .get(PaymentChannels)
      .get(channel)!
      .verify({ headers, body: Buffer.from(body, 'utf8') });
  }
}

const ALIPAY_FORM = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
