// How fast connections come and how many stay: per address, per replica and across the cluster.
export { AddressBudget } from './address-budget.ts';
export { ConnectionPlaces, type PlaceOwner } from './connection-places.ts';
export {
  type Admission,
  type ConnectionRateLimit,
  type ConnectKind,
  createConnectionRateLimit,
} from './connection-rate-limit.ts';
export { createSlidingWindow } from './sliding-window.ts';
export { openFilesShortfall, openFilesWarning } from './open-files-check.ts';
