import { AsyncLocalStorage } from 'node:async_hooks';
import { Clock } from '../domain/notification';

interface ReceivedAt {
  at: number;
  /** Only while the work's synchronous part runs: the verification, which is synchronous and comes first. */
  open: boolean;
}

const receivedAt = new AsyncLocalStorage<ReceivedAt>();

/**
 * The channels' clock: now, except while a kept notification is verified again (`asReceivedAt`),
 * when the time windows (WeChat Pay's Wechatpay-Timestamp, Alipay's notify_time, UnionPay's txnTime,
 * the certificates' validity) are judged at the moment the notification was received, as they were
 * when it was refused. The signature itself is checked in full either way.
 */
export const verificationClock: Clock = () => {
  const scope = receivedAt.getStore();
  return scope?.open ? scope.at : Date.now();
};

/**
 * Runs `work` with the channels' clock at `at` during its synchronous part only: a notification's
 * verification (synchronous, the first step of the notify use case) sees `at`; whatever runs after
 * its first await (the settlement, a channel call, a timer or connection it set up) sees now.
 */
export function asReceivedAt<T>(at: Date, work: () => T): T {
  const scope: ReceivedAt = { at: at.getTime(), open: true };
  try {
    return receivedAt.run(scope, work);
  } finally {
    scope.open = false;
  }
}
