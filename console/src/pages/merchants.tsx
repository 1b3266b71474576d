import { useState } from 'react';
import { Button, DatePicker, Descriptions, Form, Input, InputNumber, Modal, Select, Space, Tag } from 'antd';
import type { Dayjs } from 'dayjs';
import { ApiError, post, put, query } from '../api';
import { codeLabel, hasLabel } from '../catalogue';
import { Key, lang, t } from '../i18n';
import { Route } from '../router';
import {
  actionsColumn,
  canAct,
  Code,
  DataTable,
  dayFormat,
  Id,
  NextPage,
  Problem,
  RowButton,
  Said,
  Show,
  Time,
  useGet,
  useOperator,
  ViewerNote,
} from '../ui';
import { useVocabulary } from '../vocabulary';

interface SubMerchant {
  subMerchantId: string;
  subAppId?: string;
  source: 'configuration' | 'directory';
  disabled: boolean;
}

interface Account {
  channel: string;
  account: string;
  /** Where the account comes from: the configuration, or added through the directory (its public facts only). */
  source?: 'configuration' | 'directory';
  /** An account of the directory: its public facts (ids, app ids, fingerprints), never a secret. */
  facts?: AccountFacts;
  disabled: boolean;
  subMerchants: SubMerchant[];
}

/** What the directory keeps in the clear of an account it added: its options by name, the public ones' values. */
interface AccountFacts {
  options: string[];
  public: Record<string, unknown>;
}

/**
 * A row of the directory's history, or a proposal waiting. Its `action` is a code the catalogue
 * labels; a kind of change this console does not know yet (a new proposal) still shows, by its code,
 * with whatever other fields the server answers.
 */
interface Change {
  id: string;
  channel: string;
  accountId: string;
  subMerchantId: string;
  action: string;
  subAppId?: string | null;
  decidesChangeId?: string | null;
  operatorId: string;
  reason?: string | null;
  createdAt: string;
  [field: string]: unknown;
}

/** A platform key or certificate an approved activation put in force: public material, listed without its PEM. */
interface PlatformKey {
  channel: string;
  account: string;
  kind: string;
  fingerprint: string;
  keyId: string | null;
  changeId: string;
  activatedAt: string;
  /** Until then the key before it verifies beside it. */
  overlapUntil: string;
}

interface Directory {
  version: string;
  applyWithinMs: number;
  accounts: Account[];
  pending: Change[];
  platformKeys?: PlatformKey[];
}

interface DryRunReport {
  channel: string;
  account: string;
  kind: string;
  candidateFingerprint: string;
  since: string;
  examined: number;
  currentOnly: number;
  candidateOnly: number;
  both: number;
  neither: number;
}

/** One row of the accounts table: an account, or one of its sub-merchants under it. */
interface Row {
  key: string;
  channel: string;
  account: string;
  sub: SubMerchant | null;
  /** The account's source (an account row), or the sub-merchant's. */
  source: 'configuration' | 'directory';
  disabled: boolean;
  /** A service provider's account: one configured with sub-merchants, the only kind that takes more. */
  provider: boolean;
  /** An account row of the directory: its public facts, to prefill a change of its keys. */
  facts?: AccountFacts;
}

const HISTORY_PAGE = 100;
const KEY_KINDS = ['publicKey', 'platformCert', 'publicCert'];
/** The overlap an activation proposes unless the operator changes it, and the most the server takes (7 days). */
const DEFAULT_OVERLAP_HOURS = 24;
const MAX_OVERLAP_HOURS = 168;
/** Fields every change has, shown in their own columns; any other is a detail of its kind. */
const KNOWN_FIELDS = new Set([
  'id',
  'channel',
  'accountId',
  'subMerchantId',
  'action',
  'subAppId',
  'decidesChangeId',
  'operatorId',
  'reason',
  'createdAt',
  // An account's change: its facts are listed with the account; the sealed secret is named by id only.
  'accountFacts',
  'secretId',
]);
/** Never shown, whatever a new kind of change answers: secrets, and a candidate key's PEM (public, but no detail). */
const SECRET_FIELD = /secret|private|password|passphrase|apiv[23]key|pem$/i;

const accountPath = (channel: string, account: string) =>
  `/admin/merchants/${encodeURIComponent(channel)}/${encodeURIComponent(account)}`;
const targetName = (channel: string, account: string, sub?: string | null) =>
  `${codeLabel(channel, lang())} ${account}${sub ? ` / ${sub}` : ''}`;

