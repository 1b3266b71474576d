import { randomBytes } from 'node:crypto';
import { Channel, ChannelModel, connect, ConsumeMessage } from 'amqplib';

/** The broker the tests use; `.ci/run` makes sure it answers. */
export const TEST_RABBITMQ_URL = process.env.TEST_RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A fresh exchange name per suite, so that runs sharing the broker never see each other's messages. */
export function testExchange(): string {
  return `pcs_test.${Date.now().toString(36)}.${randomBytes(3).toString('hex')}`;
}

export interface TappedMessage {
  messageId: string;
  routingKey: string;
  persistent: boolean;
  contentType?: string;
  body: Record<string, unknown>;
}

/**
 * A consumer of our own bound to the exchange, as another service would bind one: it sees every
 * message the broker routed, duplicates included. `close()` deletes the exchange and every queue
 * the app declared for it.
 */
export class ExchangeTap {
  readonly messages: TappedMessage[] = [];

  private constructor(
    private readonly connection: ChannelModel,
    private readonly channel: Channel,
    readonly exchange: string,
  ) {}

  static async bind(exchange: string, routingKey = '#'): Promise<ExchangeTap> {
    const connection = await connect(TEST_RABBITMQ_URL);
    const channel = await connection.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, exchange, routingKey);
    const tap = new ExchangeTap(connection, channel, exchange);
    await channel.consume(queue, (message) => message && tap.receive(message));
    return tap;
  }

  private receive(message: ConsumeMessage): void {
    this.messages.push({
      messageId: String(message.properties.messageId),
      routingKey: message.fields.routingKey,
      persistent: message.properties.deliveryMode === 2,
      contentType: message.properties.contentType as string | undefined,
      body: JSON.parse(message.content.toString('utf8')) as Record<string, unknown>,
    });
    this.channel.ack(message);
  }

  distinctMessageIds(): Set<string> {
    return new Set(this.messages.map((m) => m.messageId));
  }

  async waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 60000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Removes the exchange and the handler queues `<exchange>.<consumer>` the app declared. */
  async close(consumers: string[] = []): Promise<void> {
    for (const consumer of consumers) await this.channel.deleteQueue(`${this.exchange}.${consumer}`);
    await this.channel.deleteExchange(this.exchange);
    await this.connection.close();
  }
}

/** The example handlers' consumer names (src/events/after-payment). */
export const EXAMPLE_CONSUMERS = ['grant-points', 'issue-coupon', 'request-shipment'];

/** True once each of `consumers` has a consumer on its queue `<exchange>.<consumer>`: the app's channels are set up. */
export async function handlerQueuesConsumed(
  exchange: string,
  consumers: string[] = EXAMPLE_CONSUMERS,
): Promise<boolean> {
  const connection = await connect(TEST_RABBITMQ_URL);
  try {
    for (const consumer of consumers) {
      // A failed check closes its channel: a fresh one per check.
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      const consumed = await channel.checkQueue(`${exchange}.${consumer}`).then(
        (queue) => queue.consumerCount > 0,
        () => false,
      );
      await channel.close().catch(() => undefined);
      if (!consumed) return false;
    }
    return true;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** True when the broker has the exchange (checkExchange fails, and closes its channel, on one it does not). */
export async function exchangeExists(exchange: string): Promise<boolean> {
  const connection = await connect(TEST_RABBITMQ_URL);
  try {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    const found = await channel.checkExchange(exchange).then(
      () => true,
      () => false,
    );
    await channel.close().catch(() => undefined);
    return found;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Deletes an exchange the app declared without a tap bound to it. */
export async function deleteExchange(exchange: string): Promise<void> {
  const connection = await connect(TEST_RABBITMQ_URL);
  try {
    const channel = await connection.createChannel();
    await channel.deleteExchange(exchange);
  } finally {
    await connection.close().catch(() => undefined);
  }
}
