import { json, onePositional, parseCommand, print, UsageError } from './cli';
import { DevKeys, loadDevKeys } from './dev-keys';
import { Ack, deliver, printAck, refundNotification, SimulatedChannel } from './notifications';
import { Dialect, dialectOption, v2RefundDelivery } from './wechatpay/v2/v2-simulation';

export const REFUND_NOTICE_USAGE =
  'refund-notice <refundNo> [--status SUCCESS|CLOSED|ABNORMAL] [--order ORDER_NO] [--dialect v3|v2]';

const WECHATPAY_REFUND_STATUSES = ['SUCCESS', 'CLOSED', 'ABNORMAL'];

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
    dialect: { type: 'string' },
  });
  const refundNo = onePositional(positionals, 'refund number');
  if (!WECHATPAY_REFUND_STATUSES.includes(values.status)) {
    throw new UsageError(`--status must be one of ${WECHATPAY_REFUND_STATUSES.join(', ')}, got "${values.status}"`);
  }
  const dialect = dialectOption(values.dialect, 'wechatpay');
  const keys = loadDevKeys(values.keys);
  const ack = await sendRefundNotice(keys, values.target, refundNo, values.status, values.order, dialect);
  return ack?.acked ? 0 : 1;
}

/** Settles the refund at the platform server and delivers its notification; undefined when the platform does not know it. */
export async function sendRefundNotice(
  keys: DevKeys,
  target: string,
  refundNo: string,
  status: string,
  orderOption?: string,
  dialect: Dialect = 'v3',
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
  if (refund.channel === 'alipay' && status !== 'SUCCESS') {
    throw new UsageError('Alipay notifies only refunds that succeeded: --status SUCCESS');
  }
  const orderNo = orderOption ?? refund.orderNo;
  if (!orderNo) throw new UsageError(`the platform does not know the order of refund ${refundNo}: pass --order`);
  await json(`${platformUrl}/settle`, 'POST', undefined, { status });
  if (dialect === 'v2' && refund.channel !== 'wechatpay') throw new UsageError('--dialect v2 is WeChat Pay only');
  const notify = dialect === 'v2' ? v2RefundDelivery : refundNotification;
  const notification = notify(keys, refund.channel, {
    orderNo,
    transactionId: refund.transactionId,
    refundNo,
    channelRefundId: refund.channelRefundId ?? `5000${Date.now()}`,
    amount: refund.amount,
    total: refund.total ?? refund.amount,
    status,
    subMchid: refund.subMchid,
  });
  print(`${notification.summary}  → ${target}`);
  const ack = await deliver(target, notification);
  printAck(1, ack);
  return ack;
}
