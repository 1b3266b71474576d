/**
 * The notify route's use case for the medium suites of the channels' other dialects (UnionPay,
 * Alipay's certificate mode, WeChat Pay's partner mode and APIv2): a delivery's bytes and headers,
 * as the route hands them over, go to NotificationIntake.receive, which verifies them with the
 * channel's real verifier, settles them and answers what the platform would get — without HTTP.
 */
import { DomainError } from '../../src/domain/domain-error';
import { MediumContext } from './medium';
import { receive as receiveReply } from './medium-intake';

/** The platform's reply: its status and its body as text ('' for none, as a 204 has). */
export interface Reply {
  status: number;
  body: string;
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
export const XML = { 'content-type': 'text/xml' };

/** Delivers `body` at /notify/`notifyPath` as the route would: the platform's reply. */
export async function receive(
  ctx: MediumContext,
  notifyPath: string,
  body: string,
  headers: Record<string, string>,
): Promise<Reply> {
  const reply = await receiveReply(ctx, notifyPath, headers, body);
  return { status: reply.status, body: reply.body };
}

/** The DomainError a service call fails with: its code, what it answers over HTTP, and its message. */
export async function failure(work: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(error)}`);
  const { code, status, message } = error;
  return { code, status, message };
}
