// list_changed with an audience (a change in one database) reaches only the sessions and
// subscriptions/listen streams whose caller it concerns.
import { describe, expect, it } from 'vitest';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import { createRegistry } from '../tools/registry.js';
import { createSession } from './session.js';
import { bindSessionNotifications, listen } from './subscriptions.js';

const alice: Principal = { ...ANONYMOUS, kind: 'user', userId: 'alice' };

describe('list_changed audiences', () => {
  it('notifies only sessions whose principal the audience admits', () => {
    const registry = createRegistry();
    const got: string[] = [];
    const sessions = [
      createSession('a', (m) => got.push(`a ${m}`), alice),
      createSession('b', (m) => got.push(`b ${m}`), ANONYMOUS),
    ];
    for (const s of sessions) s.protocolVersion = '2025-11-25';
    const off = bindSessionNotifications(registry, () => sessions);
    registry.apply({ announce: ['tools'], audience: (p) => p.userId === 'alice' });
    expect(got).toEqual(['a notifications/tools/list_changed']);
    registry.apply({ announce: ['prompts'] });
    expect(got).toHaveLength(3);
    off();
  });

  it('filters subscriptions/listen streams by their listener', async () => {
    const registry = createRegistry();
    const sent: string[] = [];
    const stop = new AbortController();
    const filter = {
      toolsListChanged: true,
      promptsListChanged: false,
      resourcesListChanged: false,
      resourceSubscriptions: [],
    };
    const done = listen(registry, filter, 1, (m) => sent.push(m), stop.signal, ANONYMOUS);
    registry.apply({ announce: ['tools'], audience: (p) => p.userId === 'alice' });
    registry.apply({ announce: ['tools'], audience: (p) => p.kind === 'anonymous' });
    stop.abort();
    await done;
    expect(sent).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tools/list_changed',
    ]);
  });
});
