import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';

type Row = Record<string, unknown>;

/** The attempts page's filters, each optional; `cursor` is the last attempt id of the previous page. */
export interface AttemptFilter {
  eventId?: string;
  orderNo?: string;
  succeeded?: boolean;
  from?: Date;
  to?: Date;
  cursor?: string;
}

/**
 * webhook_attempt as operators read it and an endpoint's removal deletes it, in the caller's
 * transaction. The dispatcher writes the attempts as it records them (WebhookDeliveries.recordAttempt).
 */
@Injectable()
export class WebhookAttemptRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** The endpoint's attempts matching `filter`, newest first, at most `limit`, with their delivery's order, type and status. */
  ofEndpoint(endpointId: string, filter: AttemptFilter, limit: number): Promise<Row[]> {
    const where = ['a.endpoint_id = ?'];
    const params: unknown[] = [endpointId];
    const add = (condition: string, value: unknown) => {
      where.push(condition);
      params.push(value);
    };
    if (filter.eventId) add('a.event_id = ?', filter.eventId);
    if (filter.orderNo) add('d.order_no = ?', filter.orderNo);
    if (filter.succeeded !== undefined) add('a.succeeded = ?', filter.succeeded);
    if (filter.from) add('a.started_at >= ?', filter.from);
    if (filter.to) add('a.started_at < ?', filter.to);
    if (filter.cursor) add('a.id < ?', filter.cursor);
    return this.txHost.tx.query(
      `SELECT a.*, d.order_no, d.event_type, d.status AS delivery_status
       FROM webhook_attempt a JOIN webhook_delivery d ON d.id = a.delivery_id
       WHERE ${where.join(' AND ')} ORDER BY a.id DESC LIMIT ?`,
      [...params, limit],
    );
  }

  /** Every attempt made for the endpoint. */
  async deleteOfEndpoint(endpointId: string): Promise<void> {
    await this.txHost.tx.query('DELETE FROM webhook_attempt WHERE endpoint_id = ?', [endpointId]);
  }
}
