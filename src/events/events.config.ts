import { registerAs } from '@nestjs/config';
import { IsOptional, Matches } from 'class-validator';
import { IntegerBetween, validateEnv } from '../platform/config/env-validation';

class EventsEnv {
  @IsOptional()
  @Matches(/^amqps?:\/\/\S+$/, { message: 'RABBITMQ_URL must look like amqp://user:password@host:5672' })
  RABBITMQ_URL?: string;

  @IsOptional()
  @Matches(/^[a-z][a-z0-9_.\-]{0,100}$/, { message: 'RABBITMQ_EXCHANGE must be lowercase letters, digits, _ . -' })
  RABBITMQ_EXCHANGE?: string;

  @IsOptional()
  @IntegerBetween(1, 1000)
  OUTBOX_BATCH_SIZE?: number;

  @IsOptional()
  @IntegerBetween(10, 60000)
  OUTBOX_POLL_INTERVAL_MS?: number;

  @IsOptional()
  @IntegerBetween(1, 1000)
  OUTBOX_MAX_ATTEMPTS?: number;

  @IsOptional()
  @IntegerBetween(1, 1000)
  HANDLER_MAX_ATTEMPTS?: number;

  @IsOptional()
  @IntegerBetween(1, 3600000)
  RETRY_BASE_DELAY_MS?: number;

  @IsOptional()
  @IntegerBetween(1, 86400000)
  RETRY_MAX_DELAY_MS?: number;

  @IsOptional()
  @IntegerBetween(100, 60000)
  RABBITMQ_PUBLISH_TIMEOUT_MS?: number;
}

export interface EventsConfig {
  /** Undefined: events go to the in-process handlers only (the embedded default). */
  rabbitmqUrl?: string;
  /** The topic exchange (default `payments`); handler queues are named `<exchange>.<consumer>`. */
  exchange: string;
  batchSize: number;
  pollIntervalMs: number;
  /** Publish attempts of an outbox event before it is dead-lettered (broker outages do not count). */
  outboxMaxAttempts: number;
  /** Runs of a failing handler before its event is dead-lettered for that handler. */
  handlerMaxAttempts: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  /** A publish the broker has not confirmed by then failed for now; a stall is not counted as an attempt. */
  publishTimeoutMs: number;
}

export function loadEventsConfig(env: NodeJS.ProcessEnv = process.env): EventsConfig {
  const vars = validateEnv(EventsEnv, env);
  return {
    rabbitmqUrl: vars.RABBITMQ_URL,
    exchange: vars.RABBITMQ_EXCHANGE ?? 'payments',
    batchSize: vars.OUTBOX_BATCH_SIZE ?? 100,
    pollIntervalMs: vars.OUTBOX_POLL_INTERVAL_MS ?? 200,
    outboxMaxAttempts: vars.OUTBOX_MAX_ATTEMPTS ?? 10,
    handlerMaxAttempts: vars.HANDLER_MAX_ATTEMPTS ?? 5,
    retryBaseDelayMs: vars.RETRY_BASE_DELAY_MS ?? 1000,
    retryMaxDelayMs: vars.RETRY_MAX_DELAY_MS ?? 300000,
    publishTimeoutMs: vars.RABBITMQ_PUBLISH_TIMEOUT_MS ?? 5000,
  };
}

export const eventsConfig = registerAs('events', () => loadEventsConfig());

/** Exponential backoff with "equal jitter": half the delay fixed, half random, so retries spread out. */
export function retryDelayMs(
  config: Pick<EventsConfig, 'retryBaseDelayMs' | 'retryMaxDelayMs'>,
  attempts: number,
  random = Math.random,
): number {
  const ceiling = Math.min(config.retryMaxDelayMs, config.retryBaseDelayMs * 2 ** Math.min(attempts - 1, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
