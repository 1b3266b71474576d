import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsISO8601, IsObject, IsString, Length, Matches, Max, Min } from 'class-validator';
import { OptionalField } from '../../platform/http/optional';
import { MerchantAction } from '../../payments/merchants/merchant-change.entity';
import { MAX_OVERLAP_SECONDS, PLATFORM_KEY_KINDS } from '../../payments/merchants/merchant-changes';

const ID = /^[A-Za-z0-9_\-]{1,64}$/;

/** A sub-merchant a service provider's account collects for, added at runtime. */
export class AddSubMerchantDto {
  @ApiProperty({ example: '1900000109', description: "The sub-merchant's id (WeChat Pay's sub_mchid)" })
  @IsString()
  @Matches(ID, { message: 'subMerchantId must be 1 to 64 letters, digits, _ or -' })
  subMerchantId: string;

  @ApiPropertyOptional({
    example: 'wx8888888888888888',
    description: 'Its own app (sub_appid): its notifications must then name it',
  })
  @OptionalField()
  @IsString()
  @Matches(ID, { message: 'subAppId must be 1 to 64 letters, digits, _ or -' })
  subAppId?: string;
}

/** Disabling or enabling an account, or one of its sub-merchants when named. */
export class MerchantTargetDto {
  @ApiPropertyOptional({ description: 'A sub-merchant of the account; absent: the account itself' })
  @OptionalField()
  @IsString()
  @Matches(ID, { message: 'subMerchantId must be 1 to 64 letters, digits, _ or -' })
  subMerchantId?: string;
}

export class DisableMerchantDto extends MerchantTargetDto {
  @ApiProperty({ minLength: 1, maxLength: 256 })
  @IsString()
  @Length(1, 256, { message: 'reason must be 1 to 256 characters' })
  @Matches(/\S/, { message: 'reason must not be blank' })
  reason: string;
}

/** One row of the merchant directory's history. */
export class MerchantChangeView {
  @ApiProperty() id: string;
  @ApiProperty() channel: string;
  @ApiProperty() accountId: string;
  @ApiProperty({ description: "'' for the account itself" }) subMerchantId: string;
  @ApiProperty({ enum: Object.values(MerchantAction) }) action: MerchantAction;
  @ApiProperty({ nullable: true, type: String }) subAppId: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'APPROVED, REJECTED: the proposal decided' })
  decidesChangeId: string | null;
  @ApiProperty() operatorId: string;
  @ApiProperty({ nullable: true, type: String }) reason: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'KEY_DRY_RUN, PLATFORM_KEY_PROPOSED: the key file' })
  keyKind: string | null;
  @ApiProperty({ nullable: true, type: String, description: "PLATFORM_KEY_PROPOSED: the key's id, if it has one" })
  keyId: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'PLATFORM_KEY_PROPOSED: the candidate, PEM (public)' })
  candidatePem: string | null;
  @ApiProperty({ nullable: true, type: String, description: "SHA-256 of the candidate's SubjectPublicKeyInfo, hex" })
  candidateFingerprint: string | null;
  @ApiProperty({ nullable: true, type: Number, description: 'PLATFORM_KEY_PROPOSED: the overlap window, seconds' })
  overlapSeconds: number | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'ACCOUNT_ADDED, ACCOUNT_CHANGE_PROPOSED: the sealed secret (merchant_secret)',
  })
  secretId: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      "ACCOUNT_ADDED, ACCOUNT_CHANGE_PROPOSED: the account's public facts, JSON (options, public values, public keys' fingerprints)",
  })
  accountFacts: string | null;
  @ApiProperty() createdAt: Date;
}

export class ListedSubMerchantView {
  @ApiProperty() subMerchantId: string;
  @ApiPropertyOptional() subAppId?: string;
  @ApiProperty({ enum: ['configuration', 'directory'] }) source: 'configuration' | 'directory';
  @ApiProperty() disabled: boolean;
}

