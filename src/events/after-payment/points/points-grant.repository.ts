import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';

@Injectable()
export class PointsGrantRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** In the caller's transaction: the handler's, with its processed-event row. */
  async insert(orderNo: string, eventId: string, points: number, grantedAt: Date): Promise<void> {
    await this.txHost.tx.query(
      'INSERT INTO points_grant (order_no, event_id, points, granted_at) VALUES (?, ?, ?, ?)',
      [orderNo, eventId, points, grantedAt],
    );
  }
}
