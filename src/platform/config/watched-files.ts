import { stat } from 'node:fs/promises';

/**
 * How often a file the service re-reads on change is looked at (a stat): a token removed from
 * ADMIN_TOKENS_FILE stops working, and a rotated key takes effect, within about this.
 */
export const WATCHED_FILE_CHECK_MS = 2000;

/** What one look at the files found. */
export type FilesLook<T> =
  { outcome: 'unchanged' } | { outcome: 'applied'; value: T; first: boolean } | { outcome: 'refused'; reason: string };

/**
 * Files the service re-reads when they change on disk (a Kubernetes Secret rotated, a file
 * rewritten or replaced): each look stats them, and when any differs from the last look, `read`
 * runs again. Whatever `read` throws is returned as the reason the new version is refused, so
 * that the caller keeps what it has; the same version is not read again until it changes. The
 * reason is the error's message: readers name the file and the problem, never its content.
 */
export class WatchedFiles<T> {
  private stamp: string | undefined;

  constructor(
    private readonly paths: readonly string[],
    private readonly read: () => T,
  ) {}

  async look(): Promise<FilesLook<T>> {
    const stamp = (await Promise.all(this.paths.map(stampOf))).join('|');
    if (stamp === this.stamp) return { outcome: 'unchanged' };
    const first = this.stamp === undefined;
    this.stamp = stamp;
    try {
      return { outcome: 'applied', value: this.read(), first };
    } catch (error) {
      return { outcome: 'refused', reason: (error as Error).message };
    }
  }
}

/** A file's identity and version as stat sees them through symbolic links; a missing file is a version too. */
async function stampOf(path: string): Promise<string> {
  try {
    const { ino, size, mtimeMs, ctimeMs } = await stat(path);
    return `${ino}:${size}:${mtimeMs}:${ctimeMs}`;
  } catch (error) {
    return `unreadable:${(error as NodeJS.ErrnoException).code ?? 'unknown'}`;
  }
}
