import { json, onePositional, parseCommand, print, UsageError } from './cli';
import { DevKeys, loadDevKeys } from './dev-keys';
import { Ack, deliver, printAck } from './notifications';
import { OptionValues, SimulatedChannel } from './channel-simulator';
import { channelOptions, channelSimulator, channelUsage, checkChannelOptions, commandParts } from './channels';

/** Each channel's options of `refund-notice` (WeChat Pay's --dialect …). */
const CHANNEL_PARTS = commandParts((channel) => channel.refundNotice);

export const REFUND_NOTICE_USAGE = `refund-notice <refundNo> [--status SUCCESS|CLOSED|ABNORMAL] [--order ORDER_NO]${channelUsage(CHANNEL_PARTS)}`;

/** The refund's outcome, which each channel says in its own words. */
const REFUND_STATUSES = ['SUCCESS', 'CLOSED', 'ABNORMAL'];

interface PlatformRefund {
  channel: SimulatedChannel;
  transactionId: string;
  amount: number;
  orderNo?: string;
  total?: number;
  channelRefundId?: string;
  /** WeChat partner key set: the sub-merchant the service refunded for. */
  subMchid?: string;
}

/**
 * The platform's final word on a refund the service asked the platform server for: the refund is settled there
 * (its queries agree) and its signed notification is delivered to the service.
 */
export async function refundNotice(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    status: { type: 'string', default: 'SUCCESS' },
    order: { type: 'string' },
    ...channelOptions(CHANNEL_PARTS),
  });
  const refundNo = onePositional(positionals, 'refund number');
  const status = values.status;
  if (!REFUND_STATUSES.includes(status)) {
    throw new UsageError(`--status must be one of ${REFUND_STATUSES.join(', ')}, got "${status}"`);
  }
  checkChannelOptions(CHANNEL_PARTS, values);
  const keys = loadDevKeys(values.keys);
  const ack = await sendRefundNotice(keys, values.target, refundNo, status, values.order, values);
  return ack?.acked ? 0 : 1;
}

/** Settles the refund at the platform server and delivers its notification; undefined when the platform does not know it. */
export async function sendRefundNotice(
  keys: DevKeys,
  target: string,
  refundNo: string,
  status: string,
  orderOption?: string,
  /** The command's options, the channels' among them (WeChat Pay's --dialect v2). */
  values: OptionValues = {},
): Promise<Ack | undefined> {
  const platformUrl = `http://127.0.0.1:${keys.platformPort}/simulator/refunds/${encodeURIComponent(refundNo)}`;
  const known = await json(platformUrl, 'GET', undefined);
  if (known.status !== 200) {
    print(
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the platform server's answer, printed as it came
      `refund ${refundNo}: the platform server answered ${known.status}: ${String(known.json.message ?? known.body)}`,
    );
    return undefined;
  }
  const refund = known.json as unknown as PlatformRefund;
  const channel = channelSimulator(refund.channel);
  const refusal = channel.refundStatusRefusal?.(status);
  if (refusal) throw new UsageError(refusal);
  checkChannelOptions(CHANNEL_PARTS, values, channel.name);
  const orderNo = orderOption ?? refund.orderNo;
  if (!orderNo) throw new UsageError(`the platform does not know the order of refund ${refundNo}: pass --order`);
  await json(`${platformUrl}/settle`, 'POST', undefined, { status });
  const notification = channel.refundNotification(
    keys,
    {
      orderNo,
      transactionId: refund.transactionId,
      refundNo,
      channelRefundId: refund.channelRefundId ?? `5000${Date.now()}`,
      amount: refund.amount,
      total: refund.total ?? refund.amount,
      status,
      subMchid: refund.subMchid,
    },
    values,
  );
  print(`${notification.summary}  → ${target}`);
  const ack = await deliver(target, notification);
  printAck(1, ack);
  return ack;
}
