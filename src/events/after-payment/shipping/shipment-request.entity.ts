import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity('shipment_request')
export class ShipmentRequest {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Index('ix_shipment_request_order_no')
  @Column({ name: 'order_no', type: 'varchar', length: 64 })
  orderNo: string;

  @Column({ name: 'event_id', type: 'char', length: 36 })
  eventId: string;

  @Column({ name: 'requested_at', type: 'datetime', precision: 3 })
  requestedAt: Date;
}
