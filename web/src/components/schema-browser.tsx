// The schemas, tables and columns (with their comments) of the selected database, from the
// server's catalog (GET /api/schema). A filter narrows by table or column name.
import { useEffect, useState } from 'react';
import { api, type SchemaAnswer } from '../api/endpoints';
import { describeError } from '../lib/plain-error';

export function SchemaBrowser({ database }: { database: string | null }) {
  const [answer, setAnswer] = useState<SchemaAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [filter, setFilter] = useState('');

  useEffect(() => {
    if (!database) return undefined;
    let live = true;
    setAnswer(null);
    setError(null);
    api.schema(database).then(
      (a) => live && setAnswer(a),
      (e: unknown) => live && setError(describeError(e)),
    );
    return () => {
      live = false;
    };
  }, [database]);

  if (!database) return <p className="muted pane">Choose a database to see its schema.</p>;
  if (error)
    return (
      <p className="alert pane" role="alert">
        {error}
      </p>
    );
  if (!answer)
    return (
      <p className="muted pane" role="status">
        Loading the schema…
      </p>
    );

  const needle = filter.trim().toLowerCase();
  const schemas = answer.schemas
    .map((s) => ({
      ...s,
      tables: s.tables.filter(
        (t) =>
          needle === '' ||
          t.name.toLowerCase().includes(needle) ||
          t.columns.some((c) => c.name.toLowerCase().includes(needle)),
      ),
    }))
    .filter((s) => s.tables.length > 0 || (needle === '' && s.tables.length === 0));

  return (
    <div className="schema pane">
      <div className="schema-head">
        <h2>Schema of {answer.database}</h2>
        <label className="search">
          <span className="visually-hidden">Filter tables and columns</span>
          <input
            type="search"
            placeholder="Filter tables and columns"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
          />
        </label>
      </div>
      {schemas.length === 0 ? <p className="muted">Nothing matches.</p> : null}
      {schemas.map((schema) => (
        <details
          key={schema.name}
          open={schemas.length <= 3 || needle !== ''}
          className="schema-group"
        >
          <summary>
            <strong>{schema.name}</strong>{' '}
            <span className="muted">
              {schema.tables.length} table{schema.tables.length === 1 ? '' : 's'}
            </span>
            {schema.comment ? <span className="comment"> — {schema.comment}</span> : null}
          </summary>
          {schema.tables.map((table) => (
            <details key={table.name} className="table-entry" open={needle !== ''}>
              <summary>
                {table.name} <span className="kind">{table.kind.replace('_', ' ')}</span>
                {table.comment ? <span className="comment"> — {table.comment}</span> : null}
              </summary>
              <div className="table-frame">
                <table className="grid columns">
                  <thead>
                    <tr>
                      <th scope="col">Column</th>
                      <th scope="col">Type</th>
                      <th scope="col">Null</th>
                      <th scope="col">Comment</th>
                    </tr>
                  </thead>
                  <tbody>
                    {table.columns.map((c) => (
                      <tr key={c.name}>
                        <td>
                          {c.name}
                          {c.primaryKey ? (
                            <span className="badge" title="primary key">
                              PK
                            </span>
                          ) : null}
                          {c.references ? (
                            <span className="badge" title={`references ${c.references}`}>
                              FK
                            </span>
                          ) : null}
                        </td>
                        <td>
                          <code>{c.type}</code>
                        </td>
                        <td>{c.nullable ? 'yes' : 'no'}</td>
                        <td>{c.comment ?? ''}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </details>
          ))}
        </details>
      ))}
    </div>
  );
}
