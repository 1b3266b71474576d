import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * After-payment events, written in the same transaction as the state change that caused them and
 * published afterwards by a relay: an event exists if and only if its cause committed.
 */
@Entity('outbox_event')
@Index('ix_outbox_event_unpublished', ['publishedAt', 'id'])
@Index('ix_outbox_event_webhooks_pending', ['webhooksFannedOutAt', 'id'])
export class OutboxEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Index('uq_outbox_event_event_id', { unique: true })
  @Column({ name: 'event_id', type: 'char', length: 36 })
  eventId: string;

  @Column({ type: 'varchar', length: 64 })
  type: string;

  /** The relay keeps each order's events in order (OutboxRepository.claimDue): it looks up earlier ones by order. */
  @Index('ix_outbox_event_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ type: 'json' })
  payload: Record<string, unknown>;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'published_at', type: 'datetime', precision: 3, nullable: true })
  publishedAt: Date | null;

  /** Failed publish attempts while the broker was reachable. */
  @Column({ type: 'int', unsigned: true, default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError: string | null;

  /** Set after too many failed attempts: kept, listed and replayable, never dropped. */
  @Column({ name: 'dead_lettered_at', type: 'datetime', precision: 3, nullable: true })
  deadLetteredAt: Date | null;

  /** When the webhook deliveries of the event were written (one per matching endpoint); null until then. */
  @Column({ name: 'webhooks_fanned_out_at', type: 'datetime', precision: 3, nullable: true })
  webhooksFannedOutAt: Date | null;
}
