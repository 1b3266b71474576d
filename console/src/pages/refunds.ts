import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, post, query } from '../api';
import { t } from '../i18n';
import { Route } from '../router';
import { canAct, Money, OrderLink, Show, Status, Table, Time, useGet, useOperator, ViewerNote } from '../ui';
import { useVocabulary } from '../vocabulary';

export interface Refund {
  refundNo: string;
  orderNo: string;
  channel: string;
  transactionId: string;
  amount: number;
  currency: string;
  reason: string;
  status: string;
  requestedBy: string;
  reviewedBy: string | null;
  reviewedAt: string | null;
  createdAt: string;
}

export const REFUND_HEAD = () => [
  t('refundNo'),
  t('order'),
  t('transaction'),
  t('amount'),
  t('status'),
  t('reason'),
  t('requestedBy'),
  t('reviewedBy'),
  t('created'),
];

export const refundRow = (r: Refund) => [
  r.refundNo,
  html`<${OrderLink} orderNo=${r.orderNo} />`,
  `${r.channel} ${r.transactionId}`,
  html`<${Money} minor=${r.amount} currency=${r.currency} />`,
  html`<${Status} value=${r.status} />`,
  r.reason,
  r.requestedBy,
  r.reviewedBy ? html`${r.reviewedBy}<br /><small><${Time} iso=${r.reviewedAt} /></small>` : '—',
  html`<${Time} iso=${r.createdAt} />`,
];

interface RefundPage {
  items: Refund[];
  nextCursor: string | null;
}

/** The queue of refunds over the approval threshold; the server refuses the requester's own approval. */
export function ApprovalsPage() {
  const queue = useGet<RefundPage>('/admin/refunds?status=AWAITING_APPROVAL&limit=200');
  const recent = useGet<RefundPage>('/admin/refunds?limit=100');
  const reload = () => {
    queue.reload();
    recent.reload();
  };
  return html`<h1>${t('approvals')}</h1>
    <${ViewerNote} />
    <${Show} loaded=${queue}>
      ${(page: RefundPage) =>
        html`<${Table}
          caption=${t('queue')}
          head=${[...REFUND_HEAD(), t('actions')]}
          rows=${page.items.map((r) => [...refundRow(r), html`<${Decide} refund=${r} onDone=${reload} />`])}
        />`}
    <//>
    <${Show} loaded=${recent}>
      ${(page: RefundPage) =>
        html`<${Table}
          caption=${t('decided')}
          head=${REFUND_HEAD()}
          rows=${page.items.filter((r) => r.reviewedBy).map(refundRow)}
        />`}
    <//>`;
}

function Decide({ refund, onDone }: { refund: Refund; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const act = async (action: 'approve' | 'reject') => {
    if (action === 'reject' && !reason.trim()) return setProblem(t('reasonRequired'));
    setProblem(null);
    try {
      const body = action === 'reject' ? { reason: reason.trim() } : {};
      await post(`/admin/refunds/${encodeURIComponent(refund.refundNo)}/${action}`, body);
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    }
  };
  const id = `reject-${refund.refundNo}`;
  return html`<div class="decide">
    <button type="button" disabled=${disabled} onClick=${() => act('approve')}>${t('approve')}</button>
    <label for=${id}>${t('rejectReason')}</label>
    <input
      id=${id}
      value=${reason}
      disabled=${disabled}
      maxlength="256"
      onInput=${(e: Event) => setReason((e.target as HTMLInputElement).value)}
    />
    <button type="button" class="secondary" disabled=${disabled} onClick=${() => act('reject')}>${t('reject')}</button>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
  </div>`;
}

/** Every refund, filtered by status (the overview's unsettled figures link here). */
export function RefundsPage({ route }: { route: Route }) {
  const status = route.params.get('status') ?? '';
  const cursor = route.params.get('cursor') ?? '';
  const statuses = useVocabulary().data?.refundStatuses ?? [];
  const list = useGet<RefundPage>(`/admin/refunds${query({ status, cursor })}`);
  return html`<h1>${t('refunds')}</h1>
    <nav aria-label=${t('status')} class="chips">
      <a href="#/refunds" aria-current=${status === '' ? 'page' : undefined}>${t('any')}</a>
      ${statuses.map((s) => html`<a href=${`#/refunds?status=${s}`} aria-current=${s === status ? 'page' : undefined}>${s}</a>`)}
    </nav>
    <${Show} loaded=${list}>
      ${(page: RefundPage) =>
        html`<${Table} caption=${`${t('refunds')} ${status}`} head=${REFUND_HEAD()} rows=${page.items.map(refundRow)} />
          ${page.nextCursor ? html`<p><a href=${`#/refunds${query({ status, cursor: page.nextCursor })}`}>${t('next')}</a></p>` : null}`}
    <//>`;
}
