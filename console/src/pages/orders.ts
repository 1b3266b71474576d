import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, download, get, query } from '../api';
import { t } from '../i18n';
import { navigate, Route } from '../router';
import {
  canAct,
  DayField,
  Money,
  OrderLink,
  formText,
  readDays,
  Select,
  Show,
  Status,
  Table,
  Time,
  useGet,
  useOperator,
} from '../ui';
import { useVocabulary, Vocabulary } from '../vocabulary';
import type { Anomaly } from './anomalies';
import { Refund, refundRow, REFUND_HEAD } from './refunds';

export interface Payment {
  channel: string;
  transactionId: string;
  merchantId: string | null;
  amount: number;
  currency: string;
  refundReservedAmount: number;
  firstReceivedAt: string;
}

interface DeliverySummary {
  id: string;
  channel: string;
  eventType: string;
  transactionId: string | null;
  outcome: string;
  receivedAt: string;
  processingMs: number | null;
}

export interface OrderDetail {
  order: {
    orderNo: string;
    status: string;
    amount: number;
    currency: string;
    channel: string | null;
    createdAt: string;
  };
  history: Array<{
    fromStatus: string | null;
    toStatus: string;
    event: string;
    cause: string | null;
    changedAt: string;
  }>;
  payments: Payment[];
  deliveries: { count: number; items: DeliverySummary[] };
  anomalies: Anomaly[];
  refunds: Refund[];
  channelCalls: Array<{
    request: string;
    channel: string;
    outcome: string;
    transactionId: string | null;
    detail: string | null;
    at: string;
  }>;
}

interface OrderItem {
  orderNo: string;
  status: string;
  amount: number;
  currency: string;
  channel: string | null;
  merchantId: string | null;
  transactionId: string | null;
  createdAt: string;
  paidAt: string | null;
}

interface OrderList {
  items: OrderItem[];
  nextCursor: string | null;
}

/** The list of orders, filtered by the hash's query, with its CSV export; and the search by number or transaction id. */
export function OrdersPage({ route }: { route: Route }) {
  const p = route.params;
  const filters = {
    status: p.get('status') ?? '',
    channel: p.get('channel') ?? '',
    from: p.get('from') ?? '',
    to: p.get('to') ?? '',
  };
  const cursor = p.get('cursor') ?? '';
  const apiFilters = { ...filters, from: utcDayStart(filters.from), to: utcDayStart(filters.to) };
  const vocabulary = useVocabulary();
  const list = useGet<OrderList>(`/admin/orders${query({ ...apiFilters, cursor })}`);
  const [exported, setExported] = useState<{ name?: string; problem?: string } | null>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const read = readDays(form, ['from', 'to']);
    if ('problem' in read) return setExported({ problem: read.problem });
    setExported(null);
    const next: Record<string, string> = { ...read.days };
    for (const key of ['status', 'channel']) next[key] = formText(form, key);
    navigate(`#/orders${query(next)}`);
  };
  const exportCsv = async () => {
    setExported(null);
    try {
      setExported({ name: await download(`/admin/orders.csv${query(apiFilters)}`) });
    } catch (error) {
      setExported({ problem: (error as ApiError).message });
    }
  };
  return html`<h1>${t('orders')}</h1>
    <${OrderSearch} />
    <${Show} loaded=${vocabulary}>
      ${(lists: Vocabulary) =>
        html`<form class="filters" onSubmit=${submit}>
          <${Select} id="status" label=${t('status')} value=${filters.status} options=${lists.orderStatuses} />
          <${Select} id="channel" label=${t('channel')} value=${filters.channel} options=${lists.channels} />
          <${DayField} id="from" name="from" label=${`${t('from')} (UTC)`} value=${filters.from} />
          <${DayField} id="to" name="to" label=${`${t('to')} (UTC)`} value=${filters.to} />
          <button type="submit">${t('filter')}</button>
          <button type="button" class="secondary" onClick=${exportCsv} aria-describedby="export-help">
            ${t('exportCsv')}
          </button>
        </form>`}
    <//>
    <p id="export-help" class="help">${t('exportHelp')}</p>
    ${exported?.name ? html`<p role="status" class="ok">${t('exported')}: ${exported.name}</p>` : null}
    ${exported?.problem ? html`<p role="alert" class="error">${exported.problem}</p>` : null}
    <${Show} loaded=${list}>
      ${(page: OrderList) =>
        html`<${Table}
            caption=${t('ordersList')}
            head=${[t('orderNo'), t('status'), t('channel'), t('account'), t('transaction'), t('amount'), t('created'), t('paidAt')]}
            rows=${page.items.map((o) => [
              html`<${OrderLink} orderNo=${o.orderNo} />`,
              html`<${Status} value=${o.status} />`,
              o.channel ?? '—',
              o.merchantId ?? '—',
              o.transactionId ?? '—',
              html`<${Money} minor=${o.amount} currency=${o.currency} />`,
              html`<${Time} iso=${o.createdAt} />`,
              o.paidAt ? html`<${Time} iso=${o.paidAt} />` : '—',
            ])}
          />
          ${
            page.nextCursor
              ? html`<p><a href=${`#/orders${query({ ...filters, cursor: page.nextCursor })}`}>${t('next')}</a></p>`
              : null
          }`}
    <//>`;
}