function rowsOf(accounts: Account[]): Row[] {
  return accounts.flatMap((a) => [
    {
      key: `${a.channel}:${a.account}`,
      channel: a.channel,
      account: a.account,
      sub: null,
      source: a.source ?? 'configuration',
      disabled: a.disabled,
      provider: a.subMerchants.length > 0,
      facts: a.facts,
    },
    ...a.subMerchants.map((s) => ({
      key: `${a.channel}:${a.account}:${s.subMerchantId}`,
      channel: a.channel,
      account: a.account,
      sub: s,
      source: s.source,
      disabled: s.disabled,
      provider: false,
    })),
  ]);
}

/** A change's kind by its label; one the catalogue does not know (yet) by its code. */
export function ChangeKind({ action }: { action: string }) {
  if (hasLabel(action)) return <Code value={action} />;
  return (
    <span className="code" title={action} data-code={action}>
      {t('otherChange')}: {action}
    </span>
  );
}

/** What a change of a kind carries beyond the common fields (a new proposal's key, its window), never a secret. */
function ChangeDetails({ change }: { change: Change }) {
  const details = Object.entries(change).filter(
    ([field, value]) =>
      !KNOWN_FIELDS.has(field) && !SECRET_FIELD.test(field) && value !== null && value !== undefined && value !== '',
  );
  const shown = [
    ...(change.subAppId ? [[t('subAppId'), change.subAppId] as const] : []),
    ...(change.decidesChangeId ? [[t('decides'), `#${change.decidesChangeId}`] as const] : []),
    ...details,
  ];
  if (shown.length === 0) return <span>—</span>;
  return (
    <span className="details">
      {shown.map(([field, value], i) => (
        <span key={field}>
          {i > 0 ? '; ' : ''}
          {field}: {typeof value === 'string' ? value : JSON.stringify(value)}
        </span>
      ))}
    </span>
  );
}

const targetColumn = (c: Change) => (
  <>
    <Code value={c.channel} /> <Id value={c.subMerchantId ? `${c.accountId} / ${c.subMerchantId}` : c.accountId} />
  </>
);

/**
 * The merchant directory: every account of every channel with its sub-merchants, the proposals
 * waiting for a second admin, the history, and a platform key's dry run. Admins change it; a viewer
 * sees the same page with every control disabled. Keys and secrets are never shown: the API
 * answers none.
 */
