import { PaymentOrder } from '../payment-order.entity';

export interface PaymentOrderView {
  orderNo: string;
  userId: string;
  status: string;
  amount: number;
  currency: string;
  /** The channel (and account) registered for the order, then the ones that paid it. */
  channel: string | null;
  merchantId: string | null;
  transactionId: string | null;
  paidAt: string | null;
}

export function toView(order: PaymentOrder): PaymentOrderView {
  return {
    orderNo: order.orderNo,
    userId: order.userId,
    status: order.status,
    amount: order.amount,
    currency: order.currency,
    channel: order.channel,
    merchantId: order.merchantId,
    transactionId: order.transactionId,
    paidAt: order.paidAt?.toISOString() ?? null,
  };
}