/** A date input's day (yyyy-mm-dd) as the UTC instant it starts at, as the filters' labels say. */
export const utcDayStart = (day: string): string | undefined => (day ? `${day}T00:00:00Z` : undefined);

/** Looks the text up as an order number, then as a transaction id. */
function OrderSearch() {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const wanted = text.trim();
    if (!wanted) return;
    setProblem(null);
    try {
      await get(`/admin/orders/${encodeURIComponent(wanted)}`);
      return navigate(`#/orders/${encodeURIComponent(wanted)}`);
    } catch (error) {
      if ((error as ApiError).status !== 404) return setProblem((error as ApiError).message);
    }
    try {
      const { orderNo } = await get<{ orderNo: string }>(`/admin/transactions/${encodeURIComponent(wanted)}`);
      navigate(`#/orders/${encodeURIComponent(orderNo)}`);
    } catch (error) {
      setProblem((error as ApiError).status === 404 ? t('notFound') : (error as ApiError).message);
    }
  };
  return html`<form class="filters" role="search" onSubmit=${submit}>
      <label for="order-search">${t('search')}</label>
      <input
        id="order-search"
        value=${text}
        autocomplete="off"
        onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)}
      />
      <button type="submit">${t('find')}</button>
    </form>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}`;
}

export function OrderPage({ orderNo }: { orderNo: string }) {
  const detail = useGet<OrderDetail>(`/admin/orders/${encodeURIComponent(orderNo)}`);
  return html`<${Show} loaded=${detail}>
    ${(d: OrderDetail) =>
      html`<h1>${t('order')} ${d.order.orderNo}</h1>
        <dl class="facts">
          <dt>${t('status')}</dt>
          <dd><${Status} value=${d.order.status} /></dd>
          <dt>${t('amount')}</dt>
          <dd><${Money} minor=${d.order.amount} currency=${d.order.currency} /></dd>
          <dt>${t('channel')}</dt>
          <dd>${d.order.channel ?? '—'}</dd>
          <dt>${t('created')}</dt>
          <dd><${Time} iso=${d.order.createdAt} /></dd>
        </dl>
        <${Table}
          caption=${t('history')}
          head=${[t('status'), t('event'), t('cause'), t('at')]}
          rows=${d.history.map((h) => [
            `${h.fromStatus ?? '∅'} → ${h.toStatus}`,
            h.event,
            h.cause ?? '',
            html`<${Time} iso=${h.changedAt} />`,
          ])}
        />
        <${OrderSections} detail=${d} />`}
  <//>`;
}