export function MerchantsPage({ route }: { route: Route }) {
  const before = route.params.get('before') ?? '';
  const directory = useGet<Directory>('/admin/merchants');
  const history = useGet<Change[]>(`/admin/merchant-changes${query({ before })}`);
  const disabled = !canAct(useOperator());
  const [said, setSaid] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [adding, setAdding] = useState<Row | null>(null);
  const [disabling, setDisabling] = useState<Row | null>(null);
  const [approving, setApproving] = useState<Change | null>(null);
  const [rejecting, setRejecting] = useState<Change | null>(null);
  /** The account form open: adding one (null), or proposing a change of a directory account's keys. */
  const [accountForm, setAccountForm] = useState<{ changing: Row | null } | null>(null);

  /**
   * Read again now, and again while every replica (this one too) applies the change: the listing is
   * the directory this replica holds, which takes a change within applyWithinMs of its commit.
   */
  const reload = () => {
    const within = directory.data?.applyWithinMs ?? 1000;
    for (const after of [0, within / 2, within + 300, 2 * within + 500, 5 * within])
      setTimeout(() => {
        directory.reload();
        history.reload();
      }, after);
  };
  const act = async (what: string, call: () => Promise<unknown>, done: string): Promise<boolean> => {
    setSaid(null);
    setProblem(null);
    try {
      await call();
      setSaid(`${done}: ${what}`);
      reload();
      return true;
    } catch (error) {
      setProblem(`${what}: ${(error as ApiError).message}`);
      return false;
    }
  };
  const enable = (row: Row) =>
    void act(
      targetName(row.channel, row.account, row.sub?.subMerchantId),
      () =>
        post(
          `${accountPath(row.channel, row.account)}/enable`,
          row.sub ? { subMerchantId: row.sub.subMerchantId } : {},
        ),
      t('enabledAgain'),
    );

  return (
    <>
      <h1>{t('merchants')}</h1>
      <ViewerNote />
      {said ? <Said>{said}</Said> : null}
      <Problem text={problem} />
      <Show loaded={directory}>
        {(d) => (
          <>
            <p className="help">
              {t('merchantApplyNote')} {d.applyWithinMs} ms · {t('merchantVersion')} {d.version}
            </p>
            <p>
              <Button disabled={disabled} onClick={() => setAccountForm({ changing: null })}>
                {t('addAccount')}
              </Button>
            </p>
            <DataTable<Row>
              caption={t('merchantAccounts')}
              rowKey={(r) => r.key}
              rows={rowsOf(d.accounts)}
              columns={[
                { title: t('channel'), width: 110, render: (_, r) => <Code value={r.channel} /> },
                { title: t('account'), render: (_, r) => <Id value={r.account} /> },
                {
                  title: t('subMerchant'),
                  render: (_, r) => (r.sub ? <Id value={r.sub.subMerchantId} /> : t('theAccount')),
                },
                { title: 'sub_appid', width: 150, ellipsis: true, render: (_, r) => r.sub?.subAppId ?? '—' },
                {
                  title: t('source'),
                  width: 110,
                  render: (_, r) => (r.source === 'directory' ? t('sourceDirectory') : t('sourceConfiguration')),
                },
                {
                  title: t('state'),
                  width: 100,
                  render: (_, r) => (
                    <Tag
                      className={`state ${r.disabled ? 'state-disabled tone-red' : 'state-enabled tone-green'}`}
                      data-state={r.disabled ? 'disabled' : 'enabled'}
                    >
                      {r.disabled ? t('disabled') : t('enabled')}
                    </Tag>
                  ),
                },
                actionsColumn<Row>(200, (r) => {
                  const name = targetName(r.channel, r.account, r.sub?.subMerchantId);
                  return (
                    <Space size={4} wrap>
                      {r.disabled ? (
                        <RowButton label={t('enable')} id={name} disabled={disabled} onClick={() => enable(r)} />
                      ) : (
                        <RowButton
                          label={t('proposeDisable')}
                          id={name}
                          danger
                          disabled={disabled}
                          onClick={() => setDisabling(r)}
                        />
                      )}
                      {!r.sub && r.source === 'directory' ? (
                        <RowButton
                          label={t('proposeAccountChange')}
                          id={name}
                          disabled={disabled}
                          onClick={() => setAccountForm({ changing: r })}
                        />
                      ) : null}
                      {r.provider ? (
                        <RowButton
                          label={t('addSubMerchant')}
                          id={name}
                          disabled={disabled}
                          onClick={() => setAdding(r)}
                        />
                      ) : null}
                    </Space>
                  );
                }),
              ]}
            />
            <DataTable<Change>
              caption={t('pendingChanges')}
              rowKey={(c) => c.id}
              rows={d.pending}
              columns={[
                { title: '#', width: 70, render: (_, c) => c.id },
                { title: t('change'), width: 150, render: (_, c) => <ChangeKind action={c.action} /> },
                { title: t('target'), render: (_, c) => targetColumn(c) },
                { title: t('reason'), ellipsis: true, render: (_, c) => c.reason ?? '—' },
                { title: t('details'), ellipsis: true, render: (_, c) => <ChangeDetails change={c} /> },
                { title: t('proposedBy'), width: 100, render: (_, c) => c.operatorId },
                { title: t('created'), width: 200, render: (_, c) => <Time iso={c.createdAt} /> },
                actionsColumn<Change>(170, (c) => (
                  <Space size={4} wrap={false}>
                    <RowButton
                      label={t('approve')}
                      id={`#${c.id}`}
                      primary
                      disabled={disabled}
                      onClick={() => setApproving(c)}
                    />
                    <RowButton
                      label={t('reject')}
                      id={`#${c.id}`}
                      danger
                      disabled={disabled}
                      onClick={() => setRejecting(c)}
                    />
                  </Space>
                )),
              ]}
            />
            <DataTable<PlatformKey>
              caption={t('platformKeys')}
              rowKey={(k) => `${k.channel}:${k.account}:${k.kind}`}
              rows={d.platformKeys ?? []}
              columns={[
                { title: t('channel'), width: 110, render: (_, k) => <Code value={k.channel} /> },
                { title: t('account'), width: 170, render: (_, k) => <Id value={k.account} /> },
                { title: t('keyKind'), width: 160, render: (_, k) => <Code value={k.kind} /> },
                {
                  title: t('keyFingerprint'),
                  render: (_, k) => (
                    <span data-testid="key-fingerprint">
                      <Id value={k.fingerprint} />
                      {k.keyId ? (
                        <small className="key-id">
                          {t('keyId')} {k.keyId}
                        </small>
                      ) : null}
                    </span>
                  ),
                },
                { title: t('activeSince'), width: 200, render: (_, k) => <Time iso={k.activatedAt} /> },
                {
                  title: t('overlapUntil'),
                  width: 200,
                  render: (_, k) => (
                    <span data-testid="overlap-until">
                      <Time iso={k.overlapUntil} />
                    </span>
                  ),
                },
              ]}
            />
            <KeyDryRun accounts={d.accounts} onProposed={reload} />
          </>
        )}
      </Show>
      <Show loaded={history}>
        {(changes) => (
          <>
            <DataTable<Change>
              caption={t('merchantHistory')}
              rowKey={(c) => c.id}
              rows={changes}
              columns={[
                { title: '#', width: 70, render: (_, c) => c.id },
                { title: t('change'), width: 150, render: (_, c) => <ChangeKind action={c.action} /> },
                { title: t('target'), render: (_, c) => targetColumn(c) },
                { title: t('reason'), ellipsis: true, render: (_, c) => c.reason ?? '—' },
                { title: t('details'), ellipsis: true, render: (_, c) => <ChangeDetails change={c} /> },
                { title: t('operator'), width: 100, render: (_, c) => c.operatorId },
                { title: t('at'), width: 200, render: (_, c) => <Time iso={c.createdAt} /> },
              ]}
            />
            <NextPage
              href={
                changes.length === HISTORY_PAGE
                  ? `#/merchants${query({ before: changes[changes.length - 1].id })}`
                  : null
              }
            />
          </>
        )}
      </Show>
      {adding ? (
        <AddSubMerchant
          row={adding}
          onCancel={() => setAdding(null)}
          onAdd={async (subMerchantId, subAppId) => {
            const added = await act(
              targetName(adding.channel, adding.account, subMerchantId),
              () =>
                post(`${accountPath(adding.channel, adding.account)}/sub-merchants`, {
                  subMerchantId,
                  ...(subAppId ? { subAppId } : {}),
                }),
              t('subMerchantAdded'),
            );
            if (added) setAdding(null);
          }}
        />
      ) : null}
      {accountForm ? (
        <AccountForm
          changing={accountForm.changing}
          onCancel={() => setAccountForm(null)}
          onDone={(message) => {
            // Closed: the form, and every secret typed into it, is gone.
            setAccountForm(null);
            setProblem(null);
            setSaid(message);
            reload();
          }}
        />
      ) : null}
      {disabling ? (
        <ReasonDialog
          title={`${t('proposeDisable')} ${targetName(disabling.channel, disabling.account, disabling.sub?.subMerchantId)}`}
          help={t('proposeDisableHelp')}
          label={t('reason')}
          action={t('proposeDisable')}
          onCancel={() => setDisabling(null)}
          onSubmit={(reason) => {
            const row = disabling;
            setDisabling(null);
            void act(
              targetName(row.channel, row.account, row.sub?.subMerchantId),
              () =>
                post(`${accountPath(row.channel, row.account)}/disable`, {
                  reason,
                  ...(row.sub ? { subMerchantId: row.sub.subMerchantId } : {}),
                }),
              t('disableProposed'),
            );
          }}
        />
      ) : null}
      {approving ? (
        <Modal
          open
          title={t('approveChange')}
          onCancel={() => setApproving(null)}
          scrollLock={false}
          footer={
            <Space>
              <Button autoFocus onClick={() => setApproving(null)}>
                {t('cancel')}
              </Button>
              <Button
                type="primary"
                onClick={() => {
                  const change = approving;
                  setApproving(null);
                  void act(
                    `#${change.id}`,
                    () => post(`/admin/merchant-changes/${encodeURIComponent(change.id)}/approve`),
                    t('changeApproved'),
                  );
                }}
              >
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
              { label: '#', children: approving.id },
              { label: t('change'), children: <ChangeKind action={approving.action} /> },
              { label: t('target'), children: targetColumn(approving) },
              { label: t('reason'), children: approving.reason ?? '—' },
              { label: t('proposedBy'), children: approving.operatorId },
            ]}
          />
          <p>{t('approveChangeHelp')}</p>
        </Modal>
      ) : null}
      {rejecting ? (
        <ReasonDialog
          title={`${t('reject')} #${rejecting.id}`}
          label={t('rejectReason')}
          action={t('reject')}
          onCancel={() => setRejecting(null)}
          onSubmit={(reason) => {
            const change = rejecting;
            setRejecting(null);
            void act(
              `#${change.id}`,
              () => post(`/admin/merchant-changes/${encodeURIComponent(change.id)}/reject`, { reason }),
              t('changeRejected'),
            );
          }}
        />
      ) : null}
    </>
  );
}