export class ListedAccountView {
  @ApiProperty() channel: string;
  @ApiProperty() account: string;
  @ApiProperty({ enum: ['configuration', 'directory'] }) source: 'configuration' | 'directory';
  @ApiPropertyOptional({
    type: Object,
    description:
      "A directory account's public facts: its options by name, its public values, its public keys' fingerprints",
  })
  facts?: unknown;
  @ApiPropertyOptional({ description: 'A directory account: the change that put its entry in force' })
  changeId?: string;
  @ApiPropertyOptional({
    description:
      'A directory account: false while this replica left it out (its secret did not decrypt, or the channel refused it; the log says why)',
  })
  applied?: boolean;
  @ApiProperty() disabled: boolean;
  @ApiProperty({ type: [ListedSubMerchantView] }) subMerchants: ListedSubMerchantView[];
}

export class ActivatedKeyView {
  @ApiProperty() channel: string;
  @ApiProperty() account: string;
  @ApiProperty({ description: 'The key file it takes the place of: publicKey, platformCert, publicCert' }) kind: string;
  @ApiProperty({ description: 'SHA-256 of its SubjectPublicKeyInfo, hex' }) fingerprint: string;
  @ApiProperty({ nullable: true, type: String }) keyId: string | null;
  @ApiProperty({ description: 'The approval' }) changeId: string;
  @ApiProperty() activatedAt: string;
  @ApiProperty({ description: 'Until then the key before it (previousFingerprint, or the file) verifies beside it' })
  overlapUntil: string;
  @ApiProperty({ nullable: true, type: String, description: "null: the key file's" })
  previousFingerprint: string | null;
}

export class MerchantDirectoryView {
  @ApiProperty({ description: 'The version every replica applies within applyWithinMs (the last change id)' })
  version: string;
  @ApiProperty() applyWithinMs: number;
  @ApiProperty({ type: [ListedAccountView] }) accounts: ListedAccountView[];
  @ApiProperty({ type: [MerchantChangeView], description: 'Proposals waiting for a second admin' })
  pending: MerchantChangeView[];
  @ApiProperty({ type: [ActivatedKeyView], description: 'Platform keys and certificates the directory activated' })
  platformKeys: ActivatedKeyView[];
}

export class MerchantHistoryQueryDto {
  @ApiPropertyOptional({ description: 'Changes before this id (the next page)' })
  @OptionalField()
  @Matches(/^\d{1,19}$/, { message: 'before must be a change id' })
  before?: string;
}

/** A candidate platform key or certificate, tried against the account's recent notifications. */
export class KeyDryRunDto {
  @ApiProperty({
    example: 'publicKey',
    description:
      "The account's key file to try it in place of: publicKey (a bare platform key), platformCert, publicCert",
  })
  @IsString()
  @Matches(/^[A-Za-z0-9]{1,32}$/, { message: 'kind must be the name of a key file option (publicKey, platformCert …)' })
  kind: string;

  @ApiProperty({ description: 'The candidate, PEM: a public key or a certificate (public material only)' })
  @IsString()
  @Length(1, 65536, { message: 'candidatePem must be 1 to 65536 characters' })
  candidatePem: string;

  @ApiPropertyOptional({ description: 'Notifications received since (ISO 8601); the last hour unless given' })
  @OptionalField()
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 time' })
  since?: string;
}

/** A candidate platform key or certificate to activate, after its dry run. */
export class ProposePlatformKeyDto {
  @ApiProperty({ enum: PLATFORM_KEY_KINDS, description: "The account's key file it takes the place of" })
  @IsIn(PLATFORM_KEY_KINDS, { message: `kind must be one of ${PLATFORM_KEY_KINDS.join(', ')}` })
  kind: string;

  @ApiProperty({ description: 'The candidate, PEM: a public key or a certificate, the one the dry run tried' })
  @IsString()
  @Length(1, 65536, { message: 'candidatePem must be 1 to 65536 characters' })
  candidatePem: string;

