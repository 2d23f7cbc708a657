// The choices above the chat: which database, which provider and model.
import type { DatabaseView, ProviderView } from '../api/endpoints';

export function DatabasePicker({
  databases,
  current,
  onSelect,
}: {
  databases: DatabaseView[];
  current: string | null;
  onSelect(name: string): void;
}) {
  if (databases.length === 0) return <span className="muted">No database available</span>;
  return (
    <label className="picker">
      <span>Database</span>
      <select value={current ?? ''} onChange={(e) => onSelect(e.target.value)}>
        {current === null ? <option value="">Choose…</option> : null}
        {databases.map((d) => (
          <option key={d.name} value={d.name} title={`${d.user}@${d.host}/${d.database}`}>
            {d.name}
          </option>
        ))}
      </select>
    </label>
  );
}

export function ModelPicker({
  providers,
  provider,
  models,
  model,
  onProvider,
  onModel,
}: {
  providers: ProviderView[];
  provider: string | null;
  models: string[];
  model: string | null;
  onProvider(name: string): void;
  onModel(name: string): void;
}) {
  if (providers.length === 0) return null;
  const modelChoices = model !== null && !models.includes(model) ? [model, ...models] : models;
  return (
    <>
      <label className="picker">
        <span>Provider</span>
        <select value={provider ?? ''} onChange={(e) => onProvider(e.target.value)}>
          {providers.map((p) => (
            <option key={p.name} value={p.name}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      {modelChoices.length > 0 ? (
        <label className="picker">
          <span>Model</span>
          <select value={model ?? ''} onChange={(e) => onModel(e.target.value)}>
            {modelChoices.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
      ) : null}
    </>
  );
}
