import { DomainError } from '../domain/domain-error';

/** What an order number may be, everywhere the service accepts one. */
export const ORDER_NO = /^[A-Za-z0-9_\-]{1,64}$/;
export const ORDER_NO_MESSAGE = 'orderNo must be 1 to 64 letters, digits, _ or -';

/** An order number from a URL: one that cannot exist is simply not found. */
export function checkOrderNo(orderNo: string): string {
  if (!ORDER_NO.test(orderNo)) throw new DomainError('OrderNotFound', `order ${orderNo.slice(0, 64)} not found`);
  return orderNo;
}