/** A dialog that asks why (required, 256 characters at most) before it sends. */
function ReasonDialog({
  title,
  help,
  label,
  action,
  onCancel,
  onSubmit,
}: {
  title: string;
  help?: string;
  label: string;
  action: string;
  onCancel: () => void;
  onSubmit: (reason: string) => void;
}) {
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <Modal
      open
      title={title}
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
            onClick={() => (reason.trim() ? onSubmit(reason.trim()) : setProblem(t('reasonRequired')))}
          >
            {action}
          </Button>
        </Space>
      }
    >
      {help ? <p>{help}</p> : null}
      <label htmlFor="merchant-reason">{label}</label>
      <Input id="merchant-reason" value={reason} maxLength={256} onChange={(e) => setReason(e.target.value)} />
      <Problem text={problem} />
    </Modal>
  );
}

function AddSubMerchant({
  row,
  onCancel,
  onAdd,
}: {
  row: Row;
  onCancel: () => void;
  onAdd: (subMerchantId: string, subAppId: string) => Promise<void>;
}) {
  const [subMerchantId, setSubMerchantId] = useState('');
  const [subAppId, setSubAppId] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <Modal
      open
      title={`${t('addSubMerchant')} ${targetName(row.channel, row.account)}`}
      onCancel={onCancel}
      scrollLock={false}
      footer={
        <Space>
          <Button onClick={onCancel}>{t('cancel')}</Button>
          <Button
            type="primary"
            onClick={() =>
              subMerchantId.trim()
                ? void onAdd(subMerchantId.trim(), subAppId.trim())
                : setProblem(t('subMerchantRequired'))
            }
          >
            {t('addSubMerchant')}
          </Button>
        </Space>
      }
    >
      <p>
        <label htmlFor="sub-merchant-id">{t('subMerchantId')}</label>
        <Input
          id="sub-merchant-id"
          value={subMerchantId}
          maxLength={64}
          onChange={(e) => setSubMerchantId(e.target.value)}
        />
      </p>
      <p>
        <label htmlFor="sub-app-id">{t('subAppId')}</label>
        <Input id="sub-app-id" value={subAppId} maxLength={64} onChange={(e) => setSubAppId(e.target.value)} />
      </p>
      <Problem text={problem} />
    </Modal>
  );
}

