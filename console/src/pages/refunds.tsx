import { useState } from 'react';
import { Button, Descriptions, Input, Modal, Space, Tag } from 'antd';
import type { TableColumnsType } from 'antd';
import { ApiError, post, query } from '../api';
import { t } from '../i18n';
import { Route } from '../router';
import {
  actionsColumn,
  canAct,
  Code,
  DataTable,
  Id,
  Money,
  NextPage,
  OrderLink,
  Problem,
  Show,
  ShowLink,
  Status,
  Time,
  useGet,
  useOperator,
  ViewerNote,
} from '../ui';
import { useVocabulary } from '../vocabulary';

export interface Refund {
  refundNo: string;
  orderNo: string;
  channel: string;
  transactionId: string;
  purpose?: string;
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

/** Who asked: an operator, or the shop itself (the order service's refund, POST /orders/:orderNo/refunds), marked as such. */
function AskedBy({ refund }: { refund: Refund }) {
  const shop = useVocabulary().data?.shopRequester;
  if (shop && refund.requestedBy === shop)
    return (
      <Tag className="shop-refund" title={refund.requestedBy}>
        {t('shopRefund')}
      </Tag>
    );
  return <span>{refund.requestedBy}</span>;
}

/** The refund columns every refund table shows; ids cut to their column with a copy button, one date column. */
export const refundColumns = (): TableColumnsType<Refund> => [
  { title: t('refundNo'), render: (_, r) => <Id value={r.refundNo} /> },
  { title: t('order'), render: (_, r) => <OrderLink orderNo={r.orderNo} /> },
  {
    title: t('transaction'),
    render: (_, r) => (
      <>
        <Code value={r.channel} /> <Id value={r.transactionId} />
      </>
    ),
  },
  { title: t('amount'), width: 120, render: (_, r) => <Money minor={r.amount} currency={r.currency} /> },
  { title: t('status'), width: 130, render: (_, r) => <Status value={r.status} /> },
  { title: t('reason'), ellipsis: true, render: (_, r) => r.reason },
  {
    title: t('requestedBy'),
    width: 110,
    render: (_, r) => <AskedBy refund={r} />,
  },
  {
    title: t('reviewedBy'),
    width: 110,
    render: (_, r) => r.reviewedBy ?? '—',
  },
  { title: t('created'), width: 200, render: (_, r) => <Time iso={r.createdAt} /> },
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
  const disabled = !canAct(useOperator());
  const [confirming, setConfirming] = useState<Refund | null>(null);
  const [rejecting, setRejecting] = useState<Refund | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const reload = () => {
    queue.reload();
    recent.reload();
  };
  const act = async (refund: Refund, action: 'approve' | 'reject', reason?: string) => {
    setProblem(null);
    try {
      await post(
        `/admin/refunds/${encodeURIComponent(refund.refundNo)}/${action}`,
        action === 'reject' ? { reason } : {},
      );
      reload();
    } catch (error) {
      setProblem(`${refund.refundNo}: ${(error as ApiError).message}`);
    }
  };
  return (
    <>
      <h1>{t('approvals')}</h1>
      <ViewerNote />
      <Problem text={problem} />
      <Show loaded={queue}>
        {(page) => (
          <DataTable<Refund>
            caption={t('queue')}
            rowKey={(r) => r.refundNo}
            rows={page.items}
            columns={[
              ...refundColumns(),
              actionsColumn<Refund>(170, (r) => (
                <Space size="small">
                  <Button
                    type="primary"
                    size="small"
                    disabled={disabled || threshold === undefined}
                    onClick={() => setConfirming(r)}
                  >
                    {t('approve')}
                  </Button>
                  <Button size="small" danger disabled={disabled} onClick={() => setRejecting(r)}>
                    {t('reject')}
                  </Button>
                </Space>
              )),
            ]}
          />
        )}
      </Show>
      <Show loaded={recent}>
        {(page) => (
          <DataTable<Refund>
            caption={t('decided')}
            rowKey={(r) => r.refundNo}
            rows={page.items.filter((r) => r.reviewedBy)}
            columns={[
              ...refundColumns(),
              { title: t('reviewedAt'), width: 200, render: (_, r) => <Time iso={r.reviewedAt} /> },
            ]}
          />
        )}
      </Show>
      {confirming && threshold !== undefined ? (
        <ConfirmApproval
          refund={confirming}
          threshold={threshold}
          onConfirm={() => {
            setConfirming(null);
            void act(confirming, 'approve');
          }}
          onCancel={() => setConfirming(null)}
        />
      ) : null}
      {rejecting ? (
        <RejectDialog
          refund={rejecting}
          onReject={(reason) => {
            setRejecting(null);
            void act(rejecting, 'reject', reason);
          }}
          onCancel={() => setRejecting(null)}
        />
      ) : null}
    </>
  );
}

/**
 * Before an approval: what goes back (amount, formatted from minor units), the approval threshold,
 * and the payment's refunds with it. A modal dialog: Escape cancels, and Cancel is focused first,
 * so that Enter alone never approves.
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
  return (
    <Modal
      open
      title={t('confirmApproval')}
      onCancel={onCancel}
      scrollLock={false}
      footer={
        <Space>
          <Button autoFocus onClick={onCancel}>
            {t('cancel')}
          </Button>
          <Button type="primary" onClick={onConfirm}>
            {t('approve')}
          </Button>
        </Space>
      }
    >
      <Descriptions
        column={1}
        size="small"
        bordered
        items={[
          { label: t('refundNo'), children: refund.refundNo },
          {
            label: t('amount'),
            children: (
              <span data-testid="confirm-amount">
                <Money minor={refund.amount} currency={refund.currency} />
              </span>
            ),
          },
          {
            label: t('approvalThreshold'),
            children: (
              <span data-testid="confirm-threshold">
                {threshold === null ? '—' : <Money minor={threshold} currency={refund.currency} />}
              </span>
            ),
          },
          ...(refund.transactionRefundTotal === undefined
            ? []
            : [
                {
                  label: t('paymentRefundTotal'),
                  children: <Money minor={refund.transactionRefundTotal} currency={refund.currency} />,
                },
              ]),
          { label: t('requestedBy'), children: refund.requestedBy },
        ]}
      />
      <p>{t('confirmApprovalText')}</p>
    </Modal>
  );
}

/** Rejecting asks why (required): the reason goes to the refund and its audit row. */
function RejectDialog({
  refund,
  onReject,
  onCancel,
}: {
  refund: Refund;
  onReject: (reason: string) => void;
  onCancel: () => void;
}) {
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <Modal
      open
      title={`${t('reject')} ${refund.refundNo}`}
      onCancel={onCancel}
      scrollLock={false}
      footer={
        <Space>
          <Button autoFocus onClick={onCancel}>
            {t('cancel')}
          </Button>
          <Button
            danger
            type="primary"
            onClick={() => (reason.trim() ? onReject(reason.trim()) : setProblem(t('reasonRequired')))}
          >
            {t('reject')}
          </Button>
        </Space>
      }
    >
      <label htmlFor="reject-reason">{t('rejectReason')}</label>
      <Input id="reject-reason" value={reason} maxLength={256} onChange={(e) => setReason(e.target.value)} />
      <Problem text={problem} />
    </Modal>
  );
}

