import { useState } from 'react';
import { Button, DatePicker, Form, Input, Modal, Select, Space, Typography } from 'antd';
import type { Dayjs } from 'dayjs';
import { ApiError, patch, post } from '../api';
import { codeLabel } from '../catalogue';
import { lang, t } from '../i18n';
import {
  actionsColumn,
  canAct,
  Code,
  DataTable,
  dayFormat,
  Id,
  OrderLink,
  Problem,
  RowButton,
  Said,
  Show,
  Status,
  Time,
  useGet,
  useOperator,
  ViewerNote,
} from '../ui';
import { useVocabulary } from '../vocabulary';

interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  eventTypes: string[] | null;
  enabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
}

interface Attempt {
  id: string;
  eventId: string;
  eventType: string;
  orderNo: string;
  attempt: number;
  startedAt: string;
  latencyMs: number;
  statusCode: number | null;
  status: string;
  error: string | null;
  responseBody: string | null;
  deliveryStatus: string;
}

const endpointPath = (id: string) => `/admin/webhook-endpoints/${encodeURIComponent(id)}`;

/** The endpoints (never their secrets), with what an admin does to them: add, edit, disable or enable, rotate the secret. */
export function WebhooksPage() {
  const list = useGet<Endpoint[]>('/admin/webhook-endpoints');
  const disabled = !canAct(useOperator());
  const [editing, setEditing] = useState<Endpoint | 'new' | null>(null);
  const [secret, setSecret] = useState<{ id: string; secret: string } | null>(null);
  const [rotating, setRotating] = useState<Endpoint | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const toggle = async (endpoint: Endpoint) => {
    setProblem(null);
    try {
      await patch(endpointPath(endpoint.id), { enabled: !endpoint.enabled });
      list.reload();
    } catch (error) {
      setProblem((error as ApiError).message);
    }
  };
  const rotate = async (endpoint: Endpoint) => {
    setRotating(null);
    setProblem(null);
    try {
      const rotated = await post<{ id: string; secret: string }>(`${endpointPath(endpoint.id)}/rotate-secret`);
      setSecret({ id: rotated.id, secret: rotated.secret });
    } catch (error) {
      setProblem((error as ApiError).message);
    }
  };
  return (
    <>
      <h1>{t('webhooks')}</h1>
      <ViewerNote />
      <Space className="actions-bar">
        <Button type="primary" disabled={disabled} onClick={() => setEditing('new')}>
          {t('addEndpoint')}
        </Button>
      </Space>
      <Problem text={problem} />
      <Show loaded={list}>
        {(endpoints) => (
          <DataTable<Endpoint>
            caption={t('endpoints')}
            rowKey={(e) => e.id}
            rows={endpoints}
            columns={[
              {
                title: t('endpoint'),
                width: 160,
                render: (_, e) => (
                  <a href={`#/webhooks/${e.id}`}>
                    {e.id}
                    {e.description ? ` · ${e.description}` : ''}
                  </a>
                ),
              },
              { title: t('url'), render: (_, e) => <Id value={e.url} /> },
              {
                title: t('eventTypes'),
                width: 170,
                render: (_, e) =>
                  e.eventTypes ? (
                    <span>
                      {e.eventTypes.map((type, i) => (
                        <span key={type}>
                          {i > 0 ? ', ' : ''}
                          <Code value={type} />
                        </span>
                      ))}
                    </span>
                  ) : (
                    t('allTypes')
                  ),
              },
              {
                title: t('status'),
                width: 170,
                render: (_, e) => (
                  <>
                    {e.enabled ? t('enabled') : t('disabled')}
                    {e.disabledReason ? (
                      <Typography.Text type="secondary" ellipsis={{ tooltip: e.disabledReason }} className="block">
                        {e.disabledReason}
                      </Typography.Text>
                    ) : null}
                  </>
                ),
              },
              actionsColumn<Endpoint>(280, (e) => (
                <Space size={4} wrap={false}>
                  <RowButton label={t('edit')} id={e.id} disabled={disabled} onClick={() => setEditing(e)} />
                  <RowButton
                    label={e.enabled ? t('disable') : t('enable')}
                    id={e.id}
                    disabled={disabled}
                    onClick={() => void toggle(e)}
                  />
                  <RowButton label={t('rotateSecret')} id={e.id} disabled={disabled} onClick={() => setRotating(e)} />
                </Space>
              )),
            ]}
          />
        )}
      </Show>
      {editing ? (
        <EndpointForm
          endpoint={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={(created) => {
            setEditing(null);
            if (created) setSecret(created);
            list.reload();
          }}
        />
      ) : null}
      {rotating ? (
        <Modal
          open
          title={t('rotateSecret')}
          onCancel={() => setRotating(null)}
          scrollLock={false}
          footer={
            <Space>
              <Button autoFocus onClick={() => setRotating(null)}>
                {t('cancel')}
              </Button>
              <Button type="primary" onClick={() => void rotate(rotating)}>
                {t('rotateSecret')}
              </Button>
            </Space>
          }
        >
          <p>{t('rotateHelp')}</p>
        </Modal>
      ) : null}
      {secret ? (
        <Modal
          open
          title={t('secretOnce')}
          onCancel={() => setSecret(null)}
          scrollLock={false}
          footer={
            <Button type="primary" onClick={() => setSecret(null)}>
              {t('secretStored')}
            </Button>
          }
        >
          <p>{t('secretOnceHelp')}</p>
          <Typography.Paragraph copyable={{ text: secret.secret }} code data-testid="secret">
            {secret.secret}
          </Typography.Paragraph>
        </Modal>
      ) : null}
    </>
  );
}

/** Add an endpoint (its secret answered once), or change one's description and event types. */
function EndpointForm({
  endpoint,
  onClose,
  onSaved,
}: {
  endpoint: Endpoint | null;
  onClose: () => void;
  onSaved: (created: { id: string; secret: string } | null) => void;
}) {
  const eventTypes = useVocabulary().data?.eventTypes ?? [];
  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const [types, setTypes] = useState<string[]>(endpoint?.eventTypes ?? []);
  const [problem, setProblem] = useState<string | null>(null);
  const save = async () => {
    setProblem(null);
    try {
      if (endpoint) {
        await patch(endpointPath(endpoint.id), { description, eventTypes: types.length ? types : null });
        onSaved(null);
      } else {
        const created = await post<{ id: string; secret: string }>('/admin/webhook-endpoints', {
          url: url.trim(),
          ...(description.trim() ? { description: description.trim() } : {}),
          ...(types.length ? { eventTypes: types } : {}),
        });
        onSaved({ id: created.id, secret: created.secret });
      }
    } catch (error) {
      setProblem((error as ApiError).message);
    }
  };
  return (
    <Modal
      open
      title={endpoint ? `${t('edit')} ${endpoint.id}` : t('addEndpoint')}
      onCancel={onClose}
      scrollLock={false}
      footer={
        <Space>
          <Button onClick={onClose}>{t('cancel')}</Button>
          <Button type="primary" onClick={() => void save()}>
            {t('save')}
          </Button>
        </Space>
      }
    >
      <Form layout="vertical">
        <Form.Item label={t('url')} htmlFor="endpoint-url">
          <Input
            id="endpoint-url"
            value={url}
            disabled={endpoint !== null}
            placeholder="https://shop.example.com/webhooks/payments"
            onChange={(e) => setUrl(e.target.value)}
          />
        </Form.Item>
        <Form.Item label={t('description')} htmlFor="endpoint-description">
          <Input
            id="endpoint-description"
            value={description}
            maxLength={255}
            onChange={(e) => setDescription(e.target.value)}
          />
        </Form.Item>
        <Form.Item label={t('eventTypes')} htmlFor="endpoint-types" extra={t('eventTypesHelp')}>
          <Select
            id="endpoint-types"
            mode="multiple"
            value={types}
            onChange={setTypes}
            options={eventTypes.map((type) => ({ value: type, label: codeLabel(type, lang()) }))}
          />
        </Form.Item>
      </Form>
      <Problem text={problem} />
    </Modal>
  );
}

export function WebhookEndpointPage({ id }: { id: string }) {
  const attempts = useGet<{ items: Attempt[] }>(`${endpointPath(id)}/attempts?limit=100`);
  const disabled = !canAct(useOperator());
  const [said, setSaid] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const resend = async (eventId: string) => {
    setSaid(null);
    setProblem(null);
    try {
      await post(`${endpointPath(id)}/resend`, { eventId });
      setSaid(`${t('queued')}: ${eventId}`);
      attempts.reload();
    } catch (error) {
      setProblem((error as ApiError).message);
    }
  };
  return (
    <>
      <h1>
        {t('endpoint')} {id}
      </h1>
      <ViewerNote />
      <Recover id={id} onDone={attempts.reload} />
      {said ? <Said>{said}</Said> : null}
      <Problem text={problem} />
      <Show loaded={attempts}>
        {(page) => (
          <DataTable<Attempt>
            caption={t('webhookAttempts')}
            rowKey={(a) => a.id}
            rows={page.items}
            columns={[
              { title: t('eventId'), render: (_, a) => <Id value={a.eventId} /> },
              { title: t('event'), width: 130, render: (_, a) => <Code value={a.eventType} /> },
              { title: t('order'), render: (_, a) => <OrderLink orderNo={a.orderNo} /> },
              { title: t('attempt'), width: 70, render: (_, a) => a.attempt },
              { title: t('startedAt'), width: 200, render: (_, a) => <Time iso={a.startedAt} /> },
              {
                title: t('answer'),
                width: 200,
                render: (_, a) => (
                  <>
                    <Status value={a.status} /> {a.statusCode ?? '—'} · {a.latencyMs} ms
                    {a.error || a.responseBody ? (
                      <Typography.Text
                        type="secondary"
                        className="block"
                        ellipsis={{ tooltip: a.responseBody ?? a.error }}
                      >
                        {a.responseBody ?? a.error}
                      </Typography.Text>
                    ) : null}
                  </>
                ),
              },
              { title: t('status'), width: 110, render: (_, a) => <Status value={a.deliveryStatus} /> },
              actionsColumn<Attempt>(100, (a) => (
                <RowButton
                  label={t('resend')}
                  id={a.eventId}
                  disabled={disabled}
                  onClick={() => void resend(a.eventId)}
                />
              )),
            ]}
          />
        )}
      </Show>
    </>
  );
}

/** Send again every message that failed since a moment, picked in the console's language and the operator's zone. */
function Recover({ id, onDone }: { id: string; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [since, setSince] = useState<Dayjs | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setSaid(null);
    setProblem(null);
    if (!since) return setProblem(t('recoverSinceRequired'));
    try {
      const answer = await post<{ queued: number }>(`${endpointPath(id)}/recover`, { since: since.toISOString() });
      setSaid(`${t('queued')}: ${answer.queued}`);
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    }
  };
  return (
    <form className="filters" onSubmit={(e) => void submit(e)}>
      <span className="field">
        <label htmlFor="recover-since">{t('recoverSince')}</label>
        <DatePicker
          id="recover-since"
          showTime={{ format: 'HH:mm' }}
          needConfirm={false}
          format={`${dayFormat()} HH:mm`}
          value={since}
          disabled={disabled}
          onChange={setSince}
        />
      </span>
      <Button type="primary" htmlType="submit" disabled={disabled}>
        {t('recover')}
      </Button>
      {said ? <Said>{said}</Said> : null}
      <Problem text={problem} />
    </form>
  );
}
