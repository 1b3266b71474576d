import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, get } from '../api';
import { t } from '../i18n';
import { navigate } from '../router';
import { Money, Show, Status, Table, Time, useGet } from '../ui';
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

/** Looks the text up as an order number, then as a transaction id. */
export function OrdersPage() {
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
  return html`<h1>${t('orders')}</h1>
    <form class="filters" role="search" onSubmit=${submit}>
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
          <dd><${Time} iso=${d.order.createdAt} beijing /></dd>
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
        html`<${Time} iso=${p.firstReceivedAt} beijing />`,
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
}

/** The exact bytes received, on demand: as text, and as base64 for what is not UTF-8. */
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
                  }`
          }`}
    <//>
  </div>`;
}
