/** Connection tokens name the replica holding a connection; forged or altered ones decode to undefined. */
export interface ConnectionAddress {
  replica: string;
  id: string;
}

export interface ConnectionTokens {
  readonly replica: string;
  issue(id: string): string;
  read(token: string): ConnectionAddress | undefined;
}
