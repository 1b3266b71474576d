import { statSync } from 'node:fs';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../../domain/domain-error';
import {
  MERCHANT_SECRETS_KEYS_FILE,
  MerchantSecretsConfig,
  merchantSecretsConfig,
  readKeyRing,
} from './merchant-secrets.config';
import { SecretKeyRing } from './secret-sealing';

/**
 * The keys of MERCHANT_SECRETS_KEYS_FILE, re-read when the file changes: each use stats it (through
 * symbolic links, as a Secret's `..data` swap), and a new version is read and checked. A version
 * that fails (a line that is no key) is refused: the keys of the last good version stay, and the
 * log names the file and the line, never a key.
 */
@Injectable()
export class MerchantSecretKeys {
  private readonly logger = new Logger(MerchantSecretKeys.name);
  private ring: SecretKeyRing | undefined;
  private stamp = '';

  constructor(@Inject(merchantSecretsConfig.KEY) private readonly config: MerchantSecretsConfig) {}

  /** The keys as the file holds them now; undefined when the variable is not set (or the file never read). */
  current(): SecretKeyRing | undefined {
    const path = this.config.keysFile;
    if (!path) return undefined;
    const stamp = stampOf(path);
    if (stamp !== this.stamp) {
      this.stamp = stamp;
      try {
        this.ring = readKeyRing(path);
        this.logger.log(
          `${MERCHANT_SECRETS_KEYS_FILE} read: ${this.ring.byId.size} keys, ${this.ring.current.id} encrypts`,
        );
      } catch (error) {
        this.logger.error(
          `${MERCHANT_SECRETS_KEYS_FILE} not re-read, its last good keys stay: ${(error as Error).message}`,
        );
      }
    }
    return this.ring;
  }

  /** The keys for a write that seals a secret: a 409 naming the variable without them (nothing is written). */
  required(): SecretKeyRing {
    const ring = this.current();
    if (ring) return ring;
    throw new DomainError(
      'MerchantConflict',
      this.config.keysFile
        ? `${MERCHANT_SECRETS_KEYS_FILE} ${this.config.keysFile} holds no readable key: the directory cannot encrypt an account's secrets`
        : `${MERCHANT_SECRETS_KEYS_FILE} is not configured: the directory stores an account's secrets only encrypted, under a key of that file`,
    );
  }

  /** The file's version as last seen: a directory account that did not decrypt is tried again once it changes. */
  version(): string {
    this.current();
    return this.stamp;
  }
}

function stampOf(path: string): string {
  try {
    const { ino, size, mtimeMs, ctimeMs } = statSync(path);
    return `${ino}:${size}:${mtimeMs}:${ctimeMs}`;
  } catch (error) {
    return `unreadable:${(error as NodeJS.ErrnoException).code ?? 'unknown'}`;
  }
}
