import { describe, expect, it } from 'vitest';
import { appReadiness, type Phase } from './readiness.js';

const up = { health: async () => ({ ok: true, database: 'up' }) };
const down = { health: async () => ({ ok: false, database: 'unreachable' }) };
const stateUp = { query: async () => ({}) as never };
const stateDown = {
  query: async () => {
    throw new Error('connection refused');
  },
};

describe('/ready for serve --http', () => {
  it('is ready only while serving with both databases answering', async () => {
    let phase: Phase = 'starting';
    const check = appReadiness(up, stateUp, () => phase);
    expect(await check()).toEqual({ reason: 'starting', checks: { database: 'up', state: 'up' } });
    phase = 'serving';
    expect(await check()).toEqual({ reason: null, checks: { database: 'up', state: 'up' } });
    phase = 'draining';
    expect((await check()).reason).toBe('draining');
  });

  it('says which part does not answer', async () => {
    const serving = (): Phase => 'serving';
    expect(await appReadiness(down, stateUp, serving)()).toEqual({
      reason: 'unavailable',
      checks: { database: 'down', state: 'up' },
    });
    expect(await appReadiness(up, stateDown, serving)()).toEqual({
      reason: 'unavailable',
      checks: { database: 'up', state: 'down' },
    });
  });
});
