import { Injectable, Logger } from '@nestjs/common';
import { VerifiedNotification } from '../../domain/notification';
import { ANSWER_DEADLINE_PASSED } from '../../platform/database/bounded-pool';
import { CallbackRecordRepository, DeliveryRow } from './callback-record.repository';

const MAX_GROUP_ROWS = 128;
/**
 * Raw bodies per INSERT. They travel as hex, so an INSERT stays under about twice this, well below
 * MariaDB's default max_allowed_packet (16 MiB): 128 bodies at the route's 64 KiB limit would not.
 */
const MAX_GROUP_BODY_BYTES = 4 * 1024 * 1024;
const MAX_WAIT_MS = 2;

interface Pending extends DeliveryRow {
  /** Set once the caller has its answer: written, failed, or given up at its deadline. */
  settled: boolean;
  answerBy?: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The raw record of every accepted delivery (exact bytes, signature headers, what it did), written
 * in groups: one INSERT for up to MAX_GROUP_ROWS deliveries and MAX_GROUP_BODY_BYTES of bodies. A caller's promise settles only when its
 * group is written, so no delivery is acked before it is on record; a failed group fails all its
 * callers, and the platform retries them (as repeats, which are recorded then).
 *
 * One INSERT is in flight at a time, which keeps the rows in arrival order. The groups that formed
 * while it ran go together in the next one (within the same limits): under load the INSERTs grow
 * instead of queueing one behind the other, and a delivery waits for about one write, not for a
 * line of them.
 *
 * On a stalled database a group would wait out the query timeout of the INSERT before it. A caller
 * with a deadline (`answerBy`) is therefore given up at it with an error that counts as "database
 * unavailable" (the route spools the delivery or answers 503), and is left unwritten if its group
 * has not started yet.
 */
@Injectable()
export class DeliveryLog {
  private readonly logger = new Logger(DeliveryLog.name);
  private queue: Pending[] = [];
  private queuedBodyBytes = 0;
  private timer?: NodeJS.Timeout;
  /** Groups formed (their deadlines watched) and not yet written, oldest first. */
  private formed: FormedGroup[] = [];
  private writing = false;

  /** Never part of a request's transaction: it writes after that one has committed. */
  constructor(private readonly records: CallbackRecordRepository) {}

  record(
    notification: VerifiedNotification,
    outcome: string,
    receivedAt = new Date(),
    answerBy?: number,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const pending: Pending = {
        notification,
        outcome,
        receivedAt,
        processingMs: Date.now() - receivedAt.getTime(),
        settled: false,
        answerBy,
        resolve,
        reject,
      };
      this.queue.push(pending);
      this.queuedBodyBytes += bodyBytes(pending);
      if (this.queue.length >= MAX_GROUP_ROWS || this.queuedBodyBytes >= MAX_GROUP_BODY_BYTES) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), MAX_WAIT_MS);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const group = this.queue.splice(
      0,
      fittingOneInsert(this.queue, (p) => ({ rows: 1, bytes: bodyBytes(p) })),
    );
    if (group.length === 0) return;
    const bytes = group.reduce((sum, p) => sum + bodyBytes(p), 0);
    this.queuedBodyBytes -= bytes;
    this.formed.push({ group, bytes, watch: watchDeadlines(group) });
    if (!this.writing) void this.writeFormed();
    if (this.queue.length > 0) this.timer = setTimeout(() => this.flush(), 0);
  }

  /** The only writer: takes every group formed since its last INSERT, as many as fit one. */
  private async writeFormed(): Promise<void> {
    this.writing = true;
    try {
      while (this.formed.length > 0) {
        const taken = this.formed.splice(
          0,
          fittingOneInsert(this.formed, ({ group, bytes }) => ({ rows: group.length, bytes })),
        );
        await this.write(taken.flatMap(({ group }) => group).filter((p) => !p.settled));
        for (const { watch } of taken) watch.stop();
      }
    } finally {
      this.writing = false;
    }
  }

  private async write(group: Pending[]): Promise<void> {
    if (group.length === 0) return;
    try {
      await this.records.recordDeliveries(group);
      for (const p of group) settle(p, () => p.resolve());
    } catch (error) {
      this.logger.warn(`recording ${group.length} deliveries failed: ${(error as Error).message}`);
      for (const p of group) settle(p, () => p.reject(error));
    }
  }
}

interface FormedGroup {
  group: Pending[];
  /** Its raw bodies' bytes. */
  bytes: number;
  watch: { stop(): void };
}

function bodyBytes(pending: Pending): number {
  return pending.notification.rawBody.length;
}

/** How many of the first items fit ONE INSERT together (MAX_GROUP_ROWS, MAX_GROUP_BODY_BYTES); at least one. */
function fittingOneInsert<T>(items: T[], loadOf: (item: T) => { rows: number; bytes: number }): number {
  let rows = 0;
  let bytes = 0;
  let count = 0;
  for (const item of items) {
    const load = loadOf(item);
    rows += load.rows;
    bytes += load.bytes;
    if (count > 0 && (rows > MAX_GROUP_ROWS || bytes > MAX_GROUP_BODY_BYTES)) break;
    count++;
  }
  return count;
}

function settle(pending: Pending, answer: () => void): void {
  if (pending.settled) return;
  pending.settled = true;
  answer();
}

/**
 * One timer per group, not per delivery: it fires at the earliest deadline still open, gives up
 * every caller whose deadline has passed, and waits for the next.
 */
function watchDeadlines(group: Pending[]): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const open = group.filter((p) => !p.settled && p.answerBy !== undefined);
    if (open.length === 0) return;
    const earliest = Math.min(...open.map((p) => p.answerBy!));
    timer = setTimeout(() => {
      const now = Date.now();
      for (const p of open) if (p.answerBy! <= now) giveUp(p);
      arm();
    }, earliest - Date.now());
  };
  arm();
  return { stop: () => clearTimeout(timer) };
}

function giveUp(pending: Pending): void {
  const error = Object.assign(new Error('the delivery log was not written in time'), { code: ANSWER_DEADLINE_PASSED });
  settle(pending, () => pending.reject(error));
}
