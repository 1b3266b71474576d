import { PaymentNotification } from '../../domain/notification';
import { OrderStatus } from '../../order/order-status';
import { PaymentOrder } from '../../order/payment-order.entity';
import { AnomalyType } from './anomaly.entity';

/**
 * Why a payment the platform took could not pay its order, read from the order's committed
 * state after the compare-and-set failed. Every answer means money to give back.
 */
export function classifyRejectedPayment(
  order: PaymentOrder,
  payment: Pick<PaymentNotification, 'channel' | 'merchantId' | 'subMerchantId'>,
): AnomalyType {
  switch (order.status) {
    case OrderStatus.Paid:
    case OrderStatus.Refunding:
    case OrderStatus.PartiallyRefunded:
    case OrderStatus.Refunded:
      // Another transaction paid the order already, whatever has been refunded since.
      return AnomalyType.DuplicatePayment;
    case OrderStatus.Closed:
      return AnomalyType.PaidAfterClose;
    case OrderStatus.WaitPay:
      // The CAS matches WAIT_PAY with the exact amount, currency and (when registered) account.
      return paidElsewhere(order, payment) ? AnomalyType.MerchantMismatch : AnomalyType.AmountMismatch;
  }
}

/** The order named its account (or sub-merchant), and the payment went to another one (of that channel or another). */
function paidElsewhere(
  order: PaymentOrder,
  payment: Pick<PaymentNotification, 'channel' | 'merchantId' | 'subMerchantId'>,
): boolean {
  if (order.subMerchantId !== null && order.subMerchantId !== payment.subMerchantId) return true;
  if (order.merchantId === null) return false;
  return order.merchantId !== payment.merchantId || (order.channel !== null && order.channel !== payment.channel);
}
