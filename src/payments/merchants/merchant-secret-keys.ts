import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../../domain/domain-error';
import { WatchedFiles } from '../../platform/config/watched-files';
import {
  MERCHANT_SECRETS_KEYS_FILE,
  MerchantSecretsConfig,
  merchantSecretsConfig,
  readKeyRing,
} from './merchant-secrets.config';
import { SecretKeyRing } from './secret-sealing';

/**
 * The keys of MERCHANT_SECRETS_KEYS_FILE, re-read when the file changes (WatchedFiles, as the key
 * files and ADMIN_TOKENS_FILE are): each use stats it, and a new version is read and checked. A
 * version that fails (a line that is no key) is refused: the keys of the last good version stay,
 * and the log names the file and the line, never a key.
 */
@Injectable()
export class MerchantSecretKeys {
  private readonly logger = new Logger(MerchantSecretKeys.name);
  private readonly file: WatchedFiles<SecretKeyRing> | undefined;
  private ring: SecretKeyRing | undefined;
  /** How many versions of the file were seen, read or refused. */
  private versions = 0;

  constructor(@Inject(merchantSecretsConfig.KEY) private readonly config: MerchantSecretsConfig) {
    const path = config.keysFile;
    this.file = path ? new WatchedFiles([path], () => readKeyRing(path)) : undefined;
  }

  /** The keys as the file holds them now; undefined when the variable is not set (or the file never read). */
  async current(): Promise<SecretKeyRing | undefined> {
    const look = await this.file?.look();
    if (look?.outcome === 'applied') {
      this.versions++;
      this.ring = look.value;
      this.logger.log(
        `${MERCHANT_SECRETS_KEYS_FILE} read: ${this.ring.byId.size} keys, ${this.ring.current.id} encrypts`,
      );
    } else if (look?.outcome === 'refused') {
      this.versions++;
      this.logger.error(`${MERCHANT_SECRETS_KEYS_FILE} not re-read, its last good keys stay: ${look.reason}`);
    }
    return this.ring;
  }

  /** The keys for a write that seals a secret: a 409 naming the variable without them (nothing is written). */
  async required(): Promise<SecretKeyRing> {
    const ring = await this.current();
    if (ring) return ring;
    throw new DomainError(
      'MerchantConflict',
      this.config.keysFile
        ? `${MERCHANT_SECRETS_KEYS_FILE} ${this.config.keysFile} holds no readable key: the directory cannot encrypt an account's secrets`
        : `${MERCHANT_SECRETS_KEYS_FILE} is not configured: the directory stores an account's secrets only encrypted, under a key of that file`,
    );
  }

  /** The file's version as last seen: a directory account that did not decrypt is tried again once it changes. */
  async version(): Promise<number> {
    await this.current();
    return this.versions;
  }
}
