import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * What an operator did to the merchant directory. SUB_MERCHANT_ADDED and ENABLED apply at once;
 * DISABLE_PROPOSED and PLATFORM_KEY_PROPOSED apply only once another admin's APPROVED row decides
 * them (REJECTED: never). KEY_DRY_RUN changes nothing: it records that a candidate key was tried,
 * which a PLATFORM_KEY_PROPOSED of that candidate needs. ACCOUNT_ADDED (at once) and
 * ACCOUNT_CHANGE_PROPOSED (once approved) put an account's entry and key files in place: the
 * row keeps its public facts, its secrets are sealed in merchant_secret (secret_id).
 */
export const MerchantAction = {
  SubMerchantAdded: 'SUB_MERCHANT_ADDED',
  Enabled: 'ENABLED',
  DisableProposed: 'DISABLE_PROPOSED',
  KeyDryRun: 'KEY_DRY_RUN',
  PlatformKeyProposed: 'PLATFORM_KEY_PROPOSED',
  AccountAdded: 'ACCOUNT_ADDED',
  AccountChangeProposed: 'ACCOUNT_CHANGE_PROPOSED',
  Approved: 'APPROVED',
  Rejected: 'REJECTED',
} as const;
export type MerchantAction = (typeof MerchantAction)[keyof typeof MerchantAction];

/** The proposals a second admin decides. */
export const PROPOSALS: readonly MerchantAction[] = [
  MerchantAction.DisableProposed,
  MerchantAction.PlatformKeyProposed,
  MerchantAction.AccountChangeProposed,
];

/**
 * The merchant directory's history, append-only: a row is never updated or deleted, and the
 * directory is these rows replayed in id order (MerchantDirectory). Its largest id is the
 * directory's version, which every replica polls. A decision (APPROVED, REJECTED) names the
 * proposal it decides, at most once (the unique key): of two admins deciding at once, one wins.
 */
@Entity('merchant_change')
@Index('uq_merchant_change_decides', ['decidesChangeId'], { unique: true })
@Index('ix_merchant_change_fingerprint', ['candidateFingerprint', 'id'])
export class MerchantChange {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  /** The channel id, one of the registered channels. */
  @Column({ type: 'varchar', length: 16 })
  channel: string;

  /** The merchant or app id of the channel's account. */
  @Column({ name: 'account_id', type: 'varchar', length: 64 })
  accountId: string;

  /** A service provider's sub-merchant; '' for the account itself. */
  @Column({ name: 'sub_merchant_id', type: 'varchar', length: 64 })
  subMerchantId: string;

  @Column({ type: 'varchar', length: 24 })
  action: MerchantAction;

  /** SUB_MERCHANT_ADDED: the sub-merchant's own app (sub_appid), which its notifications must then name. */
  @Column({ name: 'sub_app_id', type: 'varchar', length: 64, nullable: true })
  subAppId: string | null;

  /** KEY_DRY_RUN, PLATFORM_KEY_PROPOSED: the key file option tried or replaced (publicKey, platformCert, publicCert). */
  @Column({ name: 'key_kind', type: 'varchar', length: 32, nullable: true })
  keyKind: string | null;

  /** PLATFORM_KEY_PROPOSED: the id the platform names the candidate key by (WeChat Pay's public key id), if it has one. */
  @Column({ name: 'key_id', type: 'varchar', length: 64, nullable: true })
  keyId: string | null;

  /**
   * PLATFORM_KEY_PROPOSED: the candidate platform public key or certificate, PEM. Public material:
   * the platform publishes it; no private key is ever stored.
   */
  @Column({ name: 'candidate_pem', type: 'text', nullable: true })
  candidatePem: string | null;

  /** KEY_DRY_RUN, PLATFORM_KEY_PROPOSED: SHA-256 of the candidate's SubjectPublicKeyInfo, hex. */
  @Column({ name: 'candidate_fingerprint', type: 'char', length: 64, nullable: true })
  candidateFingerprint: string | null;

  /** PLATFORM_KEY_PROPOSED: how long after the approval the current key verifies beside the candidate. */
  @Column({ name: 'overlap_seconds', type: 'int', nullable: true })
  overlapSeconds: number | null;

  /** ACCOUNT_ADDED, ACCOUNT_CHANGE_PROPOSED: the sealed entry and key files (merchant_secret). */
  @Column({ name: 'secret_id', type: 'bigint', nullable: true })
  secretId: string | null;

  /**
   * ACCOUNT_ADDED, ACCOUNT_CHANGE_PROPOSED: the account's public facts, JSON (AccountFacts: its app
   * ids, its files' fingerprints, its merchant serial number); never a secret.
   */
  @Column({ name: 'account_facts', type: 'text', nullable: true })
  accountFacts: string | null;

  /** APPROVED, REJECTED: the proposal (DISABLE_PROPOSED, PLATFORM_KEY_PROPOSED) decided. */
  @Column({ name: 'decides_change_id', type: 'bigint', nullable: true })
  decidesChangeId: string | null;

  @Column({ name: 'operator_id', type: 'varchar', length: 64 })
  operatorId: string;

  @Column({ type: 'varchar', length: 256, nullable: true })
  reason: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}

/** A second admin's decision on a proposed change. */
export type MerchantDecision = 'APPROVED' | 'REJECTED';
