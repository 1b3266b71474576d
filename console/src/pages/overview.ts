import { html } from 'htm/preact';
import { LineChart } from '../chart';
import { t } from '../i18n';
import { Show, Status, Table, Time, useGet } from '../ui';

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
  deliveries: number;
  paymentDeliveries: number;
  duplicateDeliveries: number;
}

const HOUR_MS = 3600_000;

/** Per UTC hour of [from, to) over all channels, hours without deliveries included as 0. */
function hourly(stats: Stats): { times: number[]; deliveries: number[]; duplicateRate: number[] } {
  const hours = new Map<number, { deliveries: number; payments: number; duplicates: number }>();
  const first = Math.floor(Date.parse(stats.from) / HOUR_MS) * HOUR_MS;
  for (let hour = first; hour < Date.parse(stats.to); hour += HOUR_MS) {
    hours.set(hour, { deliveries: 0, payments: 0, duplicates: 0 });
  }
  for (const row of stats.rows) {
    const hour = hours.get(Date.parse(row.bucket));
    if (!hour) continue;
    hour.deliveries += row.deliveries;
    hour.payments += row.paymentDeliveries;
    hour.duplicates += row.duplicateDeliveries;
  }
  const buckets = [...hours.entries()];
  return {
    times: buckets.map(([hour]) => hour / 1000),
    deliveries: buckets.map(([, h]) => h.deliveries),
    duplicateRate: buckets.map(([, h]) => (h.payments === 0 ? 0 : Math.round((h.duplicates / h.payments) * 1000) / 10)),
  };
}

export function OverviewPage() {
  const overview = useGet<Overview>('/admin/overview');
  const stats = useGet<Stats>('/admin/stats/callbacks?bucket=hour');
  return html`<h1>${t('overview')}</h1>
    <${Show} loaded=${stats}>
      ${(s: Stats) => {
        const series = hourly(s);
        return html`<div class="charts">
          <${LineChart}
            title=${t('deliveriesPerHour')}
            times=${series.times}
            values=${series.deliveries}
            label=${t('deliveries')}
            color="#1d4ed8"
          />
          <${LineChart}
            title=${t('duplicateRatePerHour')}
            times=${series.times}
            values=${series.duplicateRate}
            label="%"
            color="#b45309"
          />
        </div>`;
      }}
    <//>
    <${Show} loaded=${overview}>${(o: Overview) => OverviewCards(o)}<//>`;
}

function OverviewCards(o: Overview) {
  return html`<div class="cards">
      <section class="card" aria-labelledby="latency">
        <h2 id="latency">${t('latency')}</h2>
        <dl>
          <dt>${t('p50')}</dt>
          <dd>${o.latency.p50Ms ?? '—'} ms</dd>
          <dt>${t('p99')}</dt>
          <dd>${o.latency.p99Ms ?? '—'} ms</dd>
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
        html`<a href=${`#/reconciliation/${r.channel}/${r.date}`}>${r.date}</a>`,
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
