/**
 * UnionPay as the simulator plays it: signed consumption and refund result notifications, an order registered
 * with its consumption's txnTime, and the fake gateway of its own on the platform port + 1.
 */
import {
  ChannelKeySet,
  ChannelSimulator,
  failReason,
  formDelivery,
  paymentSummary,
  refundSummary,
} from '../channel-simulator';
import {
  createUnionpayDevKeys,
  newQueryId,
  startUnionpayGateway,
  unionpayPaymentForm,
  unionpayRefundForm,
  unionpayServiceEnvironment,
} from './unionpay-dev-keys';
import { txnTime } from './unionpay-signer';

const NAME = 'unionpay';

/** Kept in `<keys>/unionpay/`, with a description of its own: nothing in keys.json. */
const unionpayKeySet: ChannelKeySet = {
  create(dir) {
    createUnionpayDevKeys(dir);
    return Promise.resolve(undefined);
  },
  serviceEnvironment: (keys, { platformPort, servicePort }) =>
    unionpayServiceEnvironment(keys.dir, platformPort, servicePort),
  describe: () => [],
};

export const unionpaySimulator: ChannelSimulator = {
  name: NAME,
  title: 'UnionPay',
  keySet: unionpayKeySet,
  payingStatus: '00',
  payingStatuses: ['00', 'A6'],
  buyerActions: {
    frontTrans: 'posts the consumption form to UnionPay and pays',
    appTrans: "pays with the tn in the app (UnionPay's startPay)",
  },

  /** The queryId, 21 digits. */
  newTransactionId: newQueryId,

  paymentNotification(keys, p) {
    const respCode = p.status ?? '00';
    const body = unionpayPaymentForm(keys.dir, { ...p, respCode });
    return { channel: NAME, ...formDelivery(body), summary: `UnionPay respCode ${respCode}  ${paymentSummary(p)}` };
  },

  /** UnionPay's refund result: respCode 00 succeeded, anything else did not. */
  refundNotification(keys, p) {
    const respCode = p.status === 'SUCCESS' ? '00' : '01';
    const body = unionpayRefundForm(keys.dir, { ...p, respCode });
    return {
      channel: NAME,
      ...formDelivery(body),
      summary: `UnionPay refund respCode ${respCode}  ${refundSummary(p)}`,
    };
  },

  /** Any 200 acks. */
  readAck: (answer) => (answer.status === 200 ? { acked: true, said: '' } : { acked: false, said: failReason(answer) }),

  /** queryTrans finds a consumption by orderId and txnTime: an order is registered with the txnTime, now by default. */
  defaultChannelOrderTime: () => txnTime(),

  pay: {
    // The consumption's txnTime is the one the order was registered with (channelOrderTime), so that the service's
    // queryTrans finds it; now when the order has none.
    prepare: async ({ orderChannelTime }) => ({ params: { txnTime: await orderChannelTime() } }),
  },

  startPlatform: ({ keys, port }) => startUnionpayGateway(keys.dir, port),
};
