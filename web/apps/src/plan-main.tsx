// The EXPLAIN plan viewer.
import { createRoot } from 'react-dom/client';
import { connectToHost } from './host-link';
import { createHostStore } from './host-store';
import { PlanApp } from './plan-app';
import './apps.css';

const store = createHostStore();
await connectToHost('plan viewer', store.handlers);
createRoot(document.getElementById('root')!).render(<PlanApp store={store} />);
