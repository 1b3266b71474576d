import { Injectable } from '@nestjs/common';
import { DomainError } from '../domain/domain-error';
import { CreatePaymentOrderDto } from './dto/create-payment-order.dto';
import { OrderStatus } from './order-status';
import { PaymentOrder } from './payment-order.entity';
import { PaymentOrderRepository } from './payment-order.repository';

@Injectable()
export class PaymentOrderService {
  constructor(private readonly orders: PaymentOrderRepository) {}

  /** Idempotent registration: the same body again returns the order; a different one conflicts. */
  async register(dto: CreatePaymentOrderDto): Promise<{ order: PaymentOrder; created: boolean }> {
    const created = await this.orders.insertIfAbsent(dto);
    const order = await this.get(dto.orderNo);
    if (!created && (order.userId !== dto.userId || order.amount !== dto.amount || order.currency !== dto.currency)) {
      throw new DomainError(
        'OrderConflict',
        `order ${dto.orderNo} already exists with a different userId, amount or currency`,
      );
    }
    return { order, created };
  }

  async get(orderNo: string): Promise<PaymentOrder> {
    const order = await this.orders.find(orderNo);
    if (!order) throw new DomainError('OrderNotFound', `order ${orderNo} not found`);
    return order;
  }

  /** WAIT_PAY → CLOSED by compare-and-set; closing a closed order again is a no-op. */
  async close(orderNo: string): Promise<PaymentOrder> {
    if (await this.orders.closeIfWaiting(orderNo)) return this.get(orderNo);
    const order = await this.get(orderNo);
    if (order.status !== OrderStatus.Closed) {
      throw new DomainError('OrderConflict', `order ${orderNo} is ${order.status} and cannot be closed`);
    }
    return order;
  }
}
