/**
 * The notify route's use case for the medium tests: a delivery's exact bytes and headers handed to
 * NotificationIntake.receive (NotifyModule), as serveNotifyRoute hands them over, and the
 * platform's reply it gives back, without HTTP. The metrics a use case counts are read from the
 * process's prom-client registry, the one /metrics serves.
 */
import { randomUUID } from 'node:crypto';
import { register } from 'prom-client';
import { NotificationIntake } from '../../src/intake/notification-intake';
import { MediumContext } from './medium';

/** What the platform would read from the reply: its status and its body as text (none for a 204). */
export interface IntakeReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Delivers `body` (the exact bytes) with `headers` to POST /notify/<notifyPath>'s use case. */
export async function receive(
  ctx: MediumContext,
  notifyPath: string,
  headers: Record<string, string>,
  body: string | Buffer,
  requestId: string = randomUUID(),
): Promise<IntakeReply> {
  const lowerCased = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const reply = await ctx.get(NotificationIntake).receive({
    notifyPath,
    body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
    headers: lowerCased,
    requestId,
  });
  const text =
    reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  return { status: reply.status, headers: reply.headers, body: text };
}

/** The registry's exposition now, as a scrape of /metrics would give it. */
export function exposition(): Promise<string> {
  return register.metrics();
}