/** One option of an accounts-file entry the form asks for: `a.b` is field b of the entry's object a. */
interface EntryField {
  option: string;
  label: Key;
  kind: 'text' | 'list' | 'secret';
  /** The account's id: fixed when its keys are changed. */
  id?: boolean;
}

/** A file option of the entry, pasted as text (PEM). */
interface FileField {
  option: string;
  label: Key;
}

/**
 * The fields the form shows, by channel: the common entry of WeChat Pay (APIv3, platform public
 * key mode) and of Alipay (public key mode). Any other option, and every option of a channel not
 * listed, goes in the JSON areas under them, as the accounts file names it.
 */
const ACCOUNT_FIELDS: Record<string, { entry: EntryField[]; files: FileField[] }> = {
  WECHATPAY: {
    entry: [
      { option: 'mchid', label: 'fieldMchid', kind: 'text', id: true },
      { option: 'appids', label: 'fieldAppids', kind: 'list' },
      { option: 'apiV3Key', label: 'fieldApiV3Key', kind: 'secret' },
      { option: 'merchantSerialNo', label: 'fieldMerchantSerialNo', kind: 'text' },
      { option: 'platformPublicKey.id', label: 'fieldPlatformPublicKeyId', kind: 'text' },
    ],
    files: [
      { option: 'platformPublicKey.path', label: 'fieldPlatformPublicKey' },
      { option: 'merchantPrivateKeyPath', label: 'fieldMerchantPrivateKey' },
    ],
  },
  ALIPAY: {
    entry: [
      { option: 'appId', label: 'fieldAppId', kind: 'text', id: true },
      { option: 'sellerId', label: 'fieldSellerId', kind: 'text' },
    ],
    files: [
      { option: 'alipayPublicKeyPath', label: 'fieldAlipayPublicKey' },
      { option: 'appPrivateKeyPath', label: 'fieldAppPrivateKey' },
    ],
  },
};
const NO_FIELDS = { entry: [], files: [] };
const fieldId = (option: string) => `account-${option.replace(/\./g, '-')}`;

