import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintAmount } from '../domain/money';
import { OrderStatus } from './order-status';

@Entity('payment_order')
export class PaymentOrder {
  @PrimaryColumn({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ name: 'user_id', type: 'varchar', length: 64 })
  userId: string;

  /** Integer minor units. */
  @Column({ type: 'bigint', transformer: bigintAmount })
  amount: number;

  @Column({ type: 'char', length: 3 })
  currency: string;

  @Column({ type: 'varchar', length: 32 })
  status: OrderStatus;

  /** The channel and transaction that paid the order; null until PAID. */
  @Column({ type: 'varchar', length: 16, nullable: true })
  channel: string | null;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64, nullable: true })
  transactionId: string | null;

  @Column({ name: 'paid_at', type: 'datetime', precision: 3, nullable: true })
  paidAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
