import { crc32 } from 'node:zlib';
import { Channel, VerifiedNotification } from '../../domain/notification';
import { REGISTERED_CHANNELS } from '../../channels/registered-channels';

/**
 * A record on disk: MAGIC, payload length (uint32 BE), CRC32 of the payload (uint32 BE), payload.
 * 0xFF never occurs in UTF-8, and payloads are JSON text, so the marker can only be found at the
 * start of a record: after a corrupt stretch, the next record is found by looking for it.
 */
export const MAGIC = Buffer.from([0xff, 0xfe, 0x53, 0x50]);
export const HEADER_BYTES = 12;
/** Far above any real record (a notification body is at most 64 KiB); a larger length is corruption. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

export function frame(payload: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32BE(payload.length, 4);
  header.writeUInt32BE(crc32(payload), 8);
  return Buffer.concat([header, payload]);
}

/** What the header at some position says, before the payload is read. */
export type HeaderCheck = { ok: true; payloadBytes: number } | { ok: false; reason: string };

export function checkHeader(header: Buffer): HeaderCheck {
  if (!header.subarray(0, MAGIC.length).equals(MAGIC)) return { ok: false, reason: 'no record marker' };
  const payloadBytes = header.readUInt32BE(4);
  if (payloadBytes === 0 || payloadBytes > MAX_PAYLOAD_BYTES) {
    return { ok: false, reason: `implausible length ${payloadBytes}` };
  }
  return { ok: true, payloadBytes };
}

export function checksumMatches(header: Buffer, payload: Buffer): boolean {
  return header.readUInt32BE(8) === crc32(payload);
}

/** A verified notification the database could not take, as it was received. */
export interface SpooledDelivery {
  notification: VerifiedNotification;
  receivedAt: Date;
  /** Replays that did not apply it (an order not registered yet); 0 until then. */
  attempts: number;
  /** Not to be replayed before this, when it is parked. */
  retryAt?: Date;
}

const FORMAT_VERSION = 1;

/**
 * JSON, the raw body in base64: the notification exactly as the guard verified it. It is never
 * verified again at replay (a channel's timestamp window would refuse it by then): the spool is this
 * instance's own disk, and the checksum guards against its corruption.
 */
export function encodeDelivery(delivery: SpooledDelivery): Buffer {
  const { notification: n } = delivery;
  return Buffer.from(
    JSON.stringify({
      v: FORMAT_VERSION,
      receivedAt: delivery.receivedAt.toISOString(),
      attempts: delivery.attempts,
      retryAt: delivery.retryAt?.toISOString(),
      notification: { ...n, rawBody: n.rawBody.toString('base64'), paidAt: n.paidAt?.toISOString() },
    }),
    'utf8',
  );
}

/** Throws on anything that is not a record this version wrote: the caller quarantines it. */
export function decodeDelivery(payload: Buffer): SpooledDelivery {
  const json = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
  if (json.v !== FORMAT_VERSION) throw new Error(`unknown record version ${String(json.v)}`);
  const n = json.notification as Record<string, unknown> | undefined;
  if (
    typeof n !== 'object' ||
    n === null ||
    !REGISTERED_CHANNELS.includes(n.channel as Channel) ||
    typeof n.merchantId !== 'string' ||
    typeof n.eventType !== 'string' ||
    typeof n.paid !== 'boolean' ||
    typeof n.rawBody !== 'string' ||
    typeof n.headers !== 'object' ||
    (n.amount !== undefined && !Number.isSafeInteger(n.amount)) ||
    (n.subMerchantId !== undefined && typeof n.subMerchantId !== 'string') ||
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- an unchecked field of a spooled record: anything but 64 hex digits is refused
    (n.replayKey !== undefined && !/^[0-9a-f]{64}$/.test(String(n.replayKey)))
  ) {
    throw new Error('not a notification');
  }
  const notification = {
    ...n,
    rawBody: Buffer.from(n.rawBody, 'base64'),
    paidAt: typeof n.paidAt === 'string' ? validDate(n.paidAt) : undefined,
  } as VerifiedNotification;
  if (notification.paidAt === undefined) delete notification.paidAt;
  return {
    notification,
    receivedAt: validDate(json.receivedAt),
    attempts: Number.isSafeInteger(json.attempts) ? (json.attempts as number) : 0,
    retryAt: typeof json.retryAt === 'string' ? validDate(json.retryAt) : undefined,
  };
}

function validDate(value: unknown): Date {
  const date = new Date(typeof value === 'string' ? value : NaN);
  if (Number.isNaN(date.getTime())) throw new Error(`not a timestamp: ${String(value)}`);
  return date;
}
