/** The payment order's life; later issues add the refund states. */
export const OrderStatus = { WaitPay: 'WAIT_PAY', Paid: 'PAID', Closed: 'CLOSED' } as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

export const OrderEvent = { Pay: 'PAY', Close: 'CLOSE' } as const;
export type OrderEvent = (typeof OrderEvent)[keyof typeof OrderEvent];

/** Each event moves an order from any of `from` to `to`; refund events come with the refund issue. */
export const TRANSITIONS: Record<OrderEvent, { from: readonly OrderStatus[]; to: OrderStatus }> = {
  [OrderEvent.Pay]: { from: [OrderStatus.WaitPay], to: OrderStatus.Paid },
  [OrderEvent.Close]: { from: [OrderStatus.WaitPay], to: OrderStatus.Closed },
};

/** The state machine: the next status, or undefined when the event is not allowed from `status`. */
export function nextStatus(status: OrderStatus, event: OrderEvent): OrderStatus | undefined {
  const transition = TRANSITIONS[event];
  return transition.from.includes(status) ? transition.to : undefined;
}
