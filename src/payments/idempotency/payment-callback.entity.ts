import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { bigintAmount } from '../../domain/money';

/** The idempotency key's index: its name tells a duplicate claim from any other duplicate key. */
export const PAYMENT_CLAIM_KEY = 'uq_payment_callback_channel_transaction';

/**
 * One row per payment (channel, transaction id), however often it was delivered. The unique key is
 * the idempotency guarantee: the first delivery inserts it, every other one finds it. Deliveries
 * are counted in callback_delivery, not here: a counter on this row would make every repeat
 * update it, and concurrent repeats would deadlock on it.
 */
@Entity('payment_callback')
@Index(PAYMENT_CLAIM_KEY, ['channel', 'transactionId'], { unique: true })
@Index('ix_payment_callback_paid_at', ['channel', 'paidAt'])
export class PaymentCallback {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 16 })
  channel: string;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64 })
  transactionId: string;

  /** The account that took it (the channel's merchant or app id): refunds go through the same account. */
  @Column({ name: 'merchant_id', type: 'varchar', length: 32, nullable: true })
  merchantId: string | null;

  /** The sub-merchant it was paid to, when the account is a service provider's (a sub_mchid). */
  @Column({ name: 'sub_merchant_id', type: 'varchar', length: 32, nullable: true })
  subMerchantId: string | null;

  @Index('ix_payment_callback_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ type: 'bigint', transformer: bigintAmount })
  amount: number;

  @Column({ type: 'char', length: 3 })
  currency: string;

  /**
   * What refunds have taken from this payment: pending, in flight or done (a refund the channel
   * closed gives it back). A conditional UPDATE keeps it at most `amount`, across replicas.
   */
  @Column({ name: 'refund_reserved_amount', type: 'bigint', default: 0, transformer: bigintAmount })
  refundReservedAmount: number;

  @Column({ name: 'first_received_at', type: 'datetime', precision: 3 })
  firstReceivedAt: Date;

  /** When the channel says it was paid: the day whose bill it belongs to (null only for rows from before it was kept). */
  @Column({ name: 'paid_at', type: 'datetime', precision: 3, nullable: true })
  paidAt: Date | null;
}
