import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, post } from '../api';
import { t } from '../i18n';
import { canAct, OrderLink, Show, Status, Table, Time, useGet, useOperator, ViewerNote } from '../ui';

interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  eventTypes: string[] | null;
  enabled: boolean;
  disabledReason: string | null;
}

interface Attempt {
  id: string;
  eventId: string;
  eventType: string;
  orderNo: string;
  attempt: number;
  startedAt: string;
  latencyMs: number;
  statusCode: number | null;
  status: string;
  error: string | null;
  responseBody: string | null;
  deliveryStatus: string;
}

export function WebhooksPage() {
  const list = useGet<Endpoint[]>('/admin/webhook-endpoints');
  return html`<h1>${t('webhooks')}</h1>
    <${Show} loaded=${list}>
      ${(endpoints: Endpoint[]) =>
        html`<${Table}
          caption=${t('webhooks')}
          head=${[t('endpoint'), t('url'), t('eventTypes'), t('status'), t('disabledReason')]}
          rows=${endpoints.map((e) => [
            html`<a href=${`#/webhooks/${encodeURIComponent(e.id)}`}
              >${e.id}${e.description ? ` · ${e.description}` : ''}</a
            >`,
            e.url,
            e.eventTypes ? e.eventTypes.join(', ') : t('allTypes'),
            html`<${Status} value=${e.enabled ? 'ENABLED' : 'DISABLED'} />`,
            e.disabledReason ?? '',
          ])}
        />`}
    <//>`;
}

export function WebhookEndpointPage({ id }: { id: string }) {
  const attempts = useGet<{ items: Attempt[] }>(
    `/admin/webhook-endpoints/${encodeURIComponent(id)}/attempts?limit=100`,
  );
  return html`<h1>${t('endpoint')} ${id}</h1>
    <${ViewerNote} />
    <${Resend} id=${id} onDone=${attempts.reload} />
    <${Recover} id=${id} onDone=${attempts.reload} />
    <${Show} loaded=${attempts}>
      ${(page: { items: Attempt[] }) =>
        html`<${Table}
          caption=${t('webhookAttempts')}
          head=${[t('eventId'), t('order'), t('attempt'), t('startedAt'), t('latencyMs'), t('statusCode'), t('outcome'), t('lastError'), t('answer'), t('status')]}
          rows=${page.items.map((a) => [
            a.eventId,
            html`<${OrderLink} orderNo=${a.orderNo} />`,
            a.attempt,
            html`<${Time} iso=${a.startedAt} />`,
            a.latencyMs,
            a.statusCode ?? '—',
            a.status,
            a.error ?? '',
            html`<code>${a.responseBody ?? ''}</code>`,
            html`<${Status} value=${a.deliveryStatus} />`,
          ])}
        />`}
    <//>`;
}

function Resend({ id, onDone }: { id: string; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [eventId, setEventId] = useState('');
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await post(`/admin/webhook-endpoints/${encodeURIComponent(id)}/resend`, { eventId: eventId.trim() });
      setSaid({ ok: true, text: t('queued') });
      onDone();
    } catch (error) {
      setSaid({ ok: false, text: (error as ApiError).message });
    }
  };
  return html`<form class="inline" onSubmit=${submit}>
    <label for="resend-event">${t('eventId')}</label>
    <input
      id="resend-event"
      required
      disabled=${disabled}
      value=${eventId}
      onInput=${(e: Event) => setEventId((e.target as HTMLInputElement).value)}
    />
    <button type="submit" disabled=${disabled}>${t('resend')}</button>
    ${said ? html`<p class=${said.ok ? 'note' : 'error'} role=${said.ok ? 'status' : 'alert'}>${said.text}</p>` : null}
  </form>`;
}

function Recover({ id, onDone }: { id: string; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [since, setSince] = useState('');
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const answer = await post<{ queued: number }>(`/admin/webhook-endpoints/${encodeURIComponent(id)}/recover`, {
        since: new Date(since).toISOString(),
      });
      setSaid({ ok: true, text: `${t('queued')}: ${answer.queued}` });
      onDone();
    } catch (error) {
      setSaid({ ok: false, text: (error as ApiError).message });
    }
  };
  return html`<form class="inline" onSubmit=${submit}>
    <label for="recover-since">${t('recoverSince')}</label>
    <input
      id="recover-since"
      type="datetime-local"
      required
      disabled=${disabled}
      value=${since}
      onInput=${(e: Event) => setSince((e.target as HTMLInputElement).value)}
    />
    <button type="submit" disabled=${disabled}>${t('recover')}</button>
    ${said ? html`<p class=${said.ok ? 'note' : 'error'} role=${said.ok ? 'status' : 'alert'}>${said.text}</p>` : null}
  </form>`;
}
