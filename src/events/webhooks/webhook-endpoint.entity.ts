import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A receiver of after-payment events: a URL, the event types it wants (null: all), its signing secrets. */
@Entity('webhook_endpoint')
export class WebhookEndpoint {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  description: string | null;

  @Column({ name: 'event_types', type: 'json', nullable: true })
  eventTypes: string[] | null;

  @Column({ type: 'boolean' })
  enabled: boolean;

  /** `whsec_…`, shown once at creation; never logged, never returned again. */
  @Column({ type: 'varchar', length: 64 })
  secret: string;

  /** The secret before the last rotation, still signing alongside the new one until previous_secret_until. */
  @Column({ name: 'previous_secret', type: 'varchar', length: 64, nullable: true })
  previousSecret: string | null;

  @Column({ name: 'previous_secret_until', type: 'datetime', precision: 3, nullable: true })
  previousSecretUntil: Date | null;

  /** Since when every attempt has failed (null after a success): past WEBHOOK_DISABLE_AFTER_SECONDS the endpoint is disabled. */
  @Column({ name: 'failing_since', type: 'datetime', precision: 3, nullable: true })
  failingSince: Date | null;

  @Column({ name: 'disabled_reason', type: 'varchar', length: 200, nullable: true })
  disabledReason: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
