import { html } from 'htm/preact';
import { PALETTE, TimeChart } from '../chart';
import { formatDay, formatMs } from '../format';
import { locale, t } from '../i18n';
import { Show, Status, Table, Time, useGet } from '../ui';
import { useVocabulary, Vocabulary } from '../vocabulary';

interface CountByKey {
  key: string;
  count: number;
}

interface Overview {
  latency: { deliveries: number; p50Ms: number | null; p99Ms: number | null };
  openAnomalies: CountByKey[];
  refundsAwaitingApproval: number;
  unsettledRefunds: CountByKey[];
  deadLetters: number;
  spool: { enabled: boolean; pending?: number; parked?: number; quarantined?: number; oldestAgeSeconds?: number };
  reconciliations: Array<{
    channel: string;
    merchantId: string;
    date: string;
    status: string;
    counts: Record<string, number> | null;
    finishedAt: string | null;
  }>;
}

interface Stats {
  from: string;
  to: string;
  rows: StatsRow[];
}

interface StatsRow {
  bucket: string;
  channel: string;
  deliveries: number;
  paymentDeliveries: number;
  duplicateDeliveries: number;
  outcomes: Record<string, number>;
}

const HOUR_MS = 3600_000;

/** Per UTC hour of [from, to), per channel and per outcome; hours without deliveries included as 0. */
export function hourly(stats: Stats, channels: string[]) {
  const first = Math.floor(Date.parse(stats.from) / HOUR_MS) * HOUR_MS;
  const hours: number[] = [];
  for (let hour = first; hour < Date.parse(stats.to); hour += HOUR_MS) hours.push(hour);
  const index = new Map(hours.map((hour, i) => [hour, i]));
  const outcomes = [...new Set(stats.rows.flatMap((r) => Object.keys(r.outcomes)))].sort();
  const zeros = () => hours.map(() => 0);
  const deliveries = new Map(channels.map((c) => [c, zeros()]));
  const payments = new Map(channels.map((c) => [c, zeros()]));
  const duplicates = new Map(channels.map((c) => [c, zeros()]));
  const byOutcome = new Map(outcomes.map((o) => [o, zeros()]));
  for (const row of stats.rows) {
    const i = index.get(Date.parse(row.bucket));
    if (i === undefined || !deliveries.has(row.channel)) continue;
    deliveries.get(row.channel)![i] += row.deliveries;
    payments.get(row.channel)![i] += row.paymentDeliveries;
    duplicates.get(row.channel)![i] += row.duplicateDeliveries;
    for (const [outcome, n] of Object.entries(row.outcomes)) byOutcome.get(outcome)![i] += n;
  }
  const rate = (channel: string) =>
    duplicates
      .get(channel)!
      .map((d, i) => (payments.get(channel)![i] === 0 ? 0 : Math.round((d / payments.get(channel)![i]) * 1000) / 10));
  const color = (i: number) => PALETTE[i % PALETTE.length];
  return {
    times: hours.map((hour) => hour / 1000),
    byChannel: channels.map((c, i) => ({ label: c, values: deliveries.get(c)!, color: color(i) })),
    duplicateRate: channels.map((c, i) => ({ label: c, values: rate(c), color: color(i) })),
    byOutcome: outcomes.map((o, i) => ({ label: o, values: byOutcome.get(o)!, color: color(i) })),
  };
}

export function OverviewPage() {
  const overview = useGet<Overview>('/admin/overview');
  const stats = useGet<Stats>('/admin/stats/callbacks?bucket=hour');
  const vocabulary = useVocabulary();
  return html`<h1>${t('overview')}</h1>
    <${Show} loaded=${vocabulary}>
      ${(lists: Vocabulary) =>
        html`<${Show} loaded=${stats}>
          ${(s: Stats) => {
            const series = hourly(s, lists.channels);
            return html`<div class="charts">
              <${TimeChart} title=${t('deliveriesPerHour')} times=${series.times} series=${series.byChannel} />
              <${TimeChart} title=${t('deliveriesByOutcome')} times=${series.times} series=${series.byOutcome} />
              <${TimeChart} title=${t('duplicateRatePerHour')} times=${series.times} series=${series.duplicateRate} />
            </div>`;
          }}
        <//>`}
    <//>
    <${Show} loaded=${overview}>${(o: Overview) => OverviewCards(o)}<//>`;
}

function OverviewCards(o: Overview) {
  return html`<div class="cards">
      <section class="card" aria-labelledby="latency">
        <h2 id="latency">${t('latency')}</h2>
        <dl>
          <dt>${t('p50')}</dt>
          <dd data-testid="p50">${formatMs(o.latency.p50Ms)}</dd>
          <dt>${t('p99')}</dt>
          <dd data-testid="p99">${formatMs(o.latency.p99Ms)}</dd>
          <dt>${t('deliveries')}</dt>
          <dd>${o.latency.deliveries}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="open-anomalies">
        <h2 id="open-anomalies"><a href="#/anomalies">${t('openAnomalies')}</a></h2>
        ${
          o.openAnomalies.length === 0
            ? html`<p>${t('none')}</p>`
            : html`<ul>
                ${o.openAnomalies.map((a) => html`<li><a href=${`#/anomalies?type=${a.key}`}>${a.key}</a>: ${a.count}</li>`)}
              </ul>`
        }
      </section>
      <section class="card" aria-labelledby="awaiting">
        <h2 id="awaiting"><a href="#/approvals">${t('awaitingApproval')}</a></h2>
        <p class="figure">${o.refundsAwaitingApproval}</p>
      </section>
      <section class="card" aria-labelledby="unsettled">
        <h2 id="unsettled">${t('unsettledRefunds')}</h2>
        ${
          o.unsettledRefunds.length === 0
            ? html`<p>${t('none')}</p>`
            : html`<ul>
                ${o.unsettledRefunds.map((r) => html`<li><a href=${`#/refunds?status=${r.key}`}>${r.key}</a>: ${r.count}</li>`)}
              </ul>`
        }
      </section>
      <section class="card" aria-labelledby="dead-letters">
        <h2 id="dead-letters"><a href="#/dead-letters">${t('deadLetters')}</a></h2>
        <p class="figure">${o.deadLetters}</p>
      </section>
      <section class="card" aria-labelledby="spool">
        <h2 id="spool">${t('spool')}</h2>
        ${
          o.spool.enabled
            ? html`<dl>
                <dt>${t('pending')}</dt>
                <dd>${o.spool.pending}</dd>
                <dt>${t('parked')}</dt>
                <dd>${o.spool.parked}</dd>
                <dt>${t('quarantined')}</dt>
                <dd>${o.spool.quarantined}</dd>
                <dt>${t('oldest')}</dt>
                <dd>${o.spool.oldestAgeSeconds}</dd>
              </dl>`
            : html`<p>${t('spoolOff')}</p>`
        }
      </section>
    </div>
    <${Table}
      caption=${t('lastReconciliations')}
      head=${[t('channel'), t('account'), t('date'), t('status'), t('counts'), t('at')]}
      rows=${o.reconciliations.map((r) => [
        r.channel,
        r.merchantId,
        html`<a href=${`#/reconciliation/${r.channel}/${r.date}`}>${formatDay(r.date, locale())}</a>`,
        html`<${Status} value=${r.status} />`,
        Counts(r.counts),
        html`<${Time} iso=${r.finishedAt} />`,
      ])}
    />`;
}

export function Counts(counts: Record<string, number> | null) {
  if (!counts) return '—';
  return Object.entries(counts)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
}
