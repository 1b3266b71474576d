import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Every accepted delivery, with the exact bytes received, for reconciliation. Append-only, except
 * that retention empties the bytes of old rows (see DeliveryBytesRetention); the row and its outcome stay.
 */
@Entity('callback_delivery')
// Retention finds the rows whose bytes are still there in received order, without rescanning pruned ones.
@Index('ix_callback_delivery_raw_retention', ['rawPrunedAt', 'receivedAt'])
export class CallbackDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 16 })
  channel: string;

  @Column({ name: 'event_type', type: 'varchar', length: 64 })
  eventType: string;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64, nullable: true })
  transactionId: string | null;

  @Index('ix_callback_delivery_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64, nullable: true })
  orderNo: string | null;

  /** Whether the notification said money was taken (a payment delivery, first or repeat). */
  @Column({ type: 'boolean', default: false })
  pays: boolean;

  /** What this delivery did: PAID, DUPLICATE, NOT_PAYING, or an anomaly type. */
  @Column({ type: 'varchar', length: 32 })
  outcome: string;

  @Column({ name: 'raw_body', type: 'mediumblob' })
  rawBody: Buffer;

  @Column({ type: 'json' })
  headers: Record<string, string>;

  @Index('ix_callback_delivery_received_at')
  @Column({ name: 'received_at', type: 'datetime', precision: 3 })
  receivedAt: Date;

  /** From the request's arrival to its outcome committed; null for rows written before it was measured. */
  @Column({ name: 'processing_ms', type: 'int', unsigned: true, nullable: true })
  processingMs: number | null;

  /** SHA-256 naming one signed sending (e.g. its signed timestamp, nonce and signature); null where the channel has none. */
  @Index('uq_callback_delivery_replay_key', { unique: true })
  @Column({ name: 'replay_key', type: 'binary', length: 32, nullable: true })
  replayKey: Buffer | null;

  /** The same signed sending received again (a replay): counted here, its bytes not stored again. */
  @Column({ type: 'int', unsigned: true, default: 0 })
  replays: number;

  /** When retention removed the raw bytes (and the headers, if large); null while they are kept. */
  @Column({ name: 'raw_pruned_at', type: 'datetime', precision: 3, nullable: true })
  rawPrunedAt: Date | null;
}
