import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { AmqpConnectionManager, ChannelWrapper, connect, CreateChannelOpts } from 'amqp-connection-manager';
import { Channel } from 'amqplib';
import { Gauge } from 'prom-client';
import { eventsConfig } from '../events.config';
import { BROKER_CONNECTED } from '../../platform/metrics/metrics.module';

const CLOSE_TIMEOUT_MS = 2000;

/**
 * One broker connection per instance, re-established automatically by amqp-connection-manager
 * (channels and consumers are set up again on every reconnect). Absent without RABBITMQ_URL.
 */
@Injectable()
export class RabbitmqConnection implements OnApplicationShutdown {
  private readonly logger = new Logger(RabbitmqConnection.name);
  private readonly manager?: AmqpConnectionManager;
  /** The topic exchange every event is published to, with the event type as routing key. */
  readonly exchange: string;

  /** Where events go, for the start line: the broker's address (never its credentials), or undefined. */
  readonly destination?: string;

  constructor(
    @Inject(eventsConfig.KEY) config: ConfigType<typeof eventsConfig>,
    @InjectMetric(BROKER_CONNECTED) connected: Gauge,
  ) {
    this.exchange = config.exchange;
    if (!config.rabbitmqUrl) {
      this.logger.log('RABBITMQ_URL is not set: events go to the in-process handlers only (embedded mode)');
      return;
    }
    const url = new URL(config.rabbitmqUrl);
    this.destination = `RabbitMQ ${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}, exchange ${this.exchange}`;
    connected.set(0);
    this.manager = connect([config.rabbitmqUrl], { heartbeatIntervalInSeconds: 5, reconnectTimeInSeconds: 1 });
    // The URL carries the password: log the broker's words, never the URL.
    this.manager.on('connect', () => {
      connected.set(1);
      this.logger.log('connected to RabbitMQ');
    });
    this.manager.on('disconnect', ({ err }) => {
      connected.set(0);
      this.logger.warn(`RabbitMQ connection lost: ${err?.message ?? 'closed'}`);
    });
    this.manager.on('connectFailed', ({ err }) => this.logger.warn(`cannot reach RabbitMQ: ${err?.message}`));
    this.declareExchangeOnConnect();
  }

  /**
   * Declared on every (re)connect, not at the first publish: a consumer of another service that
   * starts before the first payment must find the exchange to bind its queue to.
   */
  private declareExchangeOnConnect(): void {
    this.createChannel({
      name: 'exchange-declaration',
      setup: (channel: Channel) => channel.assertExchange(this.exchange, 'topic', { durable: true }),
    });
  }

  get configured(): boolean {
    return this.manager !== undefined;
  }

  isConnected(): boolean {
    return this.manager?.isConnected() ?? false;
  }

  createChannel(options: CreateChannelOpts): ChannelWrapper {
    if (!this.manager) throw new Error('RabbitMQ is not configured');
    const channel = this.manager.createChannel(options);
    // A setup step cut short by a lost connection is emitted as 'error'; unheard, it would end the
    // process. The manager reconnects and runs the setup again, so logging it is all there is to do.
    channel.on('error', (error: Error) =>
      this.logger.warn(`channel ${options.name ?? ''} setup failed: ${error.message}; retrying`),
    );
    return channel;
  }

  /** Bounded: a stalled broker never answers the close handshake, and shutdown does not wait for it. */
  async onApplicationShutdown(): Promise<void> {
    if (!this.manager) return;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)));
    await Promise.race([this.manager.close(), gaveUp]);
    clearTimeout(timer);
  }
}
