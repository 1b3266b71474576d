/**
 * `npm run drill -- --target URL`: the duplicate-payment emergency procedure, run end to end against a running
 * service and the simulator's platform server (`npm run simulate -- platform`), then a checklist with timings.
 * Exit code 0 when every step passed, 1 when one failed (the rest are not run), 2 when called wrongly.
 */
import { randomInt } from 'node:crypto';
import { formatMinor, json, parseCommand, print, UnreachableError, UsageError } from './cli';
import { DevKeys, loadDevKeys } from './dev-keys';
import { message, registerOrder } from './order.command';
import { channelOption, CHANNELS } from './channels';
import { deliver, newTransactionId, paymentNotification, printAck, SimulatedChannel } from './notifications';
import { sendRefundNotice } from './refund-notice.command';
import { runCli } from './simulate';

export const DRILL_USAGE = `drill [--target URL] [--keys .simulator] [--channel ${CHANNELS.join('|')}] [--wait-seconds 30]`;

interface Step {
  title: string;
  /** Answers what was seen; throws DrillFailure when the step did not happen. */
  run: () => Promise<string>;
}

class DrillFailure extends Error {}

interface Drill {
  keys: DevKeys;
  target: string;
  channel: SimulatedChannel;
  waitMs: number;
  orderNo: string;
  amount: number;
  firstTransaction: string;
  secondTransaction: string;
  refundNo?: string;
}

export async function drill(args: string[]): Promise<number> {
  const { values } = parseCommand(args, {
    channel: { type: 'string', default: CHANNELS[0] },
    'wait-seconds': { type: 'string', default: '30' },
  });
  const waitSeconds = Number(values['wait-seconds']);
  if (!Number.isInteger(waitSeconds) || waitSeconds < 1 || waitSeconds > 600) {
    throw new UsageError('--wait-seconds must be 1 to 600');
  }
  const channel = channelOption(values.channel);
  const d: Drill = {
    keys: loadDevKeys(values.keys),
    target: values.target,
    channel,
    waitMs: waitSeconds * 1000,
    orderNo: `DRILL${Date.now().toString(36).toUpperCase()}${randomInt(1000)}`,
    amount: randomInt(100, 100_000),
    firstTransaction: newTransactionId(channel),
    secondTransaction: newTransactionId(channel),
  };
  print(`duplicate-payment drill against ${d.target}, platform 127.0.0.1:${d.keys.platformPort}, ${channel}`);
  return runSteps(steps(d));
}

function steps(d: Drill): Step[] {
  return [
    { title: 'create an order', run: () => createOrder(d) },
    { title: 'pay it', run: () => payOrder(d, d.firstTransaction) },
    { title: 'pay it again (another transaction)', run: () => payOrder(d, d.secondTransaction) },
    { title: 'see the DUPLICATE_PAYMENT anomaly', run: () => seeAnomaly(d) },
    { title: 'request the emergency refund', run: () => requestRefund(d) },
    { title: 'approve it (second admin)', run: () => approve(d) },
    { title: 'the refund reaches the platform', run: () => refundAtPlatform(d) },
    { title: 'receive the refund notification', run: () => refundNotification(d) },
    { title: 'see the anomaly RESOLVED', run: () => seeResolved(d) },
  ];
}

async function runSteps(all: Step[]): Promise<number> {
  const results: Array<{ ok: boolean; ms: number; seen: string }> = [];
  for (const [i, step] of all.entries()) {
    print(`\n${i + 1}. ${step.title}`);
    const started = performance.now();
    try {
      const seen = await step.run();
      results.push({ ok: true, ms: elapsedMs(started), seen });
    } catch (error) {
      if (!(error instanceof DrillFailure || error instanceof UnreachableError)) throw error;
      results.push({ ok: false, ms: elapsedMs(started), seen: error.message });
      break;
    }
  }
  print('\nchecklist');
  all.forEach((step, i) => {
    const result = results[i];
    const mark = !result ? '[ ]' : result.ok ? '[x]' : '[!]';
    const timing = result ? `${String(result.ms).padStart(6)} ms` : '        —';
    print(
      ` ${mark} ${String(i + 1).padStart(2)}. ${step.title.padEnd(38)} ${timing}  ${result?.seen ?? 'not reached'}`,
    );
  });
  const passed = results.length === all.length && results.every((r) => r.ok);
  const total = results.reduce((sum, r) => sum + r.ms, 0);
  print(`total ${total} ms: ${passed ? 'PASSED' : 'FAILED'}`);
  return passed ? 0 : 1;
}

async function createOrder(d: Drill): Promise<string> {
  if (!(await registerOrder(d.keys, d.target, { orderNo: d.orderNo, amount: d.amount, channel: d.channel }))) {
    throw new DrillFailure('the order API refused the order');
  }
  return `${d.orderNo}, ${formatMinor(d.amount)} CNY`;
}

async function payOrder(d: Drill, transactionId: string): Promise<string> {
  const notification = paymentNotification(d.keys, d.channel, { orderNo: d.orderNo, amount: d.amount, transactionId });
  print(notification.summary);
  const ack = await deliver(d.target, notification);
  printAck(1, ack);
  if (!ack.acked) throw new DrillFailure(`refused: ${ack.status} ${ack.said}`);
  return `transaction ${transactionId} acked`;
}

