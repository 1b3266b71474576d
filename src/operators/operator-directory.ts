import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { WATCHED_FILE_CHECK_MS, WatchedFiles } from '../platform/config/watched-files';
import { adminConfig, AdminOperator, AdminRole, HASHED_TOKEN, readAdminTokensFile } from './admin.config';

/** How long a look at ADMIN_TOKENS_FILE holds: a token removed from it stops working within this. */
export const TOKENS_FILE_CHECK_MS = WATCHED_FILE_CHECK_MS;

export interface KnownOperator {
  operatorId: string;
  role: AdminRole;
  /** SHA-256 of the token: the configured token hashed, or the hash configured as `sha256=<hex>`. */
  digest: Buffer;
}

/**
 * The operators of ADMIN_TOKENS and ADMIN_TOKENS_FILE. The file is looked at (a stat) at most every
 * TOKENS_FILE_CHECK_MS, on a request, and read again when it changed (WatchedFiles, as the channels'
 * key files are): tokens are added, rotated and revoked without a restart. A file that cannot be
 * read or has a mistake keeps the operators of its last good version, and says so in the log
 * without quoting it.
 */
@Injectable()
export class OperatorDirectory {
  private readonly logger = new Logger(OperatorDirectory.name);
  private readonly fromEnv: KnownOperator[];
  private operators: KnownOperator[];
  private readonly file: WatchedFiles<KnownOperator[]> | undefined;
  private checkedAt = 0;
  private check: Promise<void> | undefined;

  constructor(@Inject(adminConfig.KEY) config: ConfigType<typeof adminConfig>) {
    this.fromEnv = config.envOperators.map(known);
    this.operators = config.operators.map(known);
    this.file = config.tokensFile
      ? new WatchedFiles([config.tokensFile], () => this.readFile(config.tokensFile!))
      : undefined;
    if (!this.configured) this.logger.warn('the admin API is disabled: set ADMIN_TOKENS to enable it');
  }

  /** False: neither ADMIN_TOKENS nor ADMIN_TOKENS_FILE is set, and the admin API answers 503. */
  get configured(): boolean {
    return this.fromEnv.length > 0 || this.file !== undefined;
  }

  async current(): Promise<readonly KnownOperator[]> {
    if (this.file && Date.now() - this.checkedAt >= TOKENS_FILE_CHECK_MS) {
      this.check ??= this.reloadIfChanged(this.file).finally(() => {
        this.checkedAt = Date.now();
        this.check = undefined;
      });
      await this.check;
    }
    return this.operators;
  }

  private async reloadIfChanged(file: WatchedFiles<KnownOperator[]>): Promise<void> {
    const look = await file.look();
    if (look.outcome === 'refused') {
      this.logger.error(`ADMIN_TOKENS_FILE not re-read, the operators stay as they were: ${look.reason}`);
    }
    if (look.outcome !== 'applied') return;
    this.operators = [...this.fromEnv, ...look.value];
    if (!look.first) this.logger.log(`ADMIN_TOKENS_FILE re-read: ${look.value.length} operators`);
  }

  private readFile(path: string): KnownOperator[] {
    const fromFile = readAdminTokensFile(path).map(known);
    const ids = new Set(this.fromEnv.map((o) => o.operatorId));
    if (fromFile.some((o) => ids.has(o.operatorId))) {
      throw new Error('ADMIN_TOKENS_FILE names an operatorId that ADMIN_TOKENS has');
    }
    return fromFile;
  }
}

function known({ operatorId, role, token }: AdminOperator): KnownOperator {
  const digest = HASHED_TOKEN.test(token)
    ? Buffer.from(token.slice('sha256='.length), 'hex')
    : createHash('sha256').update(token).digest();
  return { operatorId, role, digest };
}
