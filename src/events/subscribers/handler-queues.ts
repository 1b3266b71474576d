import { Channel } from 'amqplib';
import { Subscription } from './subscribes-to.decorator';

/** Each handler's durable queue: `<exchange>.<consumer>`. */
export function handlerQueue(exchange: string, consumer: string): string {
  return `${exchange}.${consumer}`;
}

/**
 * The exchange and the handlers' queues with their bindings. Both the publisher and the consumers
 * declare them (idempotently): an event published before a consumer's own set-up has run must
 * still find its queue, because the broker drops a message that no queue is bound for.
 */
export async function declareHandlerQueues(
  channel: Channel,
  exchange: string,
  subscriptions: Subscription[],
): Promise<void> {
  await channel.assertExchange(exchange, 'topic', { durable: true });
  for (const { consumer, events } of subscriptions) {
    const queue = handlerQueue(exchange, consumer);
    await channel.assertQueue(queue, { durable: true });
    for (const type of events) await channel.bindQueue(queue, exchange, type);
  }
}
