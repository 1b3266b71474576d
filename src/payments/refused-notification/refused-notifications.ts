import { createHash } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { PaymentChannels } from '../../channels/payment-channels';
import { DomainError, UnknownOrderError } from '../../domain/domain-error';
import { refusedNotificationsConfig } from './refused-notifications.config';
import { REFUSAL_REASONS, RefusalReason } from './refused-notification.entity';
import { KeepResult, RefusedNotificationRepository } from './refused-notification.repository';

export const REFUSED_NOTIFICATIONS_TOTAL = 'refused_notifications_total';

/** The longest a refusal's answer waits for its row; past it the answer goes, and the write finishes on its own. */
export const KEEP_WAIT_MS = 1000;
/** Writes at once per replica: a flood of refusals never takes more of the pool than this. */
const MAX_WRITES = 4;
/** Refusals waiting for a write slot per replica; past it they are not kept (BUSY). */
const MAX_WAITING = 256;
/** Headers kept with the bytes: the channel's signature headers fit; anything larger is cut. */
const MAX_HEADERS = 32;
const MAX_HEADER_VALUE = 1024;
/**
 * What the kept headers take at most, as the JSON stored (UTF-8 bytes): a header that would take
 * more is left out. With the body's 64 KiB it bounds a row (docs/operations.md#refused-notifications).
 */
export const MAX_KEPT_HEADER_BYTES = 8 * 1024;
/** Never kept: credentials and what the transport or a proxy adds. */
const UNKEPT_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'accept-encoding',
  'keep-alive',
]);

/** A delivery at the notify route as it arrived (the shape of the intake's IncomingDelivery). */
export interface ArrivedDelivery {
  notifyPath: string;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  requestId: string;
}

/** BUSY: too many at once on this replica; FAILED: the database refused the write. */
type KeepOutcome = KeepResult | 'BUSY' | 'FAILED';

interface Reverification {
  /** The re-verification's own delivery: nothing else that runs in its async context is taken for it. */
  requestId: string;
  failure?: unknown;
}

/**
 * Keeps the notifications refused for a reason an operator can act on (the signature, the key, the
 * merchant, the decryption, an unknown order): the bytes, the headers their signature needs, the
 * reason; deduplicated, capped per channel, hour and kind (CapKind) across replicas, and counted
 * (refused_notifications_total) whatever happened. Keeping one never changes its answer: it waits
 * at most KEEP_WAIT_MS, never throws, and logs no bytes or headers.
 */
