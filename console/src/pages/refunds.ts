import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
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
  /** What its payment's refunds add up to with it (GET /admin/refunds): what the threshold is weighed against. */
  transactionRefundTotal?: number;
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
  // Read once for the whole queue: the threshold each confirmation states (undefined until read).
  const vocabulary = useVocabulary().data;
  const threshold = vocabulary ? vocabulary.refundApprovalThreshold : undefined;
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
          rows=${page.items.map((r) => [
            ...refundRow(r),
            html`<${Decide} refund=${r} threshold=${threshold} onDone=${reload} />`,
          ])}
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

function Decide({
  refund,
  threshold,
  onDone,
}: {
  refund: Refund;
  threshold: number | null | undefined;
  onDone: () => void;
}) {
  const disabled = !canAct(useOperator());
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
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
    <button type="button" disabled=${disabled || threshold === undefined} onClick=${() => setConfirming(true)}>
      ${t('approve')}
    </button>
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
    ${
      confirming && threshold !== undefined
        ? html`<${ConfirmApproval}
            refund=${refund}
            threshold=${threshold}
            onConfirm=${() => {
              setConfirming(false);
              void act('approve');
            }}
            onCancel=${() => setConfirming(false)}
          />`
        : null
    }
  </div>`;
}

/**
 * Before an approval: what goes back (amount, formatted from minor units), the approval threshold,
 * and the payment's refunds with it. A modal <dialog>: focus moves into it, Escape cancels, and
 * Cancel is focused first, so that Enter alone never approves.
 */
function ConfirmApproval({
  refund,
  threshold,
  onConfirm,
  onCancel,
}: {
  refund: Refund;
  threshold: number | null;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    element.showModal();
    return () => element.close();
  }, []);
  const title = `confirm-${refund.refundNo}`;
  return html`<dialog
    ref=${dialog}
    class="confirm"
    aria-labelledby=${title}
    onCancel=${(e: Event) => {
      e.preventDefault();
      onCancel();
    }}
  >
    <h2 id=${title}>${t('confirmApproval')}</h2>
    <dl>
      <dt>${t('refundNo')}</dt>
      <dd>${refund.refundNo}</dd>
      <dt>${t('amount')}</dt>
      <dd data-testid="confirm-amount"><${Money} minor=${refund.amount} currency=${refund.currency} /></dd>
      <dt>${t('approvalThreshold')}</dt>
      <dd data-testid="confirm-threshold">
        ${threshold === null ? '—' : html`<${Money} minor=${threshold} currency=${refund.currency} />`}
      </dd>
      ${
        refund.transactionRefundTotal === undefined
          ? null
          : html`<dt>${t('paymentRefundTotal')}</dt>
              <dd><${Money} minor=${refund.transactionRefundTotal} currency=${refund.currency} /></dd>`
      }
      <dt>${t('requestedBy')}</dt>
      <dd>${refund.requestedBy}</dd>
    </dl>
    <p>${t('confirmApprovalText')}</p>
    <div class="decide">
      <button type="button" class="secondary" autofocus onClick=${onCancel}>${t('cancel')}</button>
      <button type="button" onClick=${onConfirm}>${t('approve')}</button>
    </div>
  </dialog>`;
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
