import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, post, query } from '../api';
import { formatAmount, parseAmount } from '../format';
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
  ViewerNote,
} from '../ui';
import { useVocabulary, Vocabulary } from '../vocabulary';
import { OrderDetail, OrderSections, Payment } from './orders';
import { AnomalyHistory, Resolution, ResolutionSection } from './anomaly-resolution';

export interface Anomaly {
  id: string;
  type: string;
  orderNo: string;
  transactionId: string;
  channel: string;
  orderAmount: number;
  paidAmount: number;
  currency: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  resolution?: Resolution | null;
}

/** The list, filtered by the hash's query (so a filter can be linked to from the overview). */
export function AnomaliesPage({ route }: { route: Route }) {
  const p = route.params;
  const filters = {
    type: p.get('type') ?? '',
    status: p.get('status') ?? '',
    channel: p.get('channel') ?? '',
    from: p.get('from') ?? '',
    to: p.get('to') ?? '',
    cursor: p.get('cursor') ?? '',
  };
  const dayStart = (d: string) => (d ? `${d}T00:00:00Z` : undefined);
  const vocabulary = useVocabulary();
  const list = useGet<{ items: Anomaly[]; nextCursor: string | null }>(
    `/admin/anomalies${query({ ...filters, from: dayStart(filters.from), to: dayStart(filters.to) })}`,
  );
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const read = readDays(form, ['from', 'to']);
    if ('problem' in read) return setProblem(read.problem);
    setProblem(null);
    const next: Record<string, string> = { ...read.days };
    for (const key of ['type', 'status', 'channel']) next[key] = formText(form, key);
    navigate(`#/anomalies${query(next)}`);
  };
  return html`<h1>${t('anomalies')}</h1>
    <${Show} loaded=${vocabulary}>
      ${(lists: Vocabulary) =>
        html`<form class="filters" onSubmit=${submit}>
          <${Select} id="type" label=${t('type')} value=${filters.type} options=${lists.anomalyTypes} />
          <${Select} id="status" label=${t('status')} value=${filters.status} options=${lists.anomalyStatuses} />
          <${Select} id="channel" label=${t('channel')} value=${filters.channel} options=${lists.channels} />
          <${DayField} id="from" name="from" label=${`${t('from')} (UTC)`} value=${filters.from} />
          <${DayField} id="to" name="to" label=${`${t('to')} (UTC)`} value=${filters.to} />
          <button type="submit">${t('filter')}</button>
        </form>`}
    <//>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    <${Show} loaded=${list}>
      ${(page: { items: Anomaly[]; nextCursor: string | null }) =>
        html`<${Table}
            caption=${t('anomalies')}
            head=${['#', t('type'), t('status'), t('channel'), t('order'), t('transaction'), t('paidAmount'), t('created')]}
            rows=${page.items.map((a) => [
              html`<a href=${`#/anomalies/${a.id}`}>${a.id}</a>`,
              a.type,
              html`<${Status} value=${a.status} />`,
              a.channel,
              html`<${OrderLink} orderNo=${a.orderNo} />`,
              a.transactionId,
              html`<${Money} minor=${a.paidAmount} currency=${a.currency} />`,
              html`<${Time} iso=${a.createdAt} />`,
            ])}
          />
          ${
            page.nextCursor
              ? html`<p><a href=${`#/anomalies${query({ ...filters, cursor: page.nextCursor })}`}>${t('next')}</a></p>`
              : null
          }`}
    <//>`;
}

export function AnomalyPage({ id }: { id: string }) {
  const anomaly = useGet<Anomaly>(`/admin/anomalies/${encodeURIComponent(id)}`);
  const order = useGet<OrderDetail>(anomaly.data ? `/admin/orders/${encodeURIComponent(anomaly.data.orderNo)}` : null);
  return html`<${Show} loaded=${anomaly}>
    ${(a: Anomaly) =>
      html`<h1>${t('anomaly')} ${a.id}: ${a.type}</h1>
        <dl class="facts">
          <dt>${t('status')}</dt>
          <dd><${Status} value=${a.status} /></dd>
          <dt>${t('order')}</dt>
          <dd><${OrderLink} orderNo=${a.orderNo} /></dd>
          <dt>${t('transaction')}</dt>
          <dd>${a.channel} ${a.transactionId}</dd>
          <dt>${t('orderAmount')}</dt>
          <dd><${Money} minor=${a.orderAmount} currency=${a.currency} /></dd>
          <dt>${t('paidAmount')}</dt>
          <dd><${Money} minor=${a.paidAmount} currency=${a.currency} /></dd>
          <dt>${t('created')}</dt>
          <dd><${Time} iso=${a.createdAt} /></dd>
        </dl>
        <${Show} loaded=${order}>
          ${(o: OrderDetail) =>
            html`${
                a.resolution
                  ? null
                  : html`<${RefundForm}
                      anomaly=${a}
                      payments=${o.payments}
                      onDone=${() => {
                        anomaly.reload();
                        order.reload();
                      }}
                    />`
              }
              <${ResolutionSection} anomaly=${a} onDone=${anomaly.reload} />
              <${AnomalyHistory} id=${a.id} round=${a.updatedAt} />
              <${OrderSections} detail=${o} />`}
        <//>`}
  <//>`;
}

