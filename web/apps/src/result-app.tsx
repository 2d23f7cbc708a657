// Rows of a result: filter, sort, copy, CSV, the chart when they read as one, and the next or
// previous page fetched by calling the tool again through the host.
import { SortableHeader, useColumnSort } from '../../src/components/sortable-header';
import { useMemo, useState, useSyncExternalStore } from 'react';
import { ResultChart } from '../../src/components/result-chart';
import { chartShapeOf } from '../../src/lib/chart-shape';
import {
  cellText,
  isNumericType,
  sortRows,
  toCsv,
  toTsv,
  type QueryResult,
} from '../../src/lib/table-data';
import { copyText, textOf, type HostLink, type ToolCallOutcome } from './host-link';
import type { createHostStore } from './host-store';
import { resultOf } from './result-data';

interface Props {
  link: HostLink;
  store: ReturnType<typeof createHostStore>;
  prefer: 'table' | 'chart';
}

interface Page {
  outcome: ToolCallOutcome;
  rows: QueryResult | null;
  offset: number;
}

export function ResultApp({ link, store, prefer }: Props) {
  const host = useSyncExternalStore(store.subscribe, store.get);
  // A page the view fetched itself replaces the host's; null: show what the host sent.
  const [fetched, setFetched] = useState<Page | null>(null);
  const [history, setHistory] = useState<number[]>([]);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  const args = host.args ?? {};
  const tool = link.toolName() ?? (typeof args['query'] === 'string' ? 'query_database' : null);
  const page: Page | null = useMemo(() => {
    if (fetched) return fetched;
    if (!host.result) return null;
    const offset = typeof args['offset'] === 'number' ? args['offset'] : 0;
    const rows = resultOf(host.result.structuredContent, link.outputSchema());
    return { outcome: host.result, rows, offset };
  }, [fetched, host.result, args, link]);

  const go = async (offset: number, back: boolean) => {
    if (!tool) return;
    setBusy(true);
    setFailure(null);
    try {
      const outcome = await link.call(tool, { ...args, offset });
      if (outcome.isError) {
        setFailure(textOf(outcome) || 'The tool failed.');
        return;
      }
      setHistory((h) => (back ? h.slice(0, -1) : [...h, page?.offset ?? 0]));
      setFetched({
        outcome,
        rows: resultOf(outcome.structuredContent, link.outputSchema()),
        offset,
      });
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };

  if (host.cancelled !== null && !page) {
    return <p className="muted">The call was cancelled: {host.cancelled}</p>;
  }
  if (!page) return <p className="muted">Waiting for the result…</p>;
  if (page.outcome.isError) {
    return <p className="error-text">{textOf(page.outcome) || 'The tool failed.'}</p>;
  }
  if (!page.rows || page.rows.columns.length === 0) {
    return <pre className="tool-text">{textOf(page.outcome) || 'No rows.'}</pre>;
  }
  const pager =
    tool === 'query_database' && typeof args['query'] === 'string'
      ? {
          previous: history.length > 0 ? () => void go(history.at(-1)!, true) : null,
          next:
            typeof page.rows.nextOffset === 'number'
              ? () => void go(page.rows!.nextOffset!, false)
              : null,
        }
      : null;
  return (
    <Rows
      key={`${page.offset}`}
      link={link}
      result={page.rows}
      offset={page.offset}
      name={tool ?? 'result'}
      prefer={prefer}
      pager={pager}
      busy={busy}
      failure={failure}
    />
  );
}

interface RowsProps {
  link: HostLink;
  result: QueryResult;
  offset: number;
  name: string;
  prefer: 'table' | 'chart';
  pager: { previous: (() => void) | null; next: (() => void) | null } | null;
  busy: boolean;
  failure: string | null;
}

function Rows({ link, result, offset, name, prefer, pager, busy, failure }: RowsProps) {
  const [sort, toggle] = useColumnSort();
  const [filter, setFilter] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const shape = useMemo(() => chartShapeOf(result), [result]);
  const [tab, setTab] = useState<'table' | 'chart'>(
    prefer === 'chart' && shape ? 'chart' : 'table',
  );

  const rows = useMemo(() => {
    const wanted = filter.trim().toLowerCase();
    const kept = wanted
      ? result.rows.filter((row) => row.some((v) => cellText(v).toLowerCase().includes(wanted)))
      : result.rows;
    if (!sort) return kept;
    return sortRows(kept, sort.column, result.columns[sort.column]?.type ?? 'text', sort.direction);
  }, [result, filter, sort]);
  const shown = { ...result, rows };

  const copy = async () =>
    setNotice(
      (await copyText(toTsv(shown)))
        ? `Copied ${rows.length === 1 ? '1 row' : `${rows.length} rows`}.`
        : 'The host refused access to the clipboard.',
    );
  const download = async () => {
    try {
      const saved = await link.save(
        `${name.replace(/[^\w.-]+/g, '_')}.csv`,
        'text/csv',
        toCsv(shown),
      );
      if (!saved) setNotice('The CSV was not saved.');
    } catch (error) {
      setNotice(`The download failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  const first = offset + 1;
  const last = offset + result.rows.length;
  const more = result.truncated || typeof result.nextOffset === 'number';
  return (
    <section className="result-view" aria-busy={busy}>
      <header className="bar">
        <span className="count" role="status">
          {result.rows.length === 0
            ? 'No rows'
            : `Rows ${first.toLocaleString()}–${last.toLocaleString()}${more ? ' (more exist)' : ''}`}
          {filter.trim() && rows.length !== result.rows.length ? `, ${rows.length} shown` : ''}
        </span>
        {shape ? (
          <span className="tabs" role="tablist" aria-label="View">
            <button
              type="button"
              role="tab"
              aria-selected={tab === 'table'}
              onClick={() => setTab('table')}
            >
              Table
            </button>
            <button
              type="button"
              role="tab"
              aria-selected={tab === 'chart'}
              onClick={() => setTab('chart')}
            >
              Chart
            </button>
          </span>
        ) : null}
        <input
          type="search"
          placeholder="Filter rows"
          aria-label="Filter rows"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={() => void download()}>
          CSV
        </button>
        {pager ? (
          <span className="pager">
            <button
              type="button"
              disabled={!pager.previous || busy}
              onClick={pager.previous ?? undefined}
            >
              ‹ Previous
            </button>
            <button type="button" disabled={!pager.next || busy} onClick={pager.next ?? undefined}>
              Next ›
            </button>
          </span>
        ) : null}
      </header>
      {notice ? <p className="notice">{notice}</p> : null}
      {failure ? <p className="error-text">{failure}</p> : null}
      {tab === 'chart' && shape ? (
        <ResultChart shape={shape} />
      ) : (
        <div className="table-frame" tabIndex={0} role="region" aria-label="Result rows">
          <table className="grid">
            <SortableHeader columns={result.columns} sort={sort} toggle={toggle} />
            <tbody>
              {rows.map((row, r) => (
                <tr key={r}>
                  {result.columns.map((column, c) => (
                    <td key={c} className={isNumericType(column.type) ? 'num' : undefined}>
                      {row[c] === null || row[c] === undefined ? (
                        <span className="null">NULL</span>
                      ) : (
                        cellText(row[c])
                      )}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
