import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** Who did what to which target, with the request and its result; written in the change's own transaction. */
@Entity('admin_audit')
@Index('ix_admin_audit_target', ['target', 'id'])
export class AdminAudit {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'operator_id', type: 'varchar', length: 64 })
  operatorId: string;

  @Column({ type: 'varchar', length: 64 })
  action: string;

  /** e.g. `order:ORD-1`. */
  @Column({ type: 'varchar', length: 128 })
  target: string;

  @Column({ name: 'request_body', type: 'json' })
  requestBody: unknown;

  @Column({ type: 'json' })
  result: unknown;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
