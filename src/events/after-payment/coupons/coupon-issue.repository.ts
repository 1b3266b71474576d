import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';

@Injectable()
export class CouponIssueRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** In the caller's transaction: the handler's, with its processed-event row. */
  async insert(orderNo: string, eventId: string, couponCode: string, issuedAt: Date): Promise<void> {
    await this.txHost.tx.query(
      'INSERT INTO coupon_issue (order_no, event_id, coupon_code, issued_at) VALUES (?, ?, ?, ?)',
      [orderNo, eventId, couponCode, issuedAt],
    );
  }
}
