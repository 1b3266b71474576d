import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One trade query or close at a channel, with its answer: what operators see in the order view. */
@Entity('payment_channel_call')
@Index('ix_payment_channel_call_order', ['orderNo', 'id'])
export class ChannelCall {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ type: 'varchar', length: 16 })
  channel: string;

  @Column({ name: 'merchant_id', type: 'varchar', length: 32 })
  merchantId: string;

  /** QUERY or CLOSE. */
  @Column({ type: 'varchar', length: 8 })
  request: string;

  /** PAID, NOT_PAID, NOT_FOUND, FOREIGN, FAILED (queries); CLOSED, NOT_FOUND, PAID, FAILED, UNAVAILABLE (closes). */
  @Column({ type: 'varchar', length: 16 })
  outcome: string;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64, nullable: true })
  transactionId: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  detail: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
