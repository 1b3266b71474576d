import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { PREVIOUS_CHANGED_ONE_ROW, Statement } from '../platform/database/statement-batch';
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

  /**
   * The append as a statement for a batch, written only if the statement before it changed one row
   * and `transactionAlive` (an SQL condition) holds.
   */
  appendIfPreviousChangedOneRow(event: PaymentEvent, transactionAlive: string): Statement {
    return {
      sql: `INSERT INTO outbox_event (event_id, type, order_no, payload, created_at)
            SELECT ?, ?, ?, ?, ? FROM DUAL WHERE ${PREVIOUS_CHANGED_ONE_ROW} AND ${transactionAlive}`,
      params: columnValues(event),
    };
  }
}

function columnValues(event: PaymentEvent): unknown[] {
  return [event.eventId, event.type, event.orderNo, JSON.stringify(event), new Date()];
}