/** A JSON area's object, {} when empty; null when it holds anything else. */
function jsonObject(text: string): Record<string, unknown> | null {
  if (!text.trim()) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** What the form holds as the API takes it: the entry (empty fields left out) and the files' text. */
function materialOf(
  fields: { entry: EntryField[]; files: FileField[] },
  values: Record<string, string>,
  more: { entry: string; files: string },
): { entry: Record<string, unknown>; files: Record<string, unknown> } | string {
  const moreEntry = jsonObject(more.entry);
  if (!moreEntry) return `${t('moreEntry')}: ${t('badJson')}`;
  const moreFiles = jsonObject(more.files);
  if (!moreFiles) return `${t('moreFiles')}: ${t('badJson')}`;
  const entry: Record<string, unknown> = {};
  for (const field of fields.entry) {
    const text = (values[field.option] ?? '').trim();
    if (!text) continue;
    const value = field.kind === 'list' ? text.split(/[\s,]+/).filter(Boolean) : text;
    const [parent, child] = field.option.split('.');
    if (child) entry[parent] = { ...(entry[parent] as object | undefined), [child]: value };
    else entry[parent] = value;
  }
  const files: Record<string, unknown> = {};
  for (const file of fields.files) if (values[file.option]?.trim()) files[file.option] = values[file.option];
  return { entry: { ...entry, ...moreEntry }, files: { ...files, ...moreFiles } };
}

/**
 * Adds an account of a channel (it applies at once), or proposes a change of a directory
 * account's entry and keys (another admin approves it among the proposals). Prefilled, for a
 * change, with the public facts the listing gives; secrets and files are typed again, sent once,
 * and gone with the form when it closes. A refusal shows in the form, in the server's words.
 */
function AccountForm({
  changing,
  onCancel,
  onDone,
}: {
  changing: Row | null;
  onCancel: () => void;
  onDone: (said: string) => void;
}) {
  const channels = useVocabulary().data?.channels ?? [];
  const [channel, setChannel] = useState(changing?.channel ?? 'WECHATPAY');
  const fields = ACCOUNT_FIELDS[channel] ?? NO_FIELDS;
  const known = changing?.facts?.public ?? {};
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      fields.entry
        .filter((f) => f.kind !== 'secret' && known[f.option] !== undefined)
        .map((f) => [
          f.option,
          Array.isArray(known[f.option]) ? (known[f.option] as string[]).join(', ') : String(known[f.option]),
        ]),
    ),
  );
  const [more, setMore] = useState({ entry: '', files: '' });
  const [problem, setProblem] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const set = (option: string, value: string) => setValues((v) => ({ ...v, [option]: value }));
  const title = changing
    ? `${t('proposeAccountChange')} ${targetName(changing.channel, changing.account)}`
    : t('addAccount');
  const submit = async () => {
    setProblem(null);
    const material = materialOf(fields, values, more);
    if (typeof material === 'string') return setProblem(material);
    setSending(true);
    try {
      if (changing) {
        await put(accountPath(changing.channel, changing.account), material);
        onDone(`${t('accountChangeProposed')}: ${targetName(changing.channel, changing.account)}`);
      } else {
        await post(`/admin/merchants/${encodeURIComponent(channel)}/accounts`, material);
        const id = fields.entry.find((f) => f.id);
        onDone(`${t('accountAdded')}: ${targetName(channel, id ? (values[id.option] ?? '').trim() : '')}`);
      }
    } catch (error) {
      setProblem((error as ApiError).message);
      setSending(false);
    }
  };
  return (
    <Modal
      open
      title={title}
      onCancel={onCancel}
      scrollLock={false}
      width={720}
      footer={
        <Space>
          <Button onClick={onCancel}>{t('cancel')}</Button>
          <Button type="primary" loading={sending} onClick={() => void submit()}>
            {changing ? t('proposeAccountChange') : t('addAccount')}
          </Button>
        </Space>
      }
    >
      <p className="help">{changing ? t('proposeAccountChangeHelp') : t('addAccountHelp')}</p>
      <Form layout="vertical" autoComplete="off">
        <Form.Item label={t('accountChannel')} htmlFor="account-channel">
          <Select
            id="account-channel"
            value={channel}
            disabled={changing !== null}
            onChange={(next) => {
              setChannel(next);
              setValues({});
            }}
            options={channels.map((c) => ({ value: c, label: codeLabel(c, lang()) }))}
          />
        </Form.Item>
        {fields.entry.map((f) => (
          <Form.Item key={f.option} label={t(f.label)} htmlFor={fieldId(f.option)}>
            {f.kind === 'secret' ? (
              <Input.Password
                id={fieldId(f.option)}
                value={values[f.option] ?? ''}
                visibilityToggle={false}
                autoComplete="new-password"
                onChange={(e) => set(f.option, e.target.value)}
              />
            ) : (
              <Input
                id={fieldId(f.option)}
                value={values[f.option] ?? ''}
                disabled={changing !== null && f.id}
                spellCheck={false}
                onChange={(e) => set(f.option, e.target.value)}
              />
            )}
          </Form.Item>
        ))}
        {fields.files.map((f) => (
          <Form.Item key={f.option} label={t(f.label)} htmlFor={fieldId(f.option)}>
            <Input.TextArea
              id={fieldId(f.option)}
              rows={3}
              value={values[f.option] ?? ''}
              spellCheck={false}
              autoComplete="off"
              placeholder="-----BEGIN …-----"
              onChange={(e) => set(f.option, e.target.value)}
            />
          </Form.Item>
        ))}
        {(['entry', 'files'] as const).map((part) => (
          <Form.Item
            key={part}
            label={t(part === 'entry' ? 'moreEntry' : 'moreFiles')}
            htmlFor={`account-more-${part}`}
            extra={t(part === 'entry' ? 'moreEntryHelp' : 'moreFilesHelp')}
          >
            <Input.TextArea
              id={`account-more-${part}`}
              rows={2}
              value={more[part]}
              spellCheck={false}
              onChange={(e) => setMore((m) => ({ ...m, [part]: e.target.value }))}
            />
          </Form.Item>
        ))}
      </Form>
      {changing ? <p className="help">{t('retypeSecrets')}</p> : null}
      <Problem text={problem} />
    </Modal>
  );
}

