// The header row of a result table: one button per column that sorts by it (again to reverse).
// Shared by the web client's table and the MCP Apps result grid.
import { useState } from 'react';
import { isNumericType, type QueryResult, type SortDirection } from '../lib/table-data';

export interface ColumnSort {
  column: number;
  direction: SortDirection;
}

/** The sort state and its toggle: a new column sorts ascending, the same column reverses. */
export function useColumnSort(): [ColumnSort | null, (column: number) => void] {
  const [sort, setSort] = useState<ColumnSort | null>(null);
  const toggle = (column: number) =>
    setSort((current) =>
      current?.column === column
        ? { column, direction: current.direction === 'ascending' ? 'descending' : 'ascending' }
        : { column, direction: 'ascending' },
    );
  return [sort, toggle];
}

export function SortableHeader({
  columns,
  sort,
  toggle,
}: {
  columns: QueryResult['columns'];
  sort: ColumnSort | null;
  toggle: (column: number) => void;
}) {
  return (
    <thead>
      <tr>
        {columns.map((column, i) => (
          <th
            key={i}
            scope="col"
            aria-sort={sort?.column === i ? sort.direction : 'none'}
            className={isNumericType(column.type) ? 'num' : undefined}
          >
            <button type="button" onClick={() => toggle(i)} title={column.type}>
              {column.name}
              <span aria-hidden="true" className="sort-mark">
                {sort?.column === i ? (sort.direction === 'ascending' ? '▲' : '▼') : ''}
              </span>
            </button>
          </th>
        ))}
      </tr>
    </thead>
  );
}
