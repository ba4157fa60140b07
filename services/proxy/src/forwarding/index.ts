// Forwarding to HTTP targets: requests and upgrades, their headers, and where a target may connect.
export { upstreamHeaders } from './forward-headers.ts';
export { HttpForwarder } from './http-forwarder.ts';
export { TargetAllowList, targetAllowSetting } from './target-allow-list.ts';
export { refusedTargetAnswer } from './target-connect.ts';
export { UpgradeForwarder } from './upgrade-forwarder.ts';