/** Every refund, filtered by status (the overview's unsettled figures link here). */
export function RefundsPage({ route }: { route: Route }) {
  const status = route.params.get('status') ?? '';
  const cursor = route.params.get('cursor') ?? '';
  const statuses = useVocabulary().data?.refundStatuses ?? [];
  const list = useGet<RefundPage>(`/admin/refunds${query({ status, cursor })}`);
  return (
    <>
      <h1>{t('refunds')}</h1>
      <nav aria-label={t('status')} className="chips">
        <a href="#/refunds" aria-current={status === '' ? 'page' : undefined}>
          {t('any')}
        </a>
        {statuses.map((s) => (
          <a key={s} href={`#/refunds?status=${s}`} aria-current={s === status ? 'page' : undefined} data-code={s}>
            <Code value={s} />
          </a>
        ))}
      </nav>
      <Show loaded={list}>
        {(page) => (
          <>
            <DataTable<Refund>
              caption={t('refunds')}
              rowKey={(r) => r.refundNo}
              rows={page.items}
              columns={[
                ...refundColumns(),
                actionsColumn<Refund>(80, (r) => (
                  <ShowLink href={`#/orders/${encodeURIComponent(r.orderNo)}`} id={r.orderNo} />
                )),
              ]}
            />
            <NextPage href={page.nextCursor && `#/refunds${query({ status, cursor: page.nextCursor })}`} />
          </>
        )}
      </Show>
    </>
  );
}