/** What a dry run tried, kept with its report: the activation proposes this candidate, whatever the form holds since. */
interface Tried {
  channel: string;
  account: string;
  kind: string;
  pem: string;
}

/**
 * A candidate platform key or certificate tried against an account's recent notifications: four
 * counts, nothing changed. After a dry run, the candidate tried can be proposed for activation, with
 * its overlap window; another admin approves it in the proposals above (onProposed reads them again).
 */
function KeyDryRun({ accounts, onProposed }: { accounts: Account[]; onProposed: () => void }) {
  const disabled = !canAct(useOperator());
  const [target, setTarget] = useState(accounts[0] ? `${accounts[0].channel}:${accounts[0].account}` : '');
  const [kind, setKind] = useState(KEY_KINDS[0]);
  const [pem, setPem] = useState('');
  const [since, setSince] = useState<Dayjs | null>(null);
  const [report, setReport] = useState<{ report: DryRunReport; tried: Tried } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setReport(null);
    setProblem(null);
    if (!pem.trim()) return setProblem(t('candidateRequired'));
    const [channel, account] = [target.slice(0, target.indexOf(':')), target.slice(target.indexOf(':') + 1)];
    const tried = { channel, account, kind, pem: pem.trim() };
    try {
      const answer = await post<DryRunReport>(`${accountPath(channel, account)}/key-dry-run`, {
        kind,
        candidatePem: tried.pem,
        ...(since ? { since: since.toISOString() } : {}),
      });
      setReport({ report: answer, tried });
    } catch (error) {
      setProblem((error as ApiError).message);
    }
  };
  return (
    <section className="card" aria-labelledby="key-dry-run">
      <h2 id="key-dry-run">{t('keyDryRun')}</h2>
      <p className="help">{t('keyDryRunHelp')}</p>
      <form className="filters" onSubmit={(e) => void submit(e)}>
        <span className="field">
          <label htmlFor="dry-run-account">{t('account')}</label>
          <Select
            id="dry-run-account"
            value={target}
            onChange={setTarget}
            disabled={disabled}
            popupMatchSelectWidth={false}
            className="select"
            options={accounts.map((a) => ({
              value: `${a.channel}:${a.account}`,
              label: targetName(a.channel, a.account),
            }))}
          />
        </span>
        <span className="field">
          <label htmlFor="dry-run-kind">{t('keyKind')}</label>
          <Select
            id="dry-run-kind"
            value={kind}
            onChange={setKind}
            disabled={disabled}
            popupMatchSelectWidth={false}
            className="select"
            options={KEY_KINDS.map((k) => ({ value: k, label: codeLabel(k, lang()) }))}
          />
        </span>
        <span className="field">
          <label htmlFor="dry-run-since">{t('dryRunSince')}</label>
          <DatePicker
            id="dry-run-since"
            showTime={{ format: 'HH:mm' }}
            needConfirm={false}
            format={`${dayFormat()} HH:mm`}
            value={since}
            disabled={disabled}
            onChange={setSince}
          />
        </span>
        <span className="field wide">
          <label htmlFor="dry-run-pem">{t('candidatePem')}</label>
          <Input.TextArea
            id="dry-run-pem"
            rows={4}
            value={pem}
            disabled={disabled}
            spellCheck={false}
            placeholder="-----BEGIN PUBLIC KEY-----"
            onChange={(e) => setPem(e.target.value)}
          />
        </span>
        <Button type="primary" htmlType="submit" disabled={disabled}>
          {t('runDryRun')}
        </Button>
      </form>
      <Problem text={problem} />
      {report ? (
        <>
          <DryRunCounts report={report.report} />
          <ProposeActivation tried={report.tried} onProposed={onProposed} />
        </>
      ) : null}
    </section>
  );
}

