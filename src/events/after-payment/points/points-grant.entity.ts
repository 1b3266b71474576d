import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity('points_grant')
export class PointsGrant {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Index('ix_points_grant_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ name: 'event_id', type: 'char', length: 36 })
  eventId: string;

  @Column({ type: 'bigint' })
  points: string;

  @Column({ name: 'granted_at', type: 'datetime', precision: 3 })
  grantedAt: Date;
}
