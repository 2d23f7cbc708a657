// Where the use of a single-use nonce (a write confirmation's) is recorded. Each process keeps
// the nonces it redeemed in memory; when instances share a state database, the use is also
// recorded there, so a nonce redeemed on one instance is refused on every other.

export interface UsedNonces {
  /** Record the nonce as used until `expiresAt` (epoch ms); false when it already was. */
  claim(id: string, expiresAt: number): Promise<boolean>;
}

/** The process-wide record: memory only until a shared one is set (when the state opens). */
export interface NonceLedger {
  shared: UsedNonces | null;
}

export function createNonceLedger(): NonceLedger {
  return { shared: null };
}