function DryRunCounts({ report }: { report: DryRunReport }) {
  return (
    <div role="status" data-testid="dry-run-report">
      <Descriptions
        size="small"
        bordered
        column={2}
        items={[
          { label: t('currentOnly'), children: <span data-testid="currentOnly">{report.currentOnly}</span> },
          { label: t('candidateOnly'), children: <span data-testid="candidateOnly">{report.candidateOnly}</span> },
          { label: t('both'), children: <span data-testid="both">{report.both}</span> },
          { label: t('neither'), children: <span data-testid="neither">{report.neither}</span> },
          { label: t('examined'), children: report.examined },
          { label: t('since'), children: <Time iso={report.since} /> },
          {
            label: t('fingerprint'),
            span: 2,
            children: <Id value={report.candidateFingerprint} />,
          },
        ]}
      />
    </div>
  );
}

/**
 * Proposes the candidate a dry run tried (the same PEM and kind: the server refuses one it has no
 * recent dry run of), with its overlap in hours and, for WeChat Pay's public key mode, the new key's
 * id. The server's words on a refusal; on a 202, the proposal waits above for another admin.
 */
function ProposeActivation({ tried, onProposed }: { tried: Tried; onProposed: () => void }) {
  const disabled = !canAct(useOperator());
  const [hours, setHours] = useState<number | null>(DEFAULT_OVERLAP_HOURS);
  const [keyId, setKeyId] = useState('');
  const [said, setSaid] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const named = tried.channel === 'WECHATPAY' && tried.kind === 'publicKey';
  const propose = async (event: React.FormEvent) => {
    event.preventDefault();
    setSaid(null);
    setProblem(null);
    if (hours === null || !(hours >= 0 && hours <= MAX_OVERLAP_HOURS)) return setProblem(t('badOverlap'));
    try {
      await post(`${accountPath(tried.channel, tried.account)}/platform-keys`, {
        kind: tried.kind,
        candidatePem: tried.pem,
        overlapSeconds: Math.round(hours * 3600),
        ...(named && keyId.trim() ? { keyId: keyId.trim() } : {}),
      });
      setSaid(`${t('activationProposed')}: ${targetName(tried.channel, tried.account)}`);
      onProposed();
    } catch (error) {
      setProblem((error as ApiError).message);
    }
  };
  return (
    <section aria-labelledby="propose-activation">
      <h3 id="propose-activation">{t('proposeActivation')}</h3>
      <p className="help">{t('proposeActivationHelp')}</p>
      <form className="filters" onSubmit={(e) => void propose(e)}>
        <span className="field">
          <label htmlFor="activation-overlap">{t('overlapHours')}</label>
          <InputNumber<number>
            id="activation-overlap"
            min={0}
            max={MAX_OVERLAP_HOURS}
            value={hours}
            disabled={disabled}
            onChange={setHours}
          />
        </span>
        {named ? (
          <span className="field">
            <label htmlFor="activation-key-id">{t('newKeyId')}</label>
            <Input
              id="activation-key-id"
              value={keyId}
              maxLength={64}
              disabled={disabled}
              spellCheck={false}
              placeholder="PUB_KEY_ID_…"
              onChange={(e) => setKeyId(e.target.value)}
            />
          </span>
        ) : null}
        <Button type="primary" htmlType="submit" disabled={disabled}>
          {t('proposeActivation')}
        </Button>
      </form>
      {said ? <Said>{said}</Said> : null}
      <Problem text={problem} />
    </section>
  );
}
