/** The payment order's life. */
export const OrderStatus = {
  WaitPay: 'WAIT_PAY',
  Paid: 'PAID',
  Closed: 'CLOSED',
  Refunding: 'REFUNDING',
  PartiallyRefunded: 'PARTIALLY_REFUNDED',
  Refunded: 'REFUNDED',
} as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

export const OrderEvent = {
  Pay: 'PAY',
  Close: 'CLOSE',
  /** A refund of the paying transaction was requested. */
  RequestRefund: 'REQUEST_REFUND',
  /** No refund is in flight any more; which status follows depends on how much was refunded. */
  SettleFullRefund: 'SETTLE_FULL_REFUND',
  SettlePartialRefund: 'SETTLE_PARTIAL_REFUND',
  SettleNoRefund: 'SETTLE_NO_REFUND',
} as const;
export type OrderEvent = (typeof OrderEvent)[keyof typeof OrderEvent];

const { WaitPay, Paid, Closed, Refunding, PartiallyRefunded, Refunded } = OrderStatus;

/** Each event moves an order from any of `from` to `to`. */
export const TRANSITIONS: Record<OrderEvent, { from: readonly OrderStatus[]; to: OrderStatus }> = {
  [OrderEvent.Pay]: { from: [WaitPay], to: Paid },
  [OrderEvent.Close]: { from: [WaitPay], to: Closed },
  [OrderEvent.RequestRefund]: { from: [Paid, PartiallyRefunded, Refunding], to: Refunding },
  [OrderEvent.SettleFullRefund]: { from: [Refunding], to: Refunded },
  [OrderEvent.SettlePartialRefund]: { from: [Refunding], to: PartiallyRefunded },
  [OrderEvent.SettleNoRefund]: { from: [Refunding], to: Paid },
};

/** The state machine: the next status, or undefined when the event is not allowed from `status`. */
export function nextStatus(status: OrderStatus, event: OrderEvent): OrderStatus | undefined {
  const transition = TRANSITIONS[event];
  return transition.from.includes(status) ? transition.to : undefined;
}
