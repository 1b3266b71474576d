import { nextStatus, OrderEvent, OrderStatus } from './order-status';

const { WaitPay, Paid, Closed, Refunding, PartiallyRefunded, Refunded } = OrderStatus;

describe(nextStatus.name, () => {
  const allowed: Array<[OrderStatus, OrderEvent, OrderStatus]> = [
    [WaitPay, OrderEvent.Pay, Paid],
    [WaitPay, OrderEvent.Close, Closed],
    [Paid, OrderEvent.RequestRefund, Refunding],
    [PartiallyRefunded, OrderEvent.RequestRefund, Refunding],
    [Refunding, OrderEvent.RequestRefund, Refunding],
    [Refunding, OrderEvent.SettleFullRefund, Refunded],
    [Refunding, OrderEvent.SettlePartialRefund, PartiallyRefunded],
    [Refunding, OrderEvent.SettleNoRefund, Paid],
  ];

  it.each(allowed)('should move %s on %s to %s', (from, event, expected) => {
    expect(nextStatus(from, event)).toBe(expected);
  });

  const forbidden = Object.values(OrderStatus).flatMap((from) =>
    Object.values(OrderEvent)
      .filter((event) => !allowed.some(([f, e]) => f === from && e === event))
      .map((event): [OrderStatus, OrderEvent] => [from, event]),
  );

  it.each(forbidden)('should not move %s on %s', (from, event) => {
    expect(nextStatus(from, event)).toBeUndefined();
  });

  it('should never leave a refunded or closed order', () => {
    expect(forbidden.filter(([from]) => from === Refunded || from === Closed)).toHaveLength(
      2 * Object.values(OrderEvent).length,
    );
  });
});
