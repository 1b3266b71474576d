import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { EventDispatcher } from './event-dispatcher';
import { HandlerRetryRepository } from './handler-retry.repository';
import { HandlerRetryWorker } from './handler-retry.worker';
import { HandlerRunner } from './handler-runner';
import { RabbitmqConsumer } from './rabbitmq.consumer';
import { SubscriberRegistry } from './subscriber-registry';

/** The subscriber API: handlers marked @SubscribesTo, run exactly once in effect, retried, dead-lettered. */
@Module({
  imports: [DiscoveryModule],
  providers: [
    SubscriberRegistry,
    HandlerRunner,
    HandlerRetryRepository,
    EventDispatcher,
    HandlerRetryWorker,
    RabbitmqConsumer,
  ],
  exports: [EventDispatcher, SubscriberRegistry],
})
export class SubscribersModule {}
