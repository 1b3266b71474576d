import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { PaymentEvent } from './payment-events';

/** Appends an event to the outbox in the caller's transaction; the relay publishes it after commit. */
@Injectable()
export class OutboxWriter {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async append(event: PaymentEvent): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO outbox_event (event_id, type, order_no, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
      columnValues(event),
    );
  }
}

function columnValues(event: PaymentEvent): unknown[] {
  return [event.eventId, event.type, event.orderNo, JSON.stringify(event), new Date()];
}
