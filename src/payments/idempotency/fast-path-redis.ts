import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Redis, Result } from 'ioredis';
import { Counter } from 'prom-client';
import { redisConfig } from './redis.config';
import { REDIS_ERRORS } from './fast-path-metrics';

const CONNECT_TIMEOUT_MS = 2000;
const MAX_RECONNECT_DELAY_MS = 2000;
/** After a failure, calls are skipped this long: a stalled Redis costs a request one timeout, not one per call. */
const PAUSE_AFTER_FAILURE_MS = 1000;
const LOG_INTERVAL_MS = 30_000;

/** Deletes KEYS[1] only while it still holds ARGV[1]: an owner never removes a marker that expired and was taken anew. */
const RELEASE_IF_HELD = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    releaseIfHeld(key: string, token: string): Result<number, Context>;
  }
}

export type FastPathOperation = 'lookup' | 'mark' | 'claim' | 'wait' | 'release';

/**
 * The fast path's optional Redis connection (REDIS_URL). Bounded everywhere: a command fails after
 * REDIS_COMMAND_TIMEOUT_MS, nothing is queued while disconnected, and reconnection goes on in the
 * background. `attempt` never throws: a failure, a timeout or no connection at all answers
 * `undefined`, so that the caller goes on to the database. Failures are counted, logged at most
 * every LOG_INTERVAL_MS, and never affect readiness.
 */
@Injectable()
export class FastPathRedis implements OnApplicationShutdown {
  private readonly logger = new Logger('RedisFastPath');
  private readonly client?: Redis;
  private pausedUntil = 0;
  private lastLoggedAt = 0;
  private unlogged = 0;
  private failing = false;

  constructor(
    @Inject(redisConfig.KEY) readonly config: ConfigType<typeof redisConfig>,
    @InjectMetric(REDIS_ERRORS) private readonly errors: Counter<string>,
  ) {
    if (config.url) this.client = this.connect(config.url);
  }

  get enabled(): boolean {
    return this.client !== undefined;
  }

  /** Connected and ready for commands (reconnection goes on in the background otherwise). */
  get connected(): boolean {
    return this.client?.status === 'ready';
  }

  async attempt<T>(operation: FastPathOperation, command: (redis: Redis) => Promise<T>): Promise<T | undefined> {
    const client = this.client;
    if (client?.status !== 'ready' || Date.now() < this.pausedUntil) return undefined;
    try {
      const answer = await command(client);
      this.recovered();
      return answer;
    } catch (error) {
      this.failed(operation, error as Error);
      return undefined;
    }
  }

  onApplicationShutdown(): void {
    this.client?.disconnect();
  }

  private connect(url: string): Redis {
    const client = new Redis(url, {
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: this.config.commandTimeoutMs,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      // A command cut off by a lost connection has already failed over to the database: never send it again later.
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempts) => Math.min(attempts * 100, MAX_RECONNECT_DELAY_MS),
      connectionName: 'payment-callback-service',
    });
    client.defineCommand('releaseIfHeld', { numberOfKeys: 1, lua: RELEASE_IF_HELD });
    client.on('error', (error: Error) => this.failed('connection', error));
    client.on('ready', () => this.recovered());
    const { host, port } = client.options;
    this.logger.log(`fast path on Redis at ${host}:${port}; it only ever saves work, the database decides`);
    return client;
  }

  private failed(operation: FastPathOperation | 'connection', error: Error): void {
    this.errors.inc({ operation });
    this.pausedUntil = Date.now() + PAUSE_AFTER_FAILURE_MS;
    this.failing = true;
    if (Date.now() - this.lastLoggedAt < LOG_INTERVAL_MS) {
      this.unlogged++;
      return;
    }
    const since = this.unlogged > 0 ? ` (${this.unlogged} more failures since the last message)` : '';
    this.logger.warn(`Redis ${operation} failed: ${error.message}; requests go to the database${since}`);
    this.lastLoggedAt = Date.now();
    this.unlogged = 0;
  }

  private recovered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.pausedUntil = 0;
    this.logger.log('Redis answers again; the fast path is back');
  }
}
