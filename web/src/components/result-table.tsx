// Query rows as a table: click a header to sort (again to reverse), scroll inside the frame,
// copy as tab-separated text or download as CSV.
import { SortableHeader, useColumnSort } from './sortable-header';
import { useMemo, useState } from 'react';
import {
  cellText,
  isNumericType,
  sortRows,
  toCsv,
  toTsv,
  type QueryResult,
} from '../lib/table-data';

interface Props {
  result: QueryResult;
  /** Used in the CSV's file name. */
  name?: string;
}

export function ResultTable({ result, name = 'result' }: Props) {
  const [sort, toggle] = useColumnSort();
  const [notice, setNotice] = useState<string | null>(null);
  const rows = useMemo(
    () =>
      sort
        ? sortRows(
            result.rows,
            sort.column,
            result.columns[sort.column]?.type ?? 'text',
            sort.direction,
          )
        : result.rows,
    [result, sort],
  );

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(toTsv({ ...result, rows }));
      setNotice('Copied to the clipboard.');
    } catch {
      setNotice('The browser refused access to the clipboard.');
    }
  };

  const download = () => {
    const blob = new Blob([toCsv({ ...result, rows })], { type: 'text/csv;charset=utf-8' });
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = `${name.replace(/[^\w.-]+/g, '_')}.csv`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  const count = result.rowCount ?? result.rows.length;
  return (
    <figure className="result">
      <div className="result-bar">
        <figcaption>
          {count === 1 ? '1 row' : `${count.toLocaleString()} rows`}
          {result.truncated ? ' (more rows exist; only the first ones are shown)' : ''}
        </figcaption>
        <div className="result-actions">
          <button type="button" onClick={() => void copy()}>
            Copy
          </button>
          <button type="button" onClick={download}>
            Download CSV
          </button>
        </div>
      </div>
      {notice ? (
        <p className="result-notice" role="status">
          {notice}
        </p>
      ) : null}
      {/* tabIndex: the frame scrolls, so keyboard users must be able to focus it. */}
      <div className="table-frame" tabIndex={0} role="region" aria-label="Result rows">
        <table className="grid">
          <SortableHeader columns={result.columns} sort={sort} toggle={toggle} />
          <tbody>
            {rows.map((row, r) => (
              <tr key={r}>
                {result.columns.map((column, c) => {
                  const value = row[c];
                  return (
                    <td key={c} className={isNumericType(column.type) ? 'num' : undefined}>
                      {value === null || value === undefined ? (
                        <span className="null">NULL</span>
                      ) : (
                        cellText(value)
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
