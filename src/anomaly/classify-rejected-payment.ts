import { OrderStatus } from '../order/order-status';
import { PaymentOrder } from '../order/payment-order.entity';
import { AnomalyType } from './anomaly.entity';

/**
 * Why a payment the platform took could not pay its order, read from the order's committed
 * state after the compare-and-set failed. Every answer means money to give back.
 */
export function classifyRejectedPayment(order: PaymentOrder): AnomalyType {
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
      // The CAS matches WAIT_PAY with the exact amount and currency; only a mismatch fails it here.
      return AnomalyType.AmountMismatch;
  }
}