@Injectable()
export class RefusedNotifications {
  private readonly logger = new Logger(RefusedNotifications.name);
  private readonly reverifying = new AsyncLocalStorage<Reverification>();
  private writing = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly repository: RefusedNotificationRepository,
    private readonly channels: PaymentChannels,
    @Inject(refusedNotificationsConfig.KEY) private readonly config: ConfigType<typeof refusedNotificationsConfig>,
    @InjectMetric(REFUSED_NOTIFICATIONS_TOTAL) private readonly kept: Counter<string>,
  ) {}

  /** The notify use case's hook on every failure; keeps only the refusals above. Never rejects. */
  async keepIfRefused(failure: unknown, delivery: ArrivedDelivery): Promise<void> {
    const reverification = this.reverifying.getStore();
    if (reverification?.requestId === delivery.requestId) {
      // A re-verification reports its refusal to the admin; it is not a new delivery to keep.
      reverification.failure = failure;
      return;
    }
    try {
      await this.keep(failure, delivery);
    } catch (error) {
      // Keeping a refusal must never change its answer.
      this.logger.error({
        msg: `a refused notification was not kept: ${(error as Error).name}`,
        req: { id: delivery.requestId },
      });
    }
  }

  private async keep(failure: unknown, delivery: ArrivedDelivery): Promise<void> {
    const reason = keptReason(failure);
    const channel = reason && this.channels.byNotifyPath(delivery.notifyPath);
    if (!reason || !channel || !Buffer.isBuffer(delivery.body) || delivery.body.length === 0) return;
    const refusal = {
      channel: channel.channel,
      notifyPath: delivery.notifyPath,
      reason,
      body: delivery.body,
      bodySha256: createHash('sha256').update(delivery.body).digest(),
      headers: keptHeaders(delivery.headers),
      receivedAt: new Date(),
      // Verified and decrypted, for an unknown order: which order to register, and its transaction.
      orderNo: failure instanceof UnknownOrderError ? failure.orderNo.slice(0, 64) : null,
      transactionId: failure instanceof UnknownOrderError ? failure.transactionId.slice(0, 64) : null,
    };
    const deadline = Date.now() + KEEP_WAIT_MS;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, KEEP_WAIT_MS)));
    // Never rejects, also when it finishes after the answer went: keepBefore turns a failure into FAILED.
    const keeping = this.keepBefore(deadline, delivery.requestId, () =>
      this.repository.keep(refusal, this.config.perHour),
    )
      .then((outcome) => this.kept.inc({ channel: refusal.channel, reason, result: outcome }))
      .catch((error: unknown) =>
        this.logger.error({ msg: `a refused notification was not counted: ${(error as Error).name}` }),
      );
    await Promise.race([keeping, waited]);
    clearTimeout(timer);
  }

  /**
   * Runs a re-verification of a kept notification, delivered as `requestId`: its refusal, if it
   * is refused again, is reported here instead of kept again.
   */
  async reverify<T>(requestId: string, work: () => Promise<T>): Promise<{ result: T; failure?: unknown }> {
    const scope: Reverification = { requestId };
    const result = await this.reverifying.run(scope, work);
    return { result, failure: scope.failure };
  }

  private async keepBefore(
    deadline: number,
    requestId: string,
    write: () => Promise<KeepResult>,
  ): Promise<KeepOutcome> {
    if (!(await this.slot(deadline))) return 'BUSY';
    try {
      return await write();
    } catch (error) {
      // The driver's error code only: a server message may quote the values written.
      const code = (error as { driverError?: { code?: string } }).driverError?.code ?? (error as Error).name;
      this.logger.error({ msg: `a refused notification could not be kept: ${code}`, req: { id: requestId } });
      return 'FAILED';
    } finally {
      // The slot goes to the next in line as it is, or back.
      const next = this.waiting.shift();
      if (next) next();
      else this.writing--;
    }
  }

  /** A write slot before the deadline (taken, or handed over by the write that held it), or false. */
  private async slot(deadline: number): Promise<boolean> {
    if (this.writing < MAX_WRITES) {
      this.writing++;
      return true;
    }
    if (this.waiting.length >= MAX_WAITING) return false;
    const granted = await new Promise<boolean>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(
        () => {
          this.waiting.splice(this.waiting.indexOf(wake), 1);
          resolve(false);
        },
        Math.max(0, deadline - Date.now()),
      );
      this.waiting.push(wake);
    });
    return granted;
  }
}

/** The reason kept for, or undefined for a failure that is not kept (malformed, stale, transient). */
function keptReason(failure: unknown): RefusalReason | undefined {
  if (!(failure instanceof DomainError)) return undefined;
  return REFUSAL_REASONS.includes(failure.code) ? (failure.code as RefusalReason) : undefined;
}

/** The headers kept with refused bytes: at most MAX_HEADERS, each value cut, MAX_KEPT_HEADER_BYTES as JSON in all. */
export function keptHeaders(headers: ArrivedDelivery['headers']): Record<string, string> {
  const kept: Record<string, string> = {};
  // '{}', then each entry "name":"value" and the comma before all but the first.
  let bytes = 2;
  for (const [name, value] of Object.entries(headers)) {
    if (Object.keys(kept).length >= MAX_HEADERS) break;
    const lower = name.toLowerCase();
    if (value === undefined || UNKEPT_HEADERS.has(lower) || lower.startsWith('x-forwarded-')) continue;
    const text = (Array.isArray(value) ? value.join(', ') : value).slice(0, MAX_HEADER_VALUE);
    const entry = Buffer.byteLength(`${JSON.stringify(lower)}:${JSON.stringify(text)}`) + (bytes > 2 ? 1 : 0);
    // A large header (an outsider's, say) is left out; the signature's small ones after it still fit.
    if (bytes + entry > MAX_KEPT_HEADER_BYTES) continue;
    kept[lower] = text;
    bytes += entry;
  }
  return kept;
}
