import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, post, query } from '../api';
import { beijingDate } from '../format';
import { t } from '../i18n';
import { navigate, Route } from '../router';
import { canAct, Money, OrderLink, Show, Status, Table, Time, useGet, useOperator, ViewerNote } from '../ui';
import { Counts } from './overview';

interface Run {
  channel: string;
  merchantId: string;
  date: string;
  status: string;
  attempts: number;
  billLines: number;
  counts: Record<string, number> | null;
  detail: string | null;
  finishedAt: string | null;
}

interface Item {
  outcome: string;
  kind: string;
  transactionId: string | null;
  orderNo: string | null;
  refundNo: string | null;
  channelAmount: number | null;
  localAmount: number | null;
  resolution: string | null;
  detail: string | null;
}

/** Runs by bill day (Beijing), channel and account. */
export function ReconciliationPage({ route }: { route: Route }) {
  const to = route.params.get('to') ?? beijingDate(-1);
  const from = route.params.get('from') ?? beijingDate(-7);
  const list = useGet<{ runs: Run[] }>(`/admin/reconciliations${query({ from, to })}`);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a date input's value: a string (FormData.get returns a File only for a file input)
    navigate(`#/reconciliation${query({ from: String(form.get('from')), to: String(form.get('to')) })}`);
  };
  return html`<h1>${t('reconciliation')}</h1>
    <form class="filters" onSubmit=${submit}>
      <label for="rec-from">${t('from')}</label><input id="rec-from" name="from" type="date" value=${from} />
      <label for="rec-to">${t('to')}</label><input id="rec-to" name="to" type="date" value=${to} />
      <button type="submit">${t('filter')}</button>
    </form>
    <${Show} loaded=${list}>
      ${(l: { runs: Run[] }) =>
        html`<${Table}
          caption=${`${t('runs')} ${from} – ${to}`}
          head=${[t('date'), t('channel'), t('account'), t('status'), t('counts'), t('at')]}
          rows=${l.runs.map((r) => [
            html`<a href=${`#/reconciliation/${r.channel}/${r.date}`}>${r.date}</a>`,
            r.channel,
            r.merchantId,
            html`<${Status} value=${r.status} />`,
            Counts(r.counts),
            html`<${Time} iso=${r.finishedAt} beijing />`,
          ])}
        />`}
    <//>`;
}

export function ReconciliationDayPage({ channel, date }: { channel: string; date: string }) {
  const day = useGet<{ runs: Array<Run & { items: Item[] }> }>(
    `/admin/reconciliations/${encodeURIComponent(channel)}/${encodeURIComponent(date)}`,
  );
  return html`<h1>${t('reconciliation')} ${channel} ${date}</h1>
    <${ViewerNote} />
    <${Rerun} channel=${channel} date=${date} onDone=${day.reload} />
    <${Show} loaded=${day}>
      ${(d: { runs: Array<Run & { items: Item[] }> }) =>
        d.runs.map(
          (run) =>
            html`<section aria-label=${`${run.channel} ${run.merchantId}`}>
              <h2>${run.merchantId} <${Status} value=${run.status} /></h2>
              <p>
                ${t('counts')}: ${Counts(run.counts)} · ${run.billLines} lines · ${t('attempts')}
                ${run.attempts}${run.detail ? ` · ${run.detail}` : ''}
              </p>
              <${Table}
                caption=${`${t('items')} ${run.merchantId}`}
                head=${[t('outcome'), t('kind'), t('order'), t('transaction'), t('refundNo'), t('channelAmount'), t('localAmount'), t('detail')]}
                rows=${run.items.map((i) => [
                  html`<${Status} value=${i.outcome} />`,
                  i.kind,
                  i.orderNo ? html`<${OrderLink} orderNo=${i.orderNo} />` : '—',
                  i.transactionId ?? '—',
                  i.refundNo ?? '—',
                  i.channelAmount === null ? '—' : html`<${Money} minor=${i.channelAmount} />`,
                  i.localAmount === null ? '—' : html`<${Money} minor=${i.localAmount} />`,
                  [i.resolution, i.detail].filter(Boolean).join(' · '),
                ])}
              />
            </section>`,
        )}
    <//>`;
}

function Rerun({ channel, date, onDone }: { channel: string; date: string; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [message, setMessage] = useState<string | null>(null);
  const run = async () => {
    try {
      const answer = await post<{ runs: Array<{ merchantId: string; started: boolean }> }>(
        `/admin/reconciliations/${encodeURIComponent(channel)}/${encodeURIComponent(date)}/run`,
      );
      setMessage(`${t('rerunStarted')}: ${answer.runs.map((r) => `${r.merchantId} ${r.started}`).join(', ')}`);
      onDone();
    } catch (error) {
      setMessage((error as ApiError).message);
    }
  };
  return html`<p>
    <button type="button" disabled=${disabled} onClick=${run}>${t('rerun')}</button>
    ${message ? html` <span role="status">${message}</span>` : null}
  </p>`;
}
