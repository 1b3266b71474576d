import { nextStatus, OrderEvent, OrderStatus } from './order-status';

describe(nextStatus.name, () => {
  const cases: Array<[OrderStatus, OrderEvent, OrderStatus | undefined]> = [
    [OrderStatus.WaitPay, OrderEvent.Pay, OrderStatus.Paid],
    [OrderStatus.WaitPay, OrderEvent.Close, OrderStatus.Closed],
    [OrderStatus.Paid, OrderEvent.Pay, undefined],
    [OrderStatus.Paid, OrderEvent.Close, undefined],
    [OrderStatus.Closed, OrderEvent.Pay, undefined],
    [OrderStatus.Closed, OrderEvent.Close, undefined],
  ];

  it.each(cases)('should move %s on %s to %s', (from, event, expected) => {
    expect(nextStatus(from, event)).toBe(expected);
  });
});
