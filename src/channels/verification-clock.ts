import { AsyncLocalStorage } from 'node:async_hooks';
import { Clock } from '../domain/notification';

const receivedAt = new AsyncLocalStorage<number>();

/**
 * The channels' clock: now, except while a kept notification is verified again (`asReceivedAt`),
 * when the time windows (WeChat Pay's Wechatpay-Timestamp, Alipay's notify_time, UnionPay's txnTime,
 * the certificates' validity) are judged at the moment the notification was received, as they were
 * when it was refused. The signature itself is checked in full either way.
 */
export const verificationClock: Clock = () => receivedAt.getStore() ?? Date.now();

/** Runs `work` with the channels' clock at `at`, for a notification received at that moment. */
export function asReceivedAt<T>(at: Date, work: () => T): T {
  return receivedAt.run(at.getTime(), work);
}
