import { ChannelWrapper } from 'amqp-connection-manager';
import { ConfirmChannel } from 'amqplib';
import { RabbitmqConnection } from './rabbitmq/rabbitmq.connection';
import { declareHandlerQueues } from './subscribers/handler-queues';
import { SubscriberRegistry } from './subscribers/subscriber-registry';
import { DestinationUnavailable, EventPublisher } from './event-publisher';
import { PaymentEvent } from './payment-events';

/** amqplib's reason when the broker refused a message: the only failure that is the event's own. */
const NACKED = 'message nacked';

/** Persistent messages on a confirm channel: publish() resolves only when the broker has the message. */
export class RabbitmqPublisher implements EventPublisher {
  private channel?: ChannelWrapper;

  constructor(
    private readonly connection: RabbitmqConnection,
    private readonly subscribers: SubscriberRegistry,
    private readonly confirmTimeoutMs: number,
  ) {}

  isAvailable(): boolean {
    return this.connection.isConnected();
  }

  publishAll(events: PaymentEvent[]): Promise<PromiseSettledResult<void>[]> {
    return Promise.allSettled(events.map((event) => this.publish(event)));
  }

  private async publish(event: PaymentEvent): Promise<void> {
    try {
      await this.confirmChannel().publish(this.connection.exchange, event.type, Buffer.from(JSON.stringify(event)), {
        persistent: true,
        messageId: event.eventId,
        type: event.type,
        contentType: 'application/json',
        timestamp: Math.floor(Date.now() / 1000),
        timeout: this.confirmTimeoutMs,
      });
    } catch (error) {
      // A stalled or lost broker times the publish out, however "connected" the socket still looks.
      if ((error as Error)?.message === NACKED) throw error;
      throw new DestinationUnavailable(`RabbitMQ did not confirm: ${(error as Error)?.message}`);
    }
  }

  /** Opened at the first publish, when every handler is registered; publishes wait for its set-up. */
  private confirmChannel(): ChannelWrapper {
    this.channel ??= this.connection.createChannel({
      name: 'outbox-publisher',
      confirm: true,
      setup: (channel: ConfirmChannel) =>
        declareHandlerQueues(channel, this.connection.exchange, this.subscribers.all()),
    });
    return this.channel;
  }
}
