import { useState } from 'react';
import { ApiError, post } from '../api';
import { t } from '../i18n';
import {
  actionsColumn,
  canAct,
  Code,
  DataTable,
  Id,
  OrderLink,
  Problem,
  RowButton,
  Show,
  Time,
  useGet,
  useOperator,
  ViewerNote,
} from '../ui';

interface DeadLetter {
  stage: string;
  eventId: string;
  type: string;
  orderNo: string;
  attempts: number;
  lastError: string | null;
  deadLetteredAt: string;
}

export function DeadLettersPage() {
  const list = useGet<{ items: DeadLetter[] }>('/admin/dead-letters');
  const disabled = !canAct(useOperator());
  const [problem, setProblem] = useState<string | null>(null);
  const replay = async (eventId: string) => {
    setProblem(null);
    try {
      await post(`/admin/dead-letters/${encodeURIComponent(eventId)}/replay`);
      list.reload();
    } catch (error) {
      setProblem(`${eventId}: ${(error as ApiError).message}`);
    }
  };
  return (
    <>
      <h1>{t('deadLetters')}</h1>
      <ViewerNote />
      <Problem text={problem} />
      <Show loaded={list}>
        {(l) => (
          <DataTable<DeadLetter>
            caption={t('deadLetters')}
            rowKey={(d) => `${d.stage}-${d.eventId}`}
            rows={l.items}
            columns={[
              { title: t('stage'), width: 110, render: (_, d) => d.stage },
              { title: t('eventId'), render: (_, d) => <Id value={d.eventId} /> },
              { title: t('type'), width: 150, render: (_, d) => <Code value={d.type} /> },
              { title: t('order'), render: (_, d) => <OrderLink orderNo={d.orderNo} /> },
              { title: t('attempts'), width: 80, render: (_, d) => d.attempts },
              { title: t('lastError'), ellipsis: true, render: (_, d) => d.lastError ?? '' },
              { title: t('deadLetteredAt'), width: 200, render: (_, d) => <Time iso={d.deadLetteredAt} /> },
              actionsColumn<DeadLetter>(100, (d) => (
                <RowButton
                  label={t('replay')}
                  id={d.eventId}
                  disabled={disabled}
                  onClick={() => void replay(d.eventId)}
                />
              )),
            ]}
          />
        )}
      </Show>
    </>
  );
}