async function seeAnomaly(d: Drill): Promise<string> {
  const anomaly = await waitForAnomaly(d, (status) => status !== undefined);
  if (anomaly.type !== 'DUPLICATE_PAYMENT') throw new DrillFailure(`the anomaly is ${String(anomaly.type)}`);
  return `${String(anomaly.type)} ${String(anomaly.status)}, ${formatMinor(Number(anomaly.paidAmount))} CNY taken twice`;
}

async function requestRefund(d: Drill): Promise<string> {
  const answer = await admin(d, 0, 'POST', '/admin/refunds/emergency', {
    orderNo: d.orderNo,
    transactionId: d.secondTransaction,
    reason: 'drill: duplicate payment',
  });
  if (answer.status !== 202) throw new DrillFailure(`${answer.status}: ${message(answer)}`);
  d.refundNo = String(answer.json.refundNo);
  return `refund ${d.refundNo} by ${d.keys.admins[0].id}: ${String(answer.json.status)}`;
}

/** Four eyes when the amount is at or above REFUND_APPROVAL_THRESHOLD; otherwise nothing to do. */
async function approve(d: Drill): Promise<string> {
  const refund = await admin(d, 0, 'GET', `/admin/orders/${encodeURIComponent(d.orderNo)}`);
  const refunds = (refund.json.refunds ?? []) as Array<Record<string, unknown>>;
  const status = refunds.find((r) => r.refundNo === d.refundNo)?.status;
  if (status !== 'AWAITING_APPROVAL') return `no approval needed (${String(status)})`;
  const answer = await admin(d, 1, 'POST', `/admin/refunds/${encodeURIComponent(d.refundNo!)}/approve`);
  if (answer.status !== 200) throw new DrillFailure(`approval refused: ${answer.status} ${message(answer)}`);
  return `approved by ${d.keys.admins[1].id}: ${String(answer.json.status)}`;
}

async function refundAtPlatform(d: Drill): Promise<string> {
  const url = `http://127.0.0.1:${d.keys.platformPort}/simulator/refunds/${encodeURIComponent(d.refundNo!)}`;
  const known = await poll(d, async () => {
    const answer = await json(url, 'GET', undefined);
    return answer.status === 200 ? answer.json : undefined;
  });
  if (!known) throw new DrillFailure(`the service did not call the platform within ${d.waitMs / 1000} s`);
  return `${formatMinor(Number(known.amount))} CNY asked for on transaction ${String(known.transactionId)}`;
}

async function refundNotification(d: Drill): Promise<string> {
  const ack = await sendRefundNotice(d.keys, d.target, d.refundNo!, 'SUCCESS', d.orderNo);
  if (!ack?.acked) throw new DrillFailure(ack ? `refused: ${ack.status} ${ack.said}` : 'the platform lost the refund');
  return 'acked';
}

async function seeResolved(d: Drill): Promise<string> {
  const anomaly = await waitForAnomaly(d, (status) => status === 'RESOLVED');
  const view = await admin(d, 0, 'GET', `/admin/orders/${encodeURIComponent(d.orderNo)}`);
  const refunds = (view.json.refunds ?? []) as Array<Record<string, unknown>>;
  const refund = refunds.find((r) => r.refundNo === d.refundNo);
  return `${String(anomaly.type)} ${String(anomaly.status)}, refund ${String(refund?.status)}`;
}

/** The anomaly of the second transaction, once `wanted(status)`, as the admin order view shows it. */
async function waitForAnomaly(d: Drill, wanted: (status: unknown) => boolean): Promise<Record<string, unknown>> {
  let last: Record<string, unknown> | undefined;
  const found = await poll(d, async () => {
    const view = await admin(d, 0, 'GET', `/admin/orders/${encodeURIComponent(d.orderNo)}`);
    const anomalies = (view.json.anomalies ?? []) as Array<Record<string, unknown>>;
    last = anomalies.find((a) => a.transactionId === d.secondTransaction);
    return wanted(last?.status) ? last : undefined;
  });
  if (!found) throw new DrillFailure(`anomaly ${last ? String(last.status) : 'not seen'} after ${d.waitMs / 1000} s`);
  return found;
}

function admin(d: Drill, which: number, method: string, path: string, body?: unknown) {
  return json(`${d.target}${path}`, method, d.keys.admins[which].token, body);
}

/** Asks every 200 ms until an answer or the drill's wait has passed. */
async function poll<T>(d: Drill, ask: () => Promise<T | undefined>): Promise<T | undefined> {
  const deadline = Date.now() + d.waitMs;
  for (;;) {
    const answer = await ask();
    if (answer !== undefined || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

if (require.main === module) {
  runCli(
    ['drill', ...process.argv.slice(2)],
    { drill: [drill, DRILL_USAGE] },
    () => `usage: npm run ${DRILL_USAGE}`,
  ).then(
    (code) => (process.exitCode = code),
    (error: Error) => {
      process.stderr.write(`${error.stack}\n`);
      process.exitCode = 1;
    },
  );
}

/** Whole milliseconds since `started` (a performance.now() reading). */
function elapsedMs(started: number): number {
  return Math.round(performance.now() - started);
}
