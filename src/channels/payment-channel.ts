import { Channel } from '../domain/notification';
import { Refund } from '../refund/refund.entity';

/**
 * The channel's answer about a refund, once its signature has been verified. CLOSED and ABNORMAL:
 * the channel refused, closed or could not pay out the refund. RETRY: no word from the channel that
 * can be trusted (timeout, 5xx, unverifiable answer), so ask again later.
 */
export interface ChannelRefundResult {
  outcome: 'SUCCEEDED' | 'PROCESSING' | 'CLOSED' | 'ABNORMAL' | 'RETRY';
  channelRefundId?: string;
  /** Why, for CLOSED, ABNORMAL and RETRY. */
  detail?: string;
}

export interface RefundChannel {
  readonly channel: Channel;
  /** Why this channel cannot refund (missing credentials), or undefined when it can. */
  readonly unavailableReason: string | undefined;
  /** Never throws: every failure is a RETRY with its reason. The refund number is the channel's idempotency key. */
  refund(refund: Refund): Promise<ChannelRefundResult>;
  /**
   * Asks where an accepted refund stands, for when its notification does not come. Only a final
   * status is taken as the channel's word; anything else is PROCESSING or RETRY, never CLOSED.
   */
  query(refund: Refund): Promise<ChannelRefundResult>;
}

export const REFUND_CHANNELS = Symbol('REFUND_CHANNELS');

/** Yuan as the channels write it ("88.88"), from integer fen, without floating point. */
export function formatYuan(minor: number): string {
  return `${Math.trunc(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}

export function describeFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const name = (error as Error).name === 'TimeoutError' ? 'timed out' : (error as Error).message;
  return cause?.code ? `${name} (${cause.code})` : name;
}