/** What an order and an anomaly's page both show: transactions, deliveries, refunds, anomalies, channel calls. */
export function OrderSections({ detail }: { detail: OrderDetail }) {
  const d = detail;
  return html` <${Table}
      caption=${t('payments')}
      head=${[t('channel'), t('transaction'), t('account'), t('amount'), t('reserved'), t('refundable'), t('received')]}
      rows=${d.payments.map((p) => [
        p.channel,
        p.transactionId,
        p.merchantId ?? '—',
        html`<${Money} minor=${p.amount} currency=${p.currency} />`,
        html`<${Money} minor=${p.refundReservedAmount} currency=${p.currency} />`,
        html`<${Money} minor=${p.amount - p.refundReservedAmount} currency=${p.currency} />`,
        html`<${Time} iso=${p.firstReceivedAt} />`,
      ])}
    />
    <${Table}
      caption=${`${t('deliveries')} (${d.deliveries.count})`}
      head=${['#', t('event'), t('transaction'), t('outcome'), t('received'), t('processingMs'), t('raw')]}
      rows=${d.deliveries.items.map((v) => [
        v.id,
        `${v.channel} ${v.eventType}`,
        v.transactionId ?? '—',
        html`<${Status} value=${v.outcome} />`,
        html`<${Time} iso=${v.receivedAt} />`,
        v.processingMs ?? '—',
        html`<${RawBytes} id=${v.id} />`,
      ])}
    />
    <${Table} caption=${t('refundsOf')} head=${REFUND_HEAD()} rows=${d.refunds.map(refundRow)} />
    <${Table}
      caption=${t('anomaliesOf')}
      head=${['#', t('type'), t('status'), t('transaction'), t('paidAmount')]}
      rows=${d.anomalies.map((a) => [
        html`<a href=${`#/anomalies/${a.id}`}>${a.id}</a>`,
        a.type,
        html`<${Status} value=${a.status} />`,
        a.transactionId,
        html`<${Money} minor=${a.paidAmount} currency=${a.currency} />`,
      ])}
    />
    <${Table}
      caption=${t('channelCalls')}
      head=${[t('request'), t('channel'), t('outcome'), t('transaction'), t('detail'), t('at')]}
      rows=${d.channelCalls.map((c) => [
        c.request,
        c.channel,
        html`<${Status} value=${c.outcome} />`,
        c.transactionId ?? '—',
        c.detail ?? '',
        html`<${Time} iso=${c.at} />`,
      ])}
    />`;
}

interface Delivery {
  headers: Record<string, string>;
  rawBody: string | null;
  rawBodyBase64?: string | null;
  rawPrunedAt: string | null;
  /** The server can open an encrypted part of it (WeChat Pay APIv3's resource). */
  encryptedContent: boolean;
}

/** The exact bytes received, on demand: as text, and as base64 for what is not UTF-8; WeChat Pay's resource decrypted. */
function RawBytes({ id }: { id: string }) {
  const [open, setOpen] = useState(false);
  const delivery = useGet<Delivery>(open ? `/admin/deliveries/${id}` : null);
  if (!open)
    return html`<button type="button" class="link" onClick=${() => setOpen(true)} aria-label=${`${t('raw')} #${id}`}>
      ${t('raw')}
    </button>`;
  return html`<div class="raw">
    <button type="button" class="link" onClick=${() => setOpen(false)}>${t('hideRaw')}</button>
    <${Show} loaded=${delivery}>
      ${(v: Delivery) =>
        html`<h4>${t('headers')}</h4>
          <pre tabindex="0">
${Object.entries(v.headers)
              .map(([k, val]) => `${k}: ${val}`)
              .join('\n')}</pre>
          ${
            v.rawPrunedAt
              ? html`<p>${t('pruned')} <${Time} iso=${v.rawPrunedAt} /></p>`
              : html`<h4>${t('body')}</h4>
                  <pre tabindex="0">${v.rawBody}</pre>
                  ${
                    v.rawBodyBase64
                      ? html`<details>
                          <summary>${t('bodyBase64')}</summary>
                          <pre tabindex="0">${v.rawBodyBase64}</pre>
                        </details>`
                      : null
                  }
                  ${v.encryptedContent ? html`<${Decrypted} id=${id} />` : null}`
          }`}
    <//>
  </div>`;
}

interface DecryptedContent {
  masked: boolean;
  content: Record<string, unknown>;
}

/** The encrypted resource opened by the server: exact for an admin (audited), the payer masked for a viewer. */
function Decrypted({ id }: { id: string }) {
  const admin = canAct(useOperator());
  const [open, setOpen] = useState(false);
  const content = useGet<DecryptedContent>(open ? `/admin/deliveries/${id}/decrypted` : null);
  return html`<details onToggle=${(e: Event) => setOpen((e.target as HTMLDetailsElement).open)}>
    <summary>${t('decrypted')}</summary>
    <p class="note">${admin ? t('decryptedAudited') : t('decryptedMasked')}</p>
    ${
      open
        ? html`<${Show} loaded=${content}>
            ${(c: DecryptedContent) => html`<pre tabindex="0" data-testid="decrypted">${JSON.stringify(c.content, null, 2)}</pre>`}
          <//>`
        : null
    }
  </details>`;
}
