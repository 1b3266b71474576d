import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ChannelWrapper } from 'amqp-connection-manager';
import { Channel, ConsumeMessage } from 'amqplib';
import { PaymentEvent } from '../payment-events';
import { RabbitmqConnection } from '../rabbitmq/rabbitmq.connection';
import { EventDispatcher } from './event-dispatcher';
import { declareHandlerQueues, handlerQueue } from './handler-queues';
import { Subscriber, SubscriberRegistry } from './subscriber-registry';

const PREFETCH = 16;
const REQUEUE_DELAY_MS = 1000;

/**
 * With a broker, each handler consumes its own durable queue `<exchange>.<consumer>`, bound to its
 * event types: every instance competes for the same queue, so the work spreads over replicas.
 * A message is acked once the handler's effect committed or its failure was parked for retry.
 */
@Injectable()
export class RabbitmqConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RabbitmqConsumer.name);
  private readonly channels: ChannelWrapper[] = [];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly connection: RabbitmqConnection,
    private readonly registry: SubscriberRegistry,
    private readonly dispatcher: EventDispatcher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.connection.configured) return;
    for (const subscriber of this.registry.all()) await this.subscribe(subscriber);
  }

  private async subscribe(subscriber: Subscriber): Promise<void> {
    const queue = handlerQueue(this.connection.exchange, subscriber.consumer);
    const channel = this.connection.createChannel({
      name: `consumer-${subscriber.consumer}`,
      setup: (ch: Channel) => declareHandlerQueues(ch, this.connection.exchange, [subscriber]),
    });
    this.channels.push(channel);
    // ChannelWrapper.consume re-subscribes after every reconnect.
    await channel.consume(queue, (message) => this.track(this.onMessage(channel, subscriber, message)), {
      prefetch: PREFETCH,
    });
  }

  private async onMessage(channel: ChannelWrapper, subscriber: Subscriber, message: ConsumeMessage): Promise<void> {
    let event: PaymentEvent;
    try {
      event = JSON.parse(message.content.toString('utf8')) as PaymentEvent;
    } catch {
      this.logger.error(
        `dropping a message on ${handlerQueue(this.connection.exchange, subscriber.consumer)} that is not JSON (messageId ${message.properties.messageId})`,
      );
      channel.ack(message);
      return;
    }
    try {
      await this.dispatcher.deliver(subscriber, event);
      channel.ack(message);
    } catch (error) {
      // Neither the effect nor the failure could be written (database down): give it back, a bit later.
      this.logger.error(
        `cannot process or park ${event.eventId} for ${subscriber.consumer}: ${(error as Error).message}`,
      );
      setTimeout(() => channel.nack(message, false, true), REQUEUE_DELAY_MS);
    }
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.channels.map((c) => c.cancelAll().catch(() => undefined)));
    await Promise.all(this.inFlight);
    await Promise.all(this.channels.map((c) => c.close().catch(() => undefined)));
  }
}
