import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { Gauge, register } from 'prom-client';
import { WATCHED_FILE_CHECK_MS, WatchedFiles } from '../platform/config/watched-files';
import { adminConfig, AdminOperator, AdminRole, tokenDigest, withTokensFile } from './admin.config';

/** How long a look at ADMIN_TOKENS_FILE holds: a token removed from it stops working within this. */
export const TOKENS_FILE_CHECK_MS = WATCHED_FILE_CHECK_MS;

/** 1 while the operators are those of an earlier version of ADMIN_TOKENS_FILE (the AdminTokensFileStale alert). */
export const ADMIN_TOKENS_FILE_STALE = 'admin_tokens_file_stale';

export interface KnownOperator {
  operatorId: string;
  role: AdminRole;
  /** SHA-256 of the token: the configured token hashed, or the hash configured as `sha256=<hex>`. */
  digest: Buffer;
}

/**
 * The operators of ADMIN_TOKENS and ADMIN_TOKENS_FILE. The file is looked at (a stat) at most every
 * TOKENS_FILE_CHECK_MS, on a request and on a scrape of /metrics, and read again when it changed
 * (WatchedFiles, as the channels' key files are):
 * tokens are added, rotated and revoked without a restart. A file that is deleted, cannot be read
 * or has a mistake (a twin token among them) keeps the operators of its last good version: it says
 * so in the log without quoting it, and admin_tokens_file_stale is 1 (the AdminTokensFileStale
 * alert) until a good version is read. Kept rather than refused, so that a slip in the file does not
 * lock every operator out during an incident; the alert says that a revocation has not taken effect.
 */
@Injectable()
export class OperatorDirectory {
  private readonly logger = new Logger(OperatorDirectory.name);
  private readonly fromEnv: KnownOperator[];
  private operators: KnownOperator[];
  private readonly file: WatchedFiles<KnownOperator[]> | undefined;
  private checkedAt = 0;
  private check: Promise<void> | undefined;
  private readonly envOperators: readonly AdminOperator[];
  private stale = false;

  constructor(@Inject(adminConfig.KEY) config: ConfigType<typeof adminConfig>) {
    this.envOperators = config.envOperators;
    this.fromEnv = config.envOperators.map(known);
    this.operators = config.operators.map(known);
    const tokensFile = config.tokensFile;
    // The same checks as at start: an operator id, or a token, in both places is refused.
    this.file = tokensFile
      ? new WatchedFiles([tokensFile], () => withTokensFile(this.envOperators, tokensFile).map(known))
      : undefined;
    if (!this.configured) this.logger.warn('the admin API is disabled: set ADMIN_TOKENS to enable it');
    this.registerStaleGauge();
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
    // A broken version is reported once, and looked at again when it changes.
    const look = await file.look();
    if (look.outcome === 'unchanged') return;
    if (look.outcome === 'refused') {
      this.stale = true;
      this.logger.error(
        `ADMIN_TOKENS_FILE not re-read, the operators of its last good version stay (admin_tokens_file_stale 1): ${look.reason}`,
      );
      return;
    }
    this.operators = look.value;
    this.stale = false;
    if (!look.first) this.logger.log(`ADMIN_TOKENS_FILE re-read: ${look.value.length - this.fromEnv.length} operators`);
  }

  /** admin_tokens_file_stale, brought up to date (a look at the file, as a request makes) when scraped. */
  private registerStaleGauge(): void {
    // Tests start several apps in one process: the last one's directory serves the metric.
    if (register.getSingleMetric(ADMIN_TOKENS_FILE_STALE)) register.removeSingleMetric(ADMIN_TOKENS_FILE_STALE);
    const gauge: Gauge = new Gauge({
      name: ADMIN_TOKENS_FILE_STALE,
      help:
        '1 while ADMIN_TOKENS_FILE is deleted, unreadable or has a mistake and the operators of its last good version ' +
        'stay in use (a token removed since then still works); 0 otherwise',
      collect: async () => {
        await this.current();
        gauge.set(this.stale ? 1 : 0);
      },
    });
  }
}

function known({ operatorId, role, token }: AdminOperator): KnownOperator {
  return { operatorId, role, digest: tokenDigest(token) };
}
