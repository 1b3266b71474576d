import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One POST to an endpoint and what came back: kept for the attempts log. */
@Entity('webhook_attempt')
@Index('uq_webhook_attempt_delivery_attempt', ['deliveryId', 'attempt'], { unique: true })
@Index('ix_webhook_attempt_endpoint_started', ['endpointId', 'startedAt'])
export class WebhookAttempt {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'delivery_id', type: 'bigint' })
  deliveryId: string;

  @Column({ name: 'endpoint_id', type: 'bigint' })
  endpointId: string;

  @Column({ name: 'event_id', type: 'char', length: 36 })
  eventId: string;

  @Column({ type: 'int', unsigned: true })
  attempt: number;

  @Column({ name: 'started_at', type: 'datetime', precision: 3 })
  startedAt: Date;

  @Column({ name: 'latency_ms', type: 'int', unsigned: true })
  latencyMs: number;

  @Column({ name: 'status_code', type: 'smallint', unsigned: true, nullable: true })
  statusCode: number | null;

  @Column({ type: 'boolean' })
  succeeded: boolean;

  @Column({ type: 'varchar', length: 500, nullable: true })
  error: string | null;

  /** The first 1 KB of the answer. */
  @Column({ name: 'response_body', type: 'varchar', length: 1024, nullable: true })
  responseBody: string | null;
}
