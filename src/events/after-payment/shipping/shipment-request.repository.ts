import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';

@Injectable()
export class ShipmentRequestRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** In the caller's transaction: the handler's, with its processed-event row. */
  async insert(orderNo: string, eventId: string, requestedAt: Date): Promise<void> {
    await this.txHost.tx.query('INSERT INTO shipment_request (order_no, event_id, requested_at) VALUES (?, ?, ?)', [
      orderNo,
      eventId,
      requestedAt,
    ]);
  }
}
