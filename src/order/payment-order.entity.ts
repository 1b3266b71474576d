import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
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

  /** The channel (and account) the order was registered for, then the ones that paid it; null: any. */
  @Column({ type: 'varchar', length: 16, nullable: true })
  channel: string | null;

  /** The channel's merchant or app id. */
  @Column({ name: 'merchant_id', type: 'varchar', length: 32, nullable: true })
  merchantId: string | null;

  /** The sub-merchant of that account (a service provider's) the order is for, then the one that paid it; null: any. */
  @Column({ name: 'sub_merchant_id', type: 'varchar', length: 32, nullable: true })
  subMerchantId: string | null;

  /**
   * yyyyMMddHHmmss as sent to the channel (Beijing time): the channel's own key
   * of the order, kept verbatim as text, never read through a time zone; null when not registered.
   */
  @Column({ name: 'channel_order_time', type: 'char', length: 14, nullable: true })
  channelOrderTime: string | null;

  /** The transaction that paid the order; null until PAID. */
  @Column({ name: 'transaction_id', type: 'varchar', length: 64, nullable: true })
  transactionId: string | null;

  @Column({ name: 'paid_at', type: 'datetime', precision: 3, nullable: true })
  paidAt: Date | null;

  /** When to ask the channel next whether a WAIT_PAY order was paid; null when there is nothing more to ask. */
  @Index('ix_payment_order_next_query_at')
  @Column({ name: 'next_query_at', type: 'datetime', precision: 3, nullable: true })
  nextQueryAt: Date | null;

  /** The order list pages by (created_at, order_no): InnoDB keeps the primary key in the index. */
  @Index('ix_payment_order_created_at')
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
