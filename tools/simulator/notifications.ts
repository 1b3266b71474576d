/**
 * Signed notifications as the platforms send them, for a key set, and how the service's answer reads to a person.
 * Each channel signs its own and reads its own acks (its ChannelSimulator); this file delivers and prints them.
 */
import { http, print } from './cli';
import { channelSimulator } from './channels';
import type { DevKeys } from './dev-keys';
import type { Notification, PaymentParams, SimulatedChannel } from './channel-simulator';

export type { Notification, PaymentParams, RefundNoticeParams, SimulatedChannel } from './channel-simulator';
export { CHANNELS } from './channels';

export function paymentNotification(keys: DevKeys, channel: SimulatedChannel, p: PaymentParams): Notification {
  return channelSimulator(channel).paymentNotification(keys, p);
}

/** A transaction id shaped like the channel's. */
export function newTransactionId(channel: SimulatedChannel): string {
  return channelSimulator(channel).newTransactionId();
}

export interface Ack {
  acked: boolean;
  status: number;
  /** What the service said, in words. */
  said: string;
  ms: number;
}

export async function deliver(target: string, notification: Notification): Promise<Ack> {
  const answer = await http(`${target}/notify/${notification.notifyPath ?? notification.channel}`, {
    method: 'POST',
    headers: notification.headers,
    body: notification.body,
  });
  return { status: answer.status, ms: answer.ms, ...channelSimulator(notification.channel).readAck(answer) };
}

export function printAck(n: number, ack: Ack): void {
  const verdict = ack.acked ? 'acked' : 'REFUSED';
  print(`  #${n}  ${ack.status}  ${verdict}${ack.said ? `: ${ack.said}` : ''}  (${Math.round(ack.ms)} ms)`);
}
