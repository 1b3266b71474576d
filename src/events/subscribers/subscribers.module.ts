import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { EventDispatcher } from './event-dispatcher';
import { HandlerRetryRepository } from './handler-retry.repository';
import { HandlerRetryWorker } from './handler-retry.worker';
import { HandlerRunner } from './handler-runner';
import { ProcessedEventRepository } from './processed-event.repository';
import { RabbitmqConsumer } from './rabbitmq.consumer';
import { SubscriberRegistry } from './subscriber-registry';

/** The subscriber API: handlers marked @SubscribesTo, run exactly once in effect, retried, dead-lettered. */
@Module({
  imports: [DiscoveryModule],
  providers: [
    SubscriberRegistry,
    ProcessedEventRepository,
    HandlerRunner,
    HandlerRetryRepository,
    EventDispatcher,
    HandlerRetryWorker,
    RabbitmqConsumer,
  ],
  exports: [EventDispatcher, SubscriberRegistry, ProcessedEventRepository],
})
export class SubscribersModule {}
