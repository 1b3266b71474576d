import { KeyObject } from 'node:crypto';
import {
  alipayDelivery,
  alipayTradeParams,
  wechatpayDelivery,
  WechatpaySigner,
  wechatpayTransaction,
  yuan,
} from '../tools/simulator/platform-signers';

/** How often one payment is delivered: 1 to 8 times, 3.2 on average (the seeds' measured spread). */
export const DELIVERIES_PER_PAYMENT: Array<[count: number, share: number]> = [
  [1, 0.25],
  [2, 0.22],
  [3, 0.16],
  [4, 0.12],
  [5, 0.09],
  [6, 0.07],
  [7, 0.05],
  [8, 0.04],
];

export interface Payment {
  orderNo: string;
  transactionId: string;
  channel: 'WECHATPAY' | 'ALIPAY';
  amount: number;
  deliveries: number;
}

export interface Delivery {
  payment: Payment;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface Platforms {
  wechatpay: { mchid: string; appid: string; signer: WechatpaySigner };
  alipay: { appId: string; sellerId: string; privateKey: KeyObject };
}

/** A small seeded generator, so that two runs with the same arguments send the same mix. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Half WeChat Pay, half Alipay; delivery counts assigned by share, so the mean is exact. */
export function planPayments(orders: number, runId: string): Payment[] {
  const counts: number[] = [];
  for (const [count, share] of DELIVERIES_PER_PAYMENT) counts.push(...Array<number>(Math.round(orders * share)).fill(count));
  while (counts.length < orders) counts.push(1);
  return Array.from({ length: orders }, (_, i) => ({
    orderNo: `BENCH_${runId}_${i}`,
    transactionId: `${i % 2 === 0 ? '4200' : '2026'}${runId}${String(i).padStart(10, '0')}`,
    channel: i % 2 === 0 ? 'WECHATPAY' : 'ALIPAY',
    amount: 100 + (i % 9900),
    deliveries: counts[i],
  }));
}

/** A payment's deliveries as signed notifications, ready to send (the first one, then its retries). */
export type SignedDeliveries = Map<Payment, Array<Omit<Delivery, 'payment'>>>;

/**
 * `copies` real signed deliveries of a payment (RSA-2048 + AES-256-GCM for WeChat Pay, RSA2 for
 * Alipay). WeChat Pay signs every sending afresh (new envelope id, timestamp and nonce): resending
 * the same bytes would be a replay, which the service counts instead of storing. Alipay's retries
 * carry the same notification, so its copies are the same bytes.
 */
export function signDeliveries(
  payment: Payment,
  platforms: Platforms,
  copies: number,
): Array<Omit<Delivery, 'payment'>> {
  if (payment.channel === 'WECHATPAY') return Array.from({ length: copies }, () => signPayment(payment, platforms));
  return Array<Omit<Delivery, 'payment'>>(copies).fill(signPayment(payment, platforms));
}

function signPayment(payment: Payment, platforms: Platforms): Omit<Delivery, 'payment'> {
  if (payment.channel === 'WECHATPAY') {
    const { mchid, appid, signer } = platforms.wechatpay;
    const delivery = wechatpayDelivery(signer, {
      resource: wechatpayTransaction({
        mchid,
        appid,
        outTradeNo: payment.orderNo,
        transactionId: payment.transactionId,
        total: payment.amount,
      }),
    });
    return { path: '/notify/wechatpay', ...delivery };
  }
  const { appId, sellerId, privateKey } = platforms.alipay;
  const body = alipayDelivery(
    privateKey,
    alipayTradeParams({
      appId,
      sellerId,
      outTradeNo: payment.orderNo,
      tradeNo: payment.transactionId,
      totalAmount: yuan(payment.amount),
    }),
  );
  return {
    path: '/notify/alipay',
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
  };
}

/**
 * The arrival order: payments in random order; half of the retries right behind the first
 * delivery (so they are in flight together), the other half anywhere later in the run.
 */
export function arrivalOrder(payments: Payment[], signed: SignedDeliveries, random: () => number): Delivery[] {
  const keyed: Array<{ key: number; delivery: Delivery }> = [];
  const order = payments
    .map((p) => ({ p, r: random() }))
    .sort((a, b) => a.r - b.r)
    .map((x) => x.p);
  order.forEach((payment, position) => {
    const copies = signed.get(payment)!;
    keyed.push({ key: position, delivery: { payment, ...copies[0] } });
    for (let retry = 1; retry < payment.deliveries; retry++) {
      const soon = random() < 0.5;
      keyed.push({
        key: soon ? position + random() * 0.5 : position + 1 + random() * (order.length - position),
        delivery: { payment, ...copies[retry] },
      });
    }
  });
  return keyed.sort((a, b) => a.key - b.key).map((k) => k.delivery);
}
