/** What an order number may be, everywhere the service accepts one. */
export const ORDER_NO = /^[A-Za-z0-9_\-]{1,64}$/;
export const ORDER_NO_MESSAGE = 'orderNo must be 1 to 64 letters, digits, _ or -';