  @ApiPropertyOptional({
    example: 'PUB_KEY_ID_0112345678202412010000000000000000',
    description: "The new key's id, for a key named by one (WeChat Pay's public key mode, where it is required)",
  })
  @OptionalField()
  @IsString()
  @Matches(/^[A-Za-z0-9_\-]{1,64}$/, { message: 'keyId must be 1 to 64 letters, digits, _ or -' })
  keyId?: string;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: MAX_OVERLAP_SECONDS,
    description: 'How long after the approval the current key still verifies beside the candidate; 86400 unless given',
  })
  @OptionalField()
  @IsInt({ message: 'overlapSeconds must be a whole number of seconds' })
  @Min(0, { message: `overlapSeconds must be 0 to ${MAX_OVERLAP_SECONDS}` })
  @Max(MAX_OVERLAP_SECONDS, { message: `overlapSeconds must be 0 to ${MAX_OVERLAP_SECONDS}` })
  overlapSeconds?: number;
}

export class DryRunReportView {
  @ApiProperty() channel: string;
  @ApiProperty() account: string;
  @ApiProperty() kind: string;
  @ApiProperty({ description: "SHA-256 of the candidate's SubjectPublicKeyInfo, hex" }) candidateFingerprint: string;
  @ApiProperty() since: string;
  @ApiProperty({ description: 'Stored and refused notifications of the channel read (500 of each at most)' })
  examined: number;
  @ApiProperty({ description: "The account's notifications the current key verifies and the candidate does not" })
  currentOnly: number;
  @ApiProperty({ description: "The account's notifications the candidate verifies and the current key does not" })
  candidateOnly: number;
  @ApiProperty() both: number;
  @ApiProperty({ description: 'Verified by neither key (of any account of the channel)' }) neither: number;
}

/**
 * An account through the directory: one entry of the channel's section of PAYMENT_ACCOUNTS_FILE,
 * with each file's content in `files` in place of its path.
 */
export class AccountMaterialDto {
  @ApiProperty({
    type: Object,
    example: {
      mchid: '1900009191',
      appids: ['wx8888888888888888'],
      apiV3Key: '…32 characters…',
      platformPublicKey: { id: 'PUB_KEY_ID_0119000091912024' },
      merchantSerialNo: '3775B6A45ACD588826D15E583A95F5DD********',
    },
    description:
      "One entry of the channel's section of PAYMENT_ACCOUNTS_FILE (the same fields and checks), without its file paths",
  })
  @IsObject({ message: 'entry must be an object: one entry of the accounts file' })
  entry: Record<string, unknown>;

  @ApiPropertyOptional({
    type: Object,
    example: {
      'platformPublicKey.path': '-----BEGIN PUBLIC KEY-----…',
      merchantPrivateKeyPath: '-----BEGIN PRIVATE KEY-----…',
    },
    description:
      'Each file option of the entry (…Path; …Paths: a list; <option>.path) → the file\'s content: its text, or {"base64": …} for a binary .p12/.pfx',
  })
  @OptionalField()
  @IsObject({ message: "files must be an object: option → the file's content" })
  files?: Record<string, unknown>;
}

export class RewrapReportView {
  @ApiProperty({
    description: 'The key every secret is sealed under now: the first line of MERCHANT_SECRETS_KEYS_FILE',
  })
  keyId: string;
  @ApiProperty() rewrapped: number;
  @ApiProperty({ description: 'Rewrapped by another rewrap at the same time' }) alreadyDone: number;
  @ApiProperty({ description: 'Under a key the file no longer holds, or not authentic: left as they are' })
  failed: number;
}

/** A rewrap, optionally checked against the key the operator expects to seal under. */
export class RewrapSecretsDto {
  @ApiPropertyOptional({
    example: 'k2',
    description:
      "The key id expected first in MERCHANT_SECRETS_KEYS_FILE: refused (409) when the file's first line is another, e.g. a replica that has not seen the new file yet",
  })
  @OptionalField()
  @IsString()
  @Matches(/^[A-Za-z0-9_.-]{1,32}$/, { message: 'keyId must be 1 to 32 letters, digits, _ . or -' })
  keyId?: string;
}