const refundable = (p: Payment) => p.amount - p.refundReservedAmount;

/** An emergency refund of one of the order's transactions: the anomaly's by default, a reason required. */
function RefundForm({ anomaly, payments, onDone }: { anomaly: Anomaly; payments: Payment[]; onDone: () => void }) {
  const operator = useOperator();
  const disabled = !canAct(operator);
  const [transactionId, setTransactionId] = useState(anomaly.transactionId);
  const payment = payments.find((p) => p.transactionId === transactionId);
  const left = payment ? refundable(payment) : 0;
  const currency = payment?.currency ?? anomaly.currency;
  const [amount, setAmount] = useState(formatAmount(left, currency).replace(/,/g, ''));
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [result, setResult] = useState<{ refundNo: string; status: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const minor = parseAmount(amount, currency);
    if (minor === null || minor <= 0 || minor > left) return setProblem(t('badAmount'));
    if (!reason.trim()) return setProblem(t('reasonRequired'));
    setProblem(null);
    setBusy(true);
    try {
      const body = { orderNo: anomaly.orderNo, transactionId, amount: minor, reason: reason.trim() };
      setResult(await post<{ refundNo: string; status: string }>('/admin/refunds/emergency', body));
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    } finally {
      setBusy(false);
    }
  };

  return html`<section class="card action" aria-labelledby="refund-form">
    <h2 id="refund-form">${t('emergencyRefund')}</h2>
    <${ViewerNote} />
    <form onSubmit=${submit} novalidate>
      <label for="refund-transaction">${t('transaction')}</label>
      <select
        id="refund-transaction"
        value=${transactionId}
        disabled=${disabled}
        onChange=${(e: Event) => setTransactionId((e.target as HTMLSelectElement).value)}
      >
        ${payments.map((p) => html`<option value=${p.transactionId}>${p.channel} ${p.transactionId}</option>`)}
      </select>
      <p>
        ${t('refundable')}: <strong data-testid="refundable"><${Money} minor=${left} currency=${currency} /></strong>
      </p>
      <label for="refund-amount">${t('amount')} (${currency})</label>
      <input
        id="refund-amount"
        inputmode="decimal"
        autocomplete="off"
        value=${amount}
        disabled=${disabled}
        aria-describedby="refund-amount-help refund-threshold"
        onInput=${(e: Event) => setAmount((e.target as HTMLInputElement).value)}
      />
      <p id="refund-amount-help" class="help">${t('amountHelp')}</p>
      <${ThresholdNote} currency=${currency} />
      <label for="refund-reason">${t('reason')}</label>
      <textarea
        id="refund-reason"
        required
        maxlength="256"
        disabled=${disabled}
        value=${reason}
        onInput=${(e: Event) => setReason((e.target as HTMLTextAreaElement).value)}
      ></textarea>
      ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
      <button type="submit" disabled=${disabled || busy || left <= 0}>${t('refund')}</button>
    </form>
    ${
      result
        ? html`<p role="status" class="ok">
            ${t('refundRecorded')}: ${result.refundNo}
            <${Status} value=${result.status} />
            ${result.status === 'AWAITING_APPROVAL' ? ` ${t('awaitingSecond')}` : ''}
          </p>`
        : null
    }
  </section>`;
}

/** What the refund form must say: the approval threshold the server applies (GET /admin/vocabulary). */
function ThresholdNote({ currency }: { currency: string }) {
  const threshold = useVocabulary().data?.refundApprovalThreshold;
  if (threshold === undefined) return null;
  if (threshold === null)
    return html`<p class="help" id="refund-threshold" data-testid="threshold">${t('noThreshold')}</p>`;
  return html`<p class="help" id="refund-threshold" data-testid="threshold">
    ${t('thresholdHelp')} <strong><${Money} minor=${threshold} currency=${currency} /></strong>
  </p>`;
}
