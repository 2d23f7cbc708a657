// Tasks over HTTP live in the state database (any instance answers for them; a restart keeps a
// finished result), and a cancel that lands on an instance other than the one running the task
// reaches it over the cluster bus.
import type { App } from './app.js';
import type { ClusterBus } from '../state/cluster-bus.js';
import type { StateDb } from '../state/state-db.js';
import { createStateTaskStore } from '../state/task-store.js';

const CANCEL = 'task-cancel';

export function shareTasks(app: App, db: Pick<StateDb, 'query'>, bus: ClusterBus | null): void {
  app.tasks.useStore(createStateTaskStore(db));
  if (!bus) return;
  app.tasks.useForwarder((taskId) => bus.publish({ kind: CANCEL, taskId }));
  const stop = bus.subscribe((message) => {
    if (message['kind'] === CANCEL && typeof message['taskId'] === 'string') {
      app.tasks.stopLocal(message['taskId']);
    }
  });
  app.shutdown.signal.addEventListener('abort', stop, { once: true });
}
