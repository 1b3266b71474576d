/**
 * The one translation catalogue of the codes the admin API answers with (GET /admin/vocabulary):
 * statuses, anomaly types, channels, outcomes, refusal reasons, audit actions, refund purposes,
 * event types. Every code the vocabulary lists has a label in both languages here: a unit test
 * (test/unit/console-catalogue.spec.ts) compares this table with the lists the API serves, so a
 * code added to the service without a label fails a test, not the operator. A code shown on the
 * page is written `label (CODE)` nowhere: the operator reads the label, the code is in its title.
 */
export type Labels = Record<string, { en: string; zh: string }>;

export const CODE_LABELS: Labels = {
  // Channels
  WECHATPAY: { en: 'WeChat Pay', zh: '微信支付' },
  ALIPAY: { en: 'Alipay', zh: '支付宝' },
  UNIONPAY: { en: 'UnionPay', zh: '银联' },
  // Anomaly types (and delivery outcomes, refund purposes)
  DUPLICATE_PAYMENT: { en: 'Duplicate payment', zh: '重复支付' },
  PAID_AFTER_CLOSE: { en: 'Paid after close', zh: '关单后支付' },
  AMOUNT_MISMATCH: { en: 'Amount mismatch', zh: '金额不符' },
  MERCHANT_MISMATCH: { en: 'Merchant mismatch', zh: '商户不符' },
  MALFORMED_NOTIFICATION: { en: 'Malformed notification', zh: '通知格式异常' },
  // Anomaly statuses
  OPEN: { en: 'Open', zh: '待处理' },
  REFUNDING: { en: 'Refunding', zh: '退款中' },
  RESOLVED: { en: 'Resolved', zh: '已解决' },
  // Refund purposes
  ORDER_REFUND: { en: 'Order refund', zh: '订单退款' },
  // Payment methods (POST /payment-orders method)
  JSAPI: { en: 'JSAPI (in WeChat)', zh: 'JSAPI 支付（微信内）' },
  MINI_PROGRAM: { en: 'Mini-program', zh: '小程序支付' },
  NATIVE: { en: 'Native (QR code)', zh: 'Native 支付（扫码）' },
  H5: { en: 'H5 (mobile browser)', zh: 'H5 支付（手机浏览器）' },
  APP: { en: 'App', zh: 'App 支付' },
  PAGE: { en: 'Page pay (PC)', zh: '电脑网站支付' },
  WAP: { en: 'Mobile web pay', zh: '手机网站支付' },
  QR: { en: 'QR code (precreate)', zh: '扫码支付（预下单）' },
  // Payment created at the channel: states (PENDING and REFUSED are labelled with the other statuses)
  CREATING: { en: 'Creating', zh: '下单中' },
  CREATED: { en: 'Created', zh: '已下单' },
  RETRY: { en: 'No answer, retry', zh: '无应答，待重试' },
  // Refund statuses
  AWAITING_APPROVAL: { en: 'Awaiting approval', zh: '待审批' },
  PENDING: { en: 'Pending', zh: '待处理' },
  PROCESSING: { en: 'Processing', zh: '处理中' },
  SUCCEEDED: { en: 'Succeeded', zh: '成功' },
  CLOSED: { en: 'Closed', zh: '已关闭' },
  ABNORMAL: { en: 'Abnormal', zh: '异常' },
  RESOLVED_OFFLINE: { en: 'Resolved offline', zh: '线下已处理' },
  REJECTED: { en: 'Rejected', zh: '已驳回' },
  // Order statuses
  WAIT_PAY: { en: 'Awaiting payment', zh: '待支付' },
  PAID: { en: 'Paid', zh: '已支付' },
  PARTIALLY_REFUNDED: { en: 'Partially refunded', zh: '部分退款' },
  REFUNDED: { en: 'Refunded', zh: '已退款' },
  // Order events
  PAY: { en: 'Pay', zh: '支付' },
  CLOSE: { en: 'Close', zh: '关单' },
  REQUEST_REFUND: { en: 'Refund requested', zh: '申请退款' },
  SETTLE_FULL_REFUND: { en: 'Fully refunded', zh: '全额退款完成' },
  SETTLE_PARTIAL_REFUND: { en: 'Partially refunded', zh: '部分退款完成' },
  SETTLE_NO_REFUND: { en: 'No refund left', zh: '无退款' },
  // Refusal reasons
  InvalidSignature: { en: 'Invalid signature', zh: '签名无效' },
  UnknownSigningKey: { en: 'Unknown signing key', zh: '未知签名密钥' },
  MerchantMismatch: { en: 'Unknown merchant', zh: '商户不匹配' },
  Undecryptable: { en: 'Cannot decrypt', zh: '无法解密' },
  OrderNotFound: { en: 'Unknown order', zh: '订单不存在' },
  // Refused notification statuses
  REFUSED: { en: 'Refused', zh: '已拒绝' },
  ACCEPTED: { en: 'Accepted', zh: '已接受' },
  // Delivery outcomes
  DUPLICATE: { en: 'Repeat', zh: '重复通知' },
  NOT_PAYING: { en: 'Not a payment', zh: '非支付通知' },
  REFUND_SUCCEEDED: { en: 'Refund succeeded', zh: '退款成功' },
  REFUND_CLOSED: { en: 'Refund closed', zh: '退款关闭' },
  REFUND_ABNORMAL: { en: 'Refund abnormal', zh: '退款异常' },
  UNKNOWN_REFUND: { en: 'Unknown refund', zh: '未知退款' },
  // Event types
  'payment.succeeded': { en: 'Payment succeeded', zh: '支付成功' },
  'refund.succeeded': { en: 'Refund succeeded', zh: '退款成功' },
  'refund.closed': { en: 'Refund closed', zh: '退款关闭' },
  // Resolutions
  ACCEPTED_AS_PAID: { en: 'Accepted as paid', zh: '按已支付接受' },
  REFUNDED_OUTSIDE: { en: 'Refunded outside', zh: '已在系统外退款' },
  DUPLICATE_OF: { en: 'Duplicate of', zh: '与其他记录重复' },
  SETTLED_WITH_CHANNEL: { en: 'Settled with the channel', zh: '已与渠道处理' },
  APPLIED: { en: 'Applied', zh: '已生效' },
  // Webhook messages
  FAILED: { en: 'Failed', zh: '失败' },
  succeeded: { en: 'Succeeded', zh: '成功' },
  failed: { en: 'Failed', zh: '失败' },
  // Reconciliation runs and items
  RUNNING: { en: 'Running', zh: '进行中' },
  COMPLETED: { en: 'Completed', zh: '已完成' },
  NOT_READY: { en: 'Bill not ready', zh: '账单未生成' },
  MATCHED: { en: 'Matched', zh: '一致' },
  MISSING_LOCAL: { en: 'Missing here', zh: '本地缺失' },
  MISSING_CHANNEL: { en: 'Missing at the channel', zh: '渠道缺失' },
  AMOUNT_DIFFERS: { en: 'Amount differs', zh: '金额不一致' },
  REFUND_MISSING_LOCAL: { en: 'Refund missing here', zh: '本地缺少退款' },
  REFUND_MISSING_CHANNEL: { en: 'Refund missing at the channel', zh: '渠道缺少退款' },
  MALFORMED: { en: 'Malformed', zh: '格式错误' },
  // Channel calls
  QUERY: { en: 'Query', zh: '查询' },
  // Merchant directory changes (GET /admin/merchants, /admin/merchant-changes; REJECTED is labelled with the refund statuses)
  SUB_MERCHANT_ADDED: { en: 'Sub-merchant added', zh: '添加子商户' },
  DISABLE_PROPOSED: { en: 'Disabling proposed', zh: '提议停用' },
  ENABLED: { en: 'Enabled', zh: '已启用' },
  APPROVED: { en: 'Approved', zh: '已批准' },
  KEY_DRY_RUN: { en: 'Key dry run', zh: '密钥试验证' },
  ACCOUNT_ADDED: { en: 'Account added', zh: '添加账号' },
  ACCOUNT_CHANGE_PROPOSED: { en: 'Account change proposed', zh: '提议变更账号' },
  // Key and certificate files (key dry runs, GET /admin/overview's expiringCredentials)
  publicKey: { en: 'Platform public key', zh: '平台公钥' },
  platformCert: { en: 'Platform certificate', zh: '平台证书' },
  publicCert: { en: 'Alipay public certificate', zh: '支付宝公钥证书' },
  rootCert: { en: 'Root certificate', zh: '根证书' },
  appCert: { en: 'App certificate', zh: '应用公钥证书' },
  signCert: { en: 'Signing certificate', zh: '签名证书' },
  middleCert: { en: 'Intermediate certificate', zh: '中级证书' },
  apiV2Cert: { en: 'APIv2 certificate', zh: 'APIv2 证书' },
  // Audit actions
  ANOMALY_RESOLVED: { en: 'Anomaly resolved', zh: '异常已关闭' },
  ANOMALY_RESOLUTION_REQUESTED: { en: 'Resolution asked', zh: '申请关闭异常' },
  ANOMALY_RESOLUTION_APPROVED: { en: 'Resolution approved', zh: '批准关闭异常' },
  ANOMALY_RESOLUTION_REJECTED: { en: 'Resolution rejected', zh: '驳回关闭异常' },
  EMERGENCY_REFUND: { en: 'Emergency refund', zh: '紧急退款' },
  REFUND_RESOLVED_OFFLINE: { en: 'Refund resolved offline', zh: '退款线下处理' },
  REFUND_APPROVED: { en: 'Refund approved', zh: '批准退款' },
  REFUND_REJECTED: { en: 'Refund rejected', zh: '驳回退款' },
  REFUSED_NOTIFICATION_REVERIFIED: { en: 'Notification re-verified', zh: '重新验签通知' },
  DEAD_LETTER_REPLAYED: { en: 'Dead letter replayed', zh: '重放死信' },
  RECONCILE: { en: 'Reconciliation run', zh: '执行对账' },
  ORDERS_EXPORTED: { en: 'Orders exported', zh: '导出订单' },
  PAYLOAD_READ_UNMASKED: { en: 'Bytes read unmasked', zh: '查看未脱敏报文' },
  RESOURCE_READ_DECRYPTED: { en: 'Resource read decrypted', zh: '查看解密内容' },
  WEBHOOK_ENDPOINT_CREATED: { en: 'Webhook endpoint created', zh: '创建 Webhook 端点' },
  WEBHOOK_ENDPOINT_UPDATED: { en: 'Webhook endpoint changed', zh: '修改 Webhook 端点' },
  WEBHOOK_ENDPOINT_DELETED: { en: 'Webhook endpoint deleted', zh: '删除 Webhook 端点' },
  WEBHOOK_SECRET_ROTATED: { en: 'Webhook secret rotated', zh: '轮换 Webhook 密钥' },
  WEBHOOK_RESENT: { en: 'Webhook resent', zh: '重新发送 Webhook' },
  WEBHOOK_RECOVERED: { en: 'Webhooks recovered', zh: '恢复 Webhook 消息' },
  ANOMALY_RESOLVE_REFUSED: { en: 'Resolution refused', zh: '关闭异常被拒' },
  ANOMALY_RESOLUTION_APPROVE_REFUSED: { en: 'Resolution approval refused', zh: '批准关闭被拒' },
  ANOMALY_RESOLUTION_REJECT_REFUSED: { en: 'Resolution rejection refused', zh: '驳回关闭被拒' },
  EMERGENCY_REFUND_REFUSED: { en: 'Emergency refund refused', zh: '紧急退款被拒' },
  REFUND_RESOLVE_OFFLINE_REFUSED: { en: 'Offline resolution refused', zh: '线下处理被拒' },
  REFUND_APPROVE_REFUSED: { en: 'Approval refused', zh: '批准退款被拒' },
  REFUND_REJECT_REFUSED: { en: 'Rejection refused', zh: '驳回退款被拒' },
  REFUSED_NOTIFICATION_REVERIFY_REFUSED: { en: 'Re-verification refused', zh: '重新验签被拒' },
  DEAD_LETTER_REPLAY_REFUSED: { en: 'Replay refused', zh: '重放死信被拒' },
  RECONCILE_REFUSED: { en: 'Reconciliation refused', zh: '对账被拒' },
  MERCHANT_SUB_MERCHANT_ADDED: { en: 'Sub-merchant added', zh: '添加子商户' },
  MERCHANT_DISABLE_PROPOSED: { en: 'Disabling proposed', zh: '提议停用商户' },
  MERCHANT_ENABLED: { en: 'Merchant enabled', zh: '启用商户' },
  MERCHANT_CHANGE_APPROVED: { en: 'Merchant change approved', zh: '批准商户变更' },
  MERCHANT_CHANGE_REJECTED: { en: 'Merchant change rejected', zh: '驳回商户变更' },
  PLATFORM_KEY_DRY_RUN: { en: 'Platform key dry run', zh: '平台密钥试验证' },
  PLATFORM_KEY_PROPOSED: { en: 'Platform key activation proposed', zh: '提议启用平台密钥' },
  MERCHANT_ACCOUNT_ADDED: { en: 'Merchant account added', zh: '添加商户账号' },
  MERCHANT_ACCOUNT_CHANGE_PROPOSED: { en: 'Merchant account change proposed', zh: '提议变更商户账号' },
  MERCHANT_SECRETS_REWRAPPED: { en: 'Merchant secrets re-encrypted', zh: '重新加密商户密钥' },
  MERCHANT_SUB_MERCHANT_ADD_REFUSED: { en: 'Sub-merchant addition refused', zh: '添加子商户被拒' },
  MERCHANT_DISABLE_REFUSED: { en: 'Disabling refused', zh: '停用商户被拒' },
  MERCHANT_ENABLE_REFUSED: { en: 'Enabling refused', zh: '启用商户被拒' },
  MERCHANT_CHANGE_APPROVE_REFUSED: { en: 'Merchant change approval refused', zh: '批准商户变更被拒' },
  MERCHANT_CHANGE_REJECT_REFUSED: { en: 'Merchant change rejection refused', zh: '驳回商户变更被拒' },
  PLATFORM_KEY_DRY_RUN_REFUSED: { en: 'Platform key dry run refused', zh: '平台密钥试验证被拒' },
  PLATFORM_KEY_PROPOSE_REFUSED: { en: 'Platform key activation refused', zh: '启用平台密钥被拒' },
  MERCHANT_ACCOUNT_ADD_REFUSED: { en: 'Merchant account addition refused', zh: '添加商户账号被拒' },
  MERCHANT_ACCOUNT_CHANGE_REFUSED: { en: 'Merchant account change refused', zh: '变更商户账号被拒' },
  MERCHANT_SECRETS_REWRAP_REFUSED: { en: 'Merchant secrets re-encryption refused', zh: '重新加密商户密钥被拒' },
  WEBHOOK_ENDPOINT_CREATE_REFUSED: { en: 'Webhook endpoint creation refused', zh: '创建 Webhook 端点被拒' },
  WEBHOOK_ENDPOINT_UPDATE_REFUSED: { en: 'Webhook endpoint change refused', zh: '修改 Webhook 端点被拒' },
  WEBHOOK_SECRET_ROTATE_REFUSED: { en: 'Webhook secret rotation refused', zh: '轮换 Webhook 密钥被拒' },
  WEBHOOK_ENDPOINT_DELETE_REFUSED: { en: 'Webhook endpoint deletion refused', zh: '删除 Webhook 端点被拒' },
  WEBHOOK_RESEND_REFUSED: { en: 'Webhook resend refused', zh: '重新发送 Webhook 被拒' },
  WEBHOOK_RECOVER_REFUSED: { en: 'Webhook recovery refused', zh: '恢复 Webhook 消息被拒' },
};

/** A code's label in `lang`; the code itself when the catalogue has none (the unit test keeps that from happening). */
export function codeLabel(code: string, lang: 'en' | 'zh'): string {
  return Object.hasOwn(CODE_LABELS, code) ? CODE_LABELS[code][lang] : code;
}

/** Whether the catalogue labels `code` (a page shows a code it does not know as such, e.g. a new kind of change). */
export const hasLabel = (code: string): boolean => Object.hasOwn(CODE_LABELS, code);
