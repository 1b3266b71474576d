import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** An event one handler failed on: retried with backoff, dead-lettered after too many attempts. */
@Entity('handler_retry')
@Index('uq_handler_retry_consumer_event', ['consumer', 'eventId'], { unique: true })
@Index('ix_handler_retry_due', ['deadLetteredAt', 'nextAttemptAt'])
export class HandlerRetry {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 64 })
  consumer: string;

  @Column({ name: 'event_id', type: 'char', length: 36 })
  eventId: string;

  @Column({ type: 'json' })
  payload: Record<string, unknown>;

  @Column({ type: 'int', unsigned: true })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3 })
  nextAttemptAt: Date;

  @Column({ name: 'last_error', type: 'varchar', length: 500 })
  lastError: string;

  @Column({ name: 'dead_lettered_at', type: 'datetime', precision: 3, nullable: true })
  deadLetteredAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
