import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity('coupon_issue')
export class CouponIssue {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Index('ix_coupon_issue_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ name: 'event_id', type: 'char', length: 36 })
  eventId: string;

  @Column({ name: 'coupon_code', type: 'varchar', length: 32 })
  couponCode: string;

  @Column({ name: 'issued_at', type: 'datetime', precision: 3 })
  issuedAt: Date;
}
