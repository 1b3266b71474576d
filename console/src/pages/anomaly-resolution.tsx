import { useState } from 'react';
import { Button, Descriptions, Form, Input, Select, Space } from 'antd';
import { ApiError, post } from '../api';
import { codeLabel } from '../catalogue';
import { lang, t } from '../i18n';
import { canAct, Code, DataTable, Problem, Show, Status, Time, useGet, useOperator, ViewerNote } from '../ui';
import { useVocabulary } from '../vocabulary';

export interface Resolution {
  status: 'AWAITING_APPROVAL' | 'APPLIED';
  reason: string;
  reference: string | null;
  note: string;
  requestedBy: string;
  requestedAt: string;
  reviewedBy: string | null;
  reviewedAt: string | null;
}

interface Resolvable {
  id: string;
  status: string;
  resolution?: Resolution | null;
}

interface Decision {
  id: string;
  operatorId: string;
  action: string;
  createdAt: string;
}

/**
 * Closing an anomaly without a refund: the form while it is OPEN without a resolution, then the
 * resolution itself, with Approve and Reject for a second admin while it awaits approval.
 */
export function ResolutionSection({ anomaly, onDone }: { anomaly: Resolvable; onDone: () => void }) {
  const resolution = anomaly.resolution ?? null;
  if (resolution) return <ResolutionFacts anomaly={anomaly} resolution={resolution} onDone={onDone} />;
  if (anomaly.status !== 'OPEN') return null;
  return <ResolveForm anomaly={anomaly} onDone={onDone} />;
}

function ResolveForm({ anomaly, onDone }: { anomaly: Resolvable; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const reasons = useVocabulary().data?.resolutionReasons ?? [];
  const [reason, setReason] = useState('ACCEPTED_AS_PAID');
  const [reference, setReference] = useState('');
  const [note, setNote] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    if (!note.trim()) return setProblem(t('noteRequired'));
    setProblem(null);
    setBusy(true);
    try {
      const body = { reason, note: note.trim(), ...(reference.trim() ? { reference: reference.trim() } : {}) };
      await post(`/admin/anomalies/${encodeURIComponent(anomaly.id)}/resolve`, body);
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card action" aria-labelledby="resolve-form">
      <h2 id="resolve-form">{t('closeWithoutRefund')}</h2>
      <Form layout="vertical" onFinish={() => void submit()} className="narrow">
        <Form.Item label={t('closedAs')} htmlFor="resolve-why">
          <Select
            id="resolve-why"
            value={reason}
            disabled={disabled}
            onChange={setReason}
            options={reasons.map((r) => ({ value: r, label: codeLabel(r, lang()) }))}
          />
        </Form.Item>
        <Form.Item label={t('reference')} htmlFor="resolve-reference" extra={t('referenceHelp')}>
          <Input
            id="resolve-reference"
            autoComplete="off"
            maxLength={64}
            value={reference}
            disabled={disabled}
            onChange={(e) => setReference(e.target.value)}
          />
        </Form.Item>
        <Form.Item label={t('note')} htmlFor="resolve-note">
          <Input.TextArea
            id="resolve-note"
            maxLength={256}
            disabled={disabled}
            value={note}
            onChange={(e) => setNote(e.target.value)}
          />
        </Form.Item>
        <Problem text={problem} />
        <Button type="primary" htmlType="submit" disabled={disabled || busy}>
          {t('resolve')}
        </Button>
      </Form>
    </section>
  );
}

function ResolutionFacts({
  anomaly,
  resolution,
  onDone,
}: {
  anomaly: Resolvable;
  resolution: Resolution;
  onDone: () => void;
}) {
  const disabled = !canAct(useOperator());
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const decide = async (verb: 'approve' | 'reject') => {
    setBusy(true);
    setProblem(null);
    try {
      const body = verb === 'reject' ? { reason: 'rejected in the console' } : {};
      await post(`/admin/anomalies/${encodeURIComponent(anomaly.id)}/resolution/${verb}`, body);
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  const awaiting = resolution.status === 'AWAITING_APPROVAL';
  return (
    <section className="card action" aria-labelledby="resolution">
      <h2 id="resolution">{t('resolution')}</h2>
      <Descriptions
        className="facts"
        size="small"
        bordered
        column={2}
        items={[
          { label: t('status'), children: <Status value={resolution.status} /> },
          {
            label: t('closedAs'),
            children: (
              <>
                <Code value={resolution.reason} />
                {resolution.reference ? ` (${resolution.reference})` : ''}
              </>
            ),
          },
          { label: t('note'), children: resolution.note },
          {
            label: t('requestedBy'),
            children: (
              <>
                {resolution.requestedBy}, <Time iso={resolution.requestedAt} />
              </>
            ),
          },
          ...(resolution.reviewedBy
            ? [
                {
                  label: t('reviewedBy'),
                  children: (
                    <>
                      {resolution.reviewedBy}, <Time iso={resolution.reviewedAt} />
                    </>
                  ),
                },
              ]
            : []),
        ]}
      />
      {awaiting ? (
        <>
          <ViewerNote />
          <p>{t('awaitingSecond')}</p>
          <Space>
            <Button type="primary" disabled={disabled || busy} onClick={() => void decide('approve')}>
              {t('approveResolution')}
            </Button>
            <Button disabled={disabled || busy} onClick={() => void decide('reject')}>
              {t('rejectResolution')}
            </Button>
          </Space>
        </>
      ) : null}
      <Problem text={problem} />
    </section>
  );
}

/**
 * Every decision on the anomaly, from the audit log: its resolution's and its refunds'. Without the
 * refund numbers: the refunds' own table beside it names them.
 */
export function AnomalyHistory({ id, round }: { id: string; round: string }) {
  const history = useGet<{ items: Decision[] }>(`/admin/anomalies/${encodeURIComponent(id)}/history?at=${round}`);
  return (
    <Show loaded={history}>
      {(h) => (
        <DataTable<Decision>
          caption={t('decisions')}
          rowKey={(d) => d.id}
          rows={h.items}
          columns={[
            { title: t('at'), width: 220, render: (_, d) => <Time iso={d.createdAt} /> },
            { title: t('operator'), width: 140, render: (_, d) => d.operatorId },
            { title: t('action'), render: (_, d) => <Code value={d.action} /> },
          ]}
        />
      )}
    </Show>
  );
}
