import { ChannelWrapper } from 'amqp-connection-manager';
import { ConfirmChannel } from 'amqplib';
import { RabbitmqConnection } from '../rabbitmq/rabbitmq.connection';
import { EventPublisher } from './event-publisher';
import { PaymentEvent } from './payment-events';

const CONFIRM_TIMEOUT_MS = 5000;

/** Persistent messages on a confirm channel: publish() resolves only when the broker has the message. */
export class RabbitmqPublisher implements EventPublisher {
  private readonly channel: ChannelWrapper;

  constructor(private readonly connection: RabbitmqConnection) {
    this.channel = connection.createChannel({
      name: 'outbox-publisher',
      confirm: true,
      setup: (channel: ConfirmChannel) => channel.assertExchange(connection.exchange, 'topic', { durable: true }),
    });
  }

  isAvailable(): boolean {
    return this.connection.isConnected();
  }

  async publish(event: PaymentEvent): Promise<void> {
    await this.channel.publish(this.connection.exchange, event.type, Buffer.from(JSON.stringify(event)), {
      persistent: true,
      messageId: event.eventId,
      type: event.type,
      contentType: 'application/json',
      timestamp: Math.floor(Date.now() / 1000),
      timeout: CONFIRM_TIMEOUT_MS,
    });
  }
}
