import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { PaymentNotification } from '../../domain/notification';
import { CommittedPaymentsCache } from './committed-payments.cache';
import { FAST_PATH_HITS } from './fast-path-metrics';
import { FastPathRedis } from './fast-path-redis';

const WAIT_POLL_MS = 10;

/** A first delivery's in-flight marker, or the news that another replica holds it. */
export interface FirstDeliveryClaim {
  /** Another replica's delivery of this payment is in flight: waitForFirst may spare this one the database. */
  readonly heldElsewhere: boolean;
  /** Deletes the marker if this delivery still holds it. */
  release(): Promise<void>;
}

const NOTHING_HELD: FirstDeliveryClaim = { heldElsewhere: false, release: () => Promise.resolve() };

/**
 * What is known of payments whose dedup record has committed, so that a repeated delivery can be
 * answered without a transaction: first this replica's memory, then (with REDIS_URL) what every
 * replica has put into Redis. Only ever an accelerator: a key is written after its commit, and a
 * miss, a timeout, a lost key or a Redis that is down all mean "ask the database", whose unique
 * claim and conditional update decide. Nothing here can cause a double effect or lose a payment.
 */
@Injectable()
export class CommittedPayments {
  constructor(
    private readonly memory: CommittedPaymentsCache,
    private readonly redis: FastPathRedis,
    @InjectMetric(FAST_PATH_HITS) private readonly hits: Counter<string>,
  ) {}

  static keyOf(payment: PaymentNotification): string {
    return CommittedPaymentsCache.keyOf(payment);
  }

  /** This replica's memory only: no round trip. */
  isKnownHere(payment: PaymentNotification): boolean {
    return this.memory.has(payment) && this.hit('memory');
  }

  async isCommitted(payment: PaymentNotification): Promise<boolean> {
    if (this.isKnownHere(payment)) return true;
    const found = await this.redis.attempt('lookup', (r) => r.exists(this.paidKey(payment)));
    return found === 1 && this.learnedFromRedis(payment);
  }

  /** Call only once the payment's transaction has committed (any outcome: its dedup record is in). */
  async markCommitted(payment: PaymentNotification): Promise<void> {
    this.memory.remember(payment);
    const ttlSeconds = this.redis.config.paidTtlSeconds;
    await this.redis.attempt('mark', (r) => r.set(this.paidKey(payment), '1', 'EX', ttlSeconds));
  }

  /** Marks a first delivery in flight, so that repeats on other replicas wait for it rather than queue on its row lock. */
  async claimFirst(payment: PaymentNotification): Promise<FirstDeliveryClaim> {
    // Without Redis (REDIS_URL unset, or down) nothing can be marked: no token, no key, for every first delivery.
    if (!this.redis.connected) return NOTHING_HELD;
    const key = this.inFlightKey(payment);
    const token = randomUUID();
    const taken = await this.redis.attempt('claim', (r) => r.set(key, token, 'PX', this.redis.config.inFlightMs, 'NX'));
    if (taken === null) return { heldElsewhere: true, release: () => Promise.resolve() };
    if (taken === undefined) return NOTHING_HELD;
    return {
      heldElsewhere: false,
      release: async () => void (await this.redis.attempt('release', (r) => r.releaseIfHeld(key, token))),
    };
  }

  /**
   * Waits, at most the marker's life, for the delivery in flight elsewhere: true once it committed;
   * false when its marker went without a commit (it failed, expired or was flushed), or Redis failed.
   */
  async waitForFirst(payment: PaymentNotification): Promise<boolean> {
    const keys = [this.paidKey(payment), this.inFlightKey(payment)];
    const deadline = Date.now() + this.redis.config.inFlightMs;
    while (Date.now() < deadline) {
      await sleep(WAIT_POLL_MS);
      const [paid, inFlight] = (await this.redis.attempt('wait', (r) => r.mget(keys))) ?? [null, null];
      if (paid !== null) return this.learnedFromRedis(payment);
      if (inFlight === null) return false;
    }
    return false;
  }

  private learnedFromRedis(payment: PaymentNotification): boolean {
    this.memory.remember(payment);
    return this.hit('redis');
  }

  private hit(source: 'memory' | 'redis'): true {
    this.hits.inc({ source });
    return true;
  }

  private paidKey(payment: PaymentNotification): string {
    return `${this.redis.config.keyPrefix}paid:${CommittedPaymentsCache.keyOf(payment)}`;
  }

  private inFlightKey(payment: PaymentNotification): string {
    return `${this.redis.config.keyPrefix}inflight:${CommittedPaymentsCache.keyOf(payment)}`;
  }
}
