import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** Why a notification was refused and kept: the refusals an operator can act on. */
export const RefusalReason = {
  /** The signature does not verify with the configured key (a rotated or wrong key, or a forgery). */
  InvalidSignature: 'InvalidSignature',
  /** Signed with a key or certificate this service does not have (a new platform key). */
  UnknownSigningKey: 'UnknownSigningKey',
  /** For a merchant or application that is not (yet) configured here. */
  MerchantMismatch: 'MerchantMismatch',
  /** Does not decrypt with the merchant's key (a wrong or rotated APIv3 key). */
  Undecryptable: 'Undecryptable',
  /** Verified, but for an order this service does not know (not registered, or not yet). */
  OrderNotFound: 'OrderNotFound',
} as const;
export type RefusalReason = (typeof RefusalReason)[keyof typeof RefusalReason];
export const REFUSAL_REASONS: readonly string[] = Object.values(RefusalReason);

/**
 * Which cap a refusal counts against. SIGNED: its signature held (an unknown order), so only the
 * platform can send it; UNSIGNED: anyone can (a bad signature, an unknown key, a foreign merchant,
 * undecryptable). A flood of forgeries then never crowds out the payments for unknown orders.
 */
export const CapKind = { Signed: 'SIGNED', Unsigned: 'UNSIGNED' } as const;
export type CapKind = (typeof CapKind)[keyof typeof CapKind];

export function capKindOf(reason: RefusalReason): CapKind {
  return reason === RefusalReason.OrderNotFound ? CapKind.Signed : CapKind.Unsigned;
}

/**
 * REFUSED until an admin re-verifies it: ACCEPTED once it verified and settled through the notify
 * use case (paid, a repeat, an anomaly: the order and the delivery log say which); it stays
 * REFUSED, with the re-verification's reason, when it is refused again.
 */
export const RefusedStatus = { Refused: 'REFUSED', Accepted: 'ACCEPTED' } as const;
export type RefusedStatus = (typeof RefusedStatus)[keyof typeof RefusedStatus];

/** A refused notification as received: its exact bytes, the headers its signature needs, and why. One row per (channel, bytes). */
@Entity('refused_notification')
@Index('uq_refused_notification_body', ['channel', 'bodySha256'], { unique: true })
@Index('ix_refused_notification_first_seen', ['firstSeenAt'])
@Index('ix_refused_notification_reason', ['reason', 'firstSeenAt'])
@Index('ix_refused_notification_order_no', ['orderNo'])
@Index('ix_refused_notification_transaction_id', ['transactionId'])
export class RefusedNotification {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 16 })
  channel: string;

  /** The path segment it arrived at (POST /notify/<notifyPath>): which dialect re-verifies it. */
  @Column({ name: 'notify_path', type: 'varchar', length: 32 })
  notifyPath: string;

  @Column({ name: 'body_sha256', type: 'binary', length: 32 })
  bodySha256: Buffer;

  @Column({ type: 'varchar', length: 32 })
  reason: RefusalReason;

  @Column({ name: 'raw_body', type: 'mediumblob' })
  rawBody: Buffer;

  @Column({ type: 'json' })
  headers: Record<string, string>;

  /** The order a verified, decrypted notification named when the order was unknown (OrderNotFound); null for any other refusal. */
  @Column({ name: 'order_no', type: 'varchar', length: 64, nullable: true })
  orderNo: string | null;

  /** The channel's transaction id of that notification; null for any other refusal. */
  @Column({ name: 'transaction_id', type: 'varchar', length: 64, nullable: true })
  transactionId: string | null;

  @Column({ name: 'first_seen_at', type: 'datetime', precision: 3 })
  firstSeenAt: Date;

  @Column({ name: 'last_seen_at', type: 'datetime', precision: 3 })
  lastSeenAt: Date;

  /** Deliveries of these bytes refused (the first included). */
  @Column({ name: 'times_seen', type: 'int', unsigned: true, default: 1 })
  timesSeen: number;

  @Column({ type: 'varchar', length: 16, default: RefusedStatus.Refused })
  status: RefusedStatus;

  @Column({ name: 'reverify_count', type: 'int', unsigned: true, default: 0 })
  reverifyCount: number;

  @Column({ name: 'reverified_at', type: 'datetime', precision: 3, nullable: true })
  reverifiedAt: Date | null;

  @Column({ name: 'reverified_by', type: 'varchar', length: 64, nullable: true })
  reverifiedBy: string | null;

  /** The last re-verification's refusal (an error code), null when it was accepted or never ran. */
  @Column({ name: 'reverify_reason', type: 'varchar', length: 32, nullable: true })
  reverifyReason: string | null;
}

/**
 * The hourly claim on the cap: `kept` new notifications of a channel and kind stored in that UTC
 * hour, at most the cap whichever replica stores them; `dropped` the new ones refused storage past it.
 */
@Entity('refused_notification_hour')
export class RefusedNotificationHour {
  @PrimaryColumn({ type: 'varchar', length: 16 })
  channel: string;

  @PrimaryColumn({ type: 'datetime' })
  hour: Date;

  @PrimaryColumn({ type: 'varchar', length: 8 })
  kind: CapKind;

  @Column({ type: 'int', unsigned: true, default: 0 })
  kept: number;

  @Column({ type: 'int', unsigned: true, default: 0 })
  dropped: number;
}
