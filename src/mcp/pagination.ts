// Cursor pagination for every list method. Cursors are sealed (see signed.ts) and name the
// list they belong to, so a cursor from another list or an edited one is rejected.
import { isObject, RpcCodes, RpcError } from './jsonrpc.js';
import type { Signer } from '../core/signed.js';

export function paginate<T>(
  signer: Signer,
  list: string,
  items: readonly T[],
  cursor: unknown,
  pageSize: number,
): { items: readonly T[]; next: { nextCursor?: string } } {
  let offset = 0;
  if (cursor !== undefined && cursor !== null) {
    const payload = signer.open(cursor);
    if (
      !isObject(payload) ||
      payload['l'] !== list ||
      typeof payload['o'] !== 'number' ||
      payload['o'] < 0
    ) {
      throw new RpcError(
        RpcCodes.INVALID_PARAMS,
        'Invalid cursor: pass back the nextCursor of a previous page unchanged.',
      );
    }
    offset = payload['o'];
  }
  const page = items.slice(offset, offset + pageSize);
  const end = offset + page.length;
  return {
    items: page,
    next: end < items.length ? { nextCursor: signer.seal({ l: list, o: end }) } : {},
  };
}
