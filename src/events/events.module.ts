import { Module } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { eventsConfig } from './events.config';
import { RabbitmqConnection } from './rabbitmq/rabbitmq.connection';
import { EventDispatcher } from './subscribers/event-dispatcher';
import { SubscriberRegistry } from './subscribers/subscriber-registry';
import { SubscribersModule } from './subscribers/subscribers.module';
import { EVENT_PUBLISHER } from './event-publisher';
import { InProcessPublisher } from './in-process.publisher';
import { OutboxRelay } from './outbox.relay';
import { OutboxRepository } from './outbox.repository';
import { RabbitmqPublisher } from './rabbitmq.publisher';

@Module({
  imports: [SubscribersModule],
  providers: [
    OutboxRepository,
    OutboxRelay,
    {
      provide: EVENT_PUBLISHER,
      inject: [RabbitmqConnection, EventDispatcher, SubscriberRegistry, eventsConfig.KEY],
      useFactory: (
        connection: RabbitmqConnection,
        dispatcher: EventDispatcher,
        subscribers: SubscriberRegistry,
        config: ConfigType<typeof eventsConfig>,
      ) =>
        connection.configured
          ? new RabbitmqPublisher(connection, subscribers, config.publishTimeoutMs)
          : new InProcessPublisher(dispatcher),
    },
  ],
  exports: [OutboxRepository],
})
export class EventsModule {}
