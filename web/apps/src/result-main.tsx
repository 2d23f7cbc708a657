// The result grid and the result chart: the same view, opening on the table or on the chart.
import { createRoot } from 'react-dom/client';
import { connectToHost } from './host-link';
import { createHostStore } from './host-store';
import { ResultApp } from './result-app';
import './apps.css';

const root = document.getElementById('root')!;
const prefer = root.dataset['view'] === 'chart' ? 'chart' : 'table';
const store = createHostStore();
const link = await connectToHost(
  prefer === 'chart' ? 'result chart' : 'result grid',
  store.handlers,
);
createRoot(root).render(<ResultApp link={link} store={store} prefer={prefer} />);
