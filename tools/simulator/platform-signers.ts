/**
 * The platforms' signers, for the suites and the benchmark that import them from here: each channel's signer is in
 * its folder (wechatpay/wechatpay-signer.ts, alipay/alipay-signer.ts, unionpay/unionpay-signer.ts), what they share
 * in signing.ts. The simulator imports them from there; a new channel's signer needs no line here.
 */
export * from './signing';
export * from './wechatpay/wechatpay-signer';
export * from './alipay/alipay-signer';
