import { Channel } from '../../domain/notification';
import { ChannelRegistration } from '../channel-registration';
import { UNIONPAY_PAYMENT_METHODS } from './unionpay.payments';
import { unionpayAccounts } from './unionpay.accounts';
import { UnionpayCertificates } from './unionpay.certificates';
import { UnionpayChannel } from './unionpay.channel';
import { UnionpayClient } from './unionpay.client';
import { loadUnionpayOptions, UnionpayOptions } from './unionpay.config';
import { UnionpayVerifier } from './unionpay.verifier';

/** UnionPay online payments (acp 5.1.0), as the registration list knows it. */
export const unionpayChannel: ChannelRegistration<UnionpayOptions> = {
  channel: Channel.Unionpay,
  paymentMethods: UNIONPAY_PAYMENT_METHODS.map((m) => m.name),
  loadOptions: loadUnionpayOptions,
  accounts: unionpayAccounts,
  create(options, calls, clock) {
    const certificates =
      options.rootCertPath && options.middleCertPath
        ? new UnionpayCertificates(
            { root: options.rootCertPath, middle: options.middleCertPath },
            options.validateCn,
            clock,
          )
        : undefined;
    const verifier = new UnionpayVerifier(options.accounts, certificates, clock);
    const client = new UnionpayClient(
      options.accounts,
      {
        gatewayUrl: options.gatewayUrl,
        fileTransferUrl: options.fileTransferUrl,
        timeoutMs: calls.requestTimeoutMs,
        downloadTimeoutMs: calls.billDownloadTimeoutMs,
      },
      verifier,
    );
    return new UnionpayChannel(verifier, client, { backUrl: options.backUrl });
  },
};
