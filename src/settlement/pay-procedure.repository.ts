import { Injectable } from '@nestjs/common';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { PaymentNotification } from '../domain/notification';
import { paymentSucceeded } from '../events/payment-events';

/**
 * The version of the payment procedure this build calls. A new version is a new procedure (pay_v2)
 * created by a migration beside this one; the old one is dropped a release later, once no replica
 * of the build before calls it (docs/architecture.md, "The payment procedure").
 */
export const PAY_PROCEDURE = 'pay_v1';

/** What the procedure answers, by name: its outcome column. */
export const PayOutcome = {
  /** The order moved to PAID, and the claim, history, outbox row and paying record are committed. */
  Paid: 'PAID',
  /** Claimed, but the order did not move: nothing is committed, the transaction is still open with the claim in it. */
  NotMoved: 'NOT_MOVED',
} as const;
export type PayOutcome = (typeof PayOutcome)[keyof typeof PayOutcome];

/** The delivery that pays, recorded with the payment (a trade query's answer is no delivery). */
export interface PayingDelivery {
  receivedAt: Date;
}

/**
 * Calls the payment procedure as the first statement of the caller's transaction, which
 * TransactionRunner sends with its START TRANSACTION: a payment that pays is ONE round trip, and the
 * runner sends no COMMIT for a transaction the server has ended (beginWithFirstStatement).
 */
@Injectable()
export class PayProcedure {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  @Transactional(Propagation.Mandatory)
  async call(payment: PaymentNotification, delivery: PayingDelivery | undefined): Promise<PayOutcome> {
    return payOutcomeOf(await this.txHost.tx.query(...payCall(payment, delivery)));
  }
}

/**
 * The CALL of the payment procedure, every value through a `?` placeholder, by name and in the
 * procedure's order (the migration that created the version declares the same list). A duplicate
 * claim fails it with the claim's duplicate-key error; any other failure comes back as the error
 * it is, the transaction rolled back.
 */
export function payCall(payment: PaymentNotification, delivery: PayingDelivery | undefined): [string, unknown[]] {
  const event = paymentSucceeded(payment);
  const parameters: Record<string, unknown> = {
    channel: payment.channel,
    merchantId: payment.merchantId,
    subMerchantId: payment.subMerchantId ?? null,
    orderNo: payment.outTradeNo,
    transactionId: payment.transactionId,
    amount: payment.amount,
    currency: payment.currency,
    paidAt: payment.paidAt,
    at: new Date(),
    eventId: event.eventId,
    eventType: event.type,
    eventPayload: JSON.stringify(event),
    recordDelivery: delivery !== undefined,
    deliveryEventType: payment.eventType,
    pays: payment.paid,
    rawBody: delivery ? payment.rawBody : null,
    headers: delivery ? JSON.stringify(payment.headers) : null,
    receivedAt: delivery?.receivedAt ?? null,
    processingMs: delivery ? Date.now() - delivery.receivedAt.getTime() : null,
    replayKey: delivery && payment.replayKey !== undefined ? Buffer.from(payment.replayKey, 'hex') : null,
  };
  const values = Object.values(parameters);
  return [`CALL ${PAY_PROCEDURE}(${values.map(() => '?').join(', ')})`, values];
}

/**
 * The procedure's outcome from mysql2's answer to the CALL: its one result set (one row, `outcome`),
 * then the CALL's own status.
 */
export function payOutcomeOf(answer: unknown): PayOutcome {
  const [rows] = answer as [Array<{ outcome?: unknown }>, unknown];
  const outcome = rows?.[0]?.outcome;
  if (outcome !== PayOutcome.Paid && outcome !== PayOutcome.NotMoved) {
    throw new Error(`${PAY_PROCEDURE} answered no outcome: ${JSON.stringify(rows)}`);
  }
  return outcome;
}
