import { Injectable, Module } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { Pool } from 'mysql2/promise';
import { EventType, PaymentEvent } from '../../src/events/payment-events';
import { PaymentEventHandler, SubscribesTo } from '../../src/events/subscribers/subscribes-to.decorator';

/** Where the test handlers write their effect; tests count its rows, one per (consumer, order) when all is well. */
export const TEST_HANDLER_EFFECT_TABLE = 'test_handler_effect';

/** The test handlers' table is not part of the app's schema: a suite creates it before starting an app. */
export async function createTestHandlerEffectTable(pool: Pool): Promise<void> {
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${TEST_HANDLER_EFFECT_TABLE} (
       id BIGINT AUTO_INCREMENT PRIMARY KEY,
       consumer VARCHAR(64) NOT NULL,
       order_no VARCHAR(64) NOT NULL,
       event_id CHAR(36) NOT NULL,
       KEY ix_test_handler_effect_order_no (order_no)
     )`,
  );
}

/** Deliberately no unique key: a second effect of one event must show up as a second row. */
async function writeEffect(
  txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  consumer: string,
  event: PaymentEvent,
): Promise<void> {
  await txHost.tx.query(`INSERT INTO ${TEST_HANDLER_EFFECT_TABLE} (consumer, order_no, event_id) VALUES (?, ?, ?)`, [
    consumer,
    event.orderNo,
    event.eventId,
  ]);
}

function countAttempt(attempts: Map<string, number>, event: PaymentEvent): number {
  const attempt = (attempts.get(event.eventId) ?? 0) + 1;
  attempts.set(event.eventId, attempt);
  return attempt;
}

/** Fails the first two times it sees an event and succeeds on the third, as a handler with a transient fault does. */
@Injectable()
@SubscribesTo({ consumer: 'test-flaky', events: [EventType.PaymentSucceeded] })
export class FlakyHandler implements PaymentEventHandler {
  static readonly CONSUMER = 'test-flaky';
  static readonly FAILURES_BEFORE_SUCCESS = 2;
  /** Runs of `handle` per eventId, successful or not (in this process). */
  static readonly attempts = new Map<string, number>();

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async handle(event: PaymentEvent): Promise<void> {
    const attempt = countAttempt(FlakyHandler.attempts, event);
    await writeEffect(this.txHost, FlakyHandler.CONSUMER, event);
    // Thrown after the write, so that the effect must be rolled back with the processed-event row.
    if (attempt <= FlakyHandler.FAILURES_BEFORE_SUCCESS)
      throw new Error(`flaky failure ${attempt} on ${event.eventId}`);
  }
}

/** Fails every time while `broken` is set: a handler with a bug, until the fix is deployed. */
@Injectable()
@SubscribesTo({ consumer: 'test-broken', events: [EventType.PaymentSucceeded] })
export class BrokenHandler implements PaymentEventHandler {
  static readonly CONSUMER = 'test-broken';
  static broken = true;
  /** Runs of `handle` per eventId, successful or not (in this process). */
  static readonly attempts = new Map<string, number>();

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async handle(event: PaymentEvent): Promise<void> {
    countAttempt(BrokenHandler.attempts, event);
    await writeEffect(this.txHost, BrokenHandler.CONSUMER, event);
    if (BrokenHandler.broken) throw new Error(`broken handler refuses ${event.eventId}`);
  }
}

/** Succeeds every time: its effect shows that the app's handlers were handed an event. */
@Injectable()
@SubscribesTo({ consumer: 'test-witness', events: [EventType.PaymentSucceeded] })
export class WitnessHandler implements PaymentEventHandler {
  static readonly CONSUMER = 'test-witness';

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async handle(event: PaymentEvent): Promise<void> {
    await writeEffect(this.txHost, WitnessHandler.CONSUMER, event);
  }
}

@Module({ providers: [FlakyHandler] })
export class FlakyHandlerModule {}

@Module({ providers: [BrokenHandler] })
export class BrokenHandlerModule {}

@Module({ providers: [WitnessHandler] })
export class WitnessHandlerModule {}
