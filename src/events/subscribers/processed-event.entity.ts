import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Consumer-side idempotency: written in the same transaction as a handler's effect, so an event
 * delivered again (broker redelivery, relay retry, replay) finds its row and has no second effect.
 */
@Entity('processed_event')
@Index('uq_processed_event_consumer_event', ['consumer', 'eventId'], { unique: true })
export class ProcessedEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 64 })
  consumer: string;

  @Column({ name: 'event_id', type: 'char', length: 36 })
  eventId: string;

  @Index('ix_processed_event_processed_at')
  @Column({ name: 'processed_at', type: 'datetime', precision: 3 })
  processedAt: Date;
}
