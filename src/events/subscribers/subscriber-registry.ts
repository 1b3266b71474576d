import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { PaymentEventHandler, SubscribesTo, Subscription } from './subscribes-to.decorator';

export interface Subscriber extends Subscription {
  handler: PaymentEventHandler;
}

const CONSUMER_NAME = /^[a-z0-9][a-z0-9\-]{0,62}$/;

@Injectable()
export class SubscriberRegistry implements OnModuleInit {
  private subscribers: Subscriber[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    this.subscribers = this.discovery.getProviders({ metadataKey: SubscribesTo.KEY }).map((wrapper) => ({
      ...this.discovery.getMetadataByDecorator(SubscribesTo, wrapper)!,
      handler: wrapper.instance as PaymentEventHandler,
    }));
    const names = this.subscribers.map((s) => s.consumer);
    for (const name of names) {
      if (!CONSUMER_NAME.test(name)) throw new Error(`consumer name "${name}" must match ${CONSUMER_NAME}`);
      if (names.indexOf(name) !== names.lastIndexOf(name))
        throw new Error(`two handlers share the consumer name "${name}"`);
    }
  }

  all(): Subscriber[] {
    return this.subscribers;
  }

  byConsumer(consumer: string): Subscriber | undefined {
    return this.subscribers.find((s) => s.consumer === consumer);
  }
}
