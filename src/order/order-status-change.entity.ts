import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { OrderEvent, OrderStatus } from './order-status';

/** The order's history: one row per status change, written in the transaction that made it. */
@Entity('order_status_change')
@Index('ix_order_status_change_order', ['orderNo', 'id'])
export class OrderStatusChange {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  /** Null for the registration. */
  @Column({ name: 'from_status', type: 'varchar', length: 32, nullable: true })
  fromStatus: OrderStatus | null;

  @Column({ name: 'to_status', type: 'varchar', length: 32 })
  toStatus: OrderStatus;

  /** The state machine event, or REGISTER. */
  @Column({ type: 'varchar', length: 32 })
  event: OrderEvent | 'REGISTER';

  /** What caused it: a transaction id, a refund number, an operator. */
  @Column({ type: 'varchar', length: 128, nullable: true })
  cause: string | null;

  @Column({ name: 'changed_at', type: 'datetime', precision: 3 })
  changedAt: Date;
}
