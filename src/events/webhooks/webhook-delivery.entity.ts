import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export const DeliveryStatus = { Pending: 'PENDING', Succeeded: 'SUCCEEDED', Failed: 'FAILED' } as const;
export type DeliveryStatus = (typeof DeliveryStatus)[keyof typeof DeliveryStatus];

/**
 * One event for one endpoint (unique): the exact body signed at every attempt, its status and the
 * time its next attempt is due. A claimed attempt moves next_attempt_at past its timeout: the lease.
 */
@Entity('webhook_delivery')
@Index('uq_webhook_delivery_endpoint_event', ['endpointId', 'eventId'], { unique: true })
@Index('ix_webhook_delivery_due', ['endpointId', 'status', 'nextAttemptAt'])
@Index('ix_webhook_delivery_backlog', ['status', 'nextAttemptAt'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'endpoint_id', type: 'bigint' })
  endpointId: string;

  @Column({ name: 'event_id', type: 'char', length: 36 })
  eventId: string;

  @Column({ name: 'event_type', type: 'varchar', length: 64 })
  eventType: string;

  @Index('ix_webhook_delivery_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ type: 'text' })
  body: string;

  @Column({ type: 'varchar', length: 16 })
  status: DeliveryStatus;

  /** Attempts made (claimed) so far, resends included: the number of the last attempt. */
  @Column({ type: 'int', unsigned: true })
  attempts: number;

  /** `attempts` when the current round of the retry schedule began (0, or at a resend or recover). */
  @Column({ name: 'schedule_start', type: 'int', unsigned: true })
  scheduleStart: number;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3 })
  nextAttemptAt: Date;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'finished_at', type: 'datetime', precision: 3, nullable: true })
  finishedAt: Date | null;
}
