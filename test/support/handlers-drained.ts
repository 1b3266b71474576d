import { Pool } from 'mysql2/promise';
import { RabbitmqConsumer } from '../../src/events/subscribers/rabbitmq.consumer';
import { eventually } from './eventually';
import { MediumContext } from './medium';
import { count } from './test-app';

/** The messages an instance's handlers have been handed and not yet acked or given back (0 without a broker). */
function inHand(ctx: MediumContext): number {
  let consumer: RabbitmqConsumer;
  try {
    consumer = ctx.get(RabbitmqConsumer);
  } catch {
    return 0;
  }
  return (consumer as unknown as { inFlight: Set<unknown> }).inFlight.size;
}

/**
 * Waits until the handlers of `instances` have handled whatever reached them before a marker: one
 * more payment (`markerOrderNo`) the caller paid after the events under test. First its effect in
 * each of `tables`, then no message in any instance's hands. A relay publishes the marker's event
 * after every event committed before it, and each handler's queue hands its messages over in order:
 * a message queued ahead of the marker (a second copy, a redelivery) was in an instance's hands
 * before the marker's effect was written, and has been handled once nothing is left in hand.
 * Without a broker the relay hands events to the handlers in its rounds, in order: the marker's
 * effect comes after theirs.
 */
export async function handledEverythingBefore(
  instances: MediumContext[],
  pool: Pool,
  markerOrderNo: string,
  tables: string[],
  timeoutMs = 60_000,
): Promise<void> {
  await eventually(
    `the effects of the marker payment ${markerOrderNo}`,
    async () => {
      for (const table of tables) {
        if ((await count(pool, `SELECT COUNT(*) FROM ${table} WHERE order_no = ?`, [markerOrderNo])) === 0)
          return false;
      }
      return true;
    },
    timeoutMs,
  );
  await eventually(
    'no message left in the handlers hands',
    () => instances.every((ctx) => inHand(ctx) === 0),
    timeoutMs,
  );
}
