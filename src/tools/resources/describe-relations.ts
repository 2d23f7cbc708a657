// The JSON the pg://schema and pg://table resources answer with, built from a catalog snapshot.
import type { CatalogSnapshot, RelationDescriptor } from '../../catalog/index.js';
import { KIND_LABELS } from '../common/schema-text.js';

export function describeSchema(snapshot: CatalogSnapshot, schemaName: string): unknown {
  const schema = snapshot.schema(schemaName)!;
  const relations = snapshot.relationsOf(schemaName).filter((r) => !(r.isPartition && r.parent));
  return {
    schema: schema.name,
    description: schema.comment,
    tables: relations.map((r) => ({
      name: r.name,
      type: KIND_LABELS[r.kind],
      description: r.comment,
      rowEstimate: r.rowEstimate,
      sizeEstimateBytes: r.kind === 'view' ? null : r.sizeEstimateBytes,
      columns: r.columns.length,
      hasVectorColumns: r.hasVectors,
      ...(r.partitions.length > 0
        ? { partitions: r.partitions.map((p) => `${p.schema}.${p.name}`) }
        : {}),
    })),
  };
}

function incomingKeys(snapshot: CatalogSnapshot, rel: RelationDescriptor): unknown[] {
  const out: unknown[] = [];
  for (const other of snapshot.relations) {
    for (const fk of other.foreignKeys) {
      if (fk.references.schema === rel.schema && fk.references.table === rel.name) {
        out.push({
          schema: other.schema,
          table: other.name,
          name: fk.name,
          columns: fk.columns,
          referencedColumns: fk.references.columns,
        });
      }
    }
  }
  return out;
}

export function describeTable(
  snapshot: CatalogSnapshot,
  rel: RelationDescriptor,
  details:
    | {
        sizeBytes: number | null;
        viewDefinition: string | null;
        indexDefinitions: Map<string, string>;
      }
    | undefined,
): unknown {
  return {
    schema: rel.schema,
    name: rel.name,
    type: KIND_LABELS[rel.kind],
    description: rel.comment,
    rowEstimate: rel.rowEstimate,
    sizeBytes: details?.sizeBytes ?? null,
    selectable: rel.selectable,
    columns: rel.columns.map((c) => ({
      name: c.name,
      position: c.position,
      type: c.dataType,
      nullable: c.nullable,
      default: c.default,
      identity: c.identity,
      generated: c.generated,
      description: c.comment,
      primaryKey: c.isPrimaryKey,
      unique: c.isUnique,
      indexed: c.isIndexed,
      references: c.references,
      vector: c.vector,
      masked: c.masked,
    })),
    primaryKey: rel.primaryKey,
    uniqueKeys: rel.uniqueKeys,
    foreignKeys: rel.foreignKeys,
    referencedBy: incomingKeys(snapshot, rel),
    indexes: rel.indexes.map((i) => ({
      ...i,
      definition: details?.indexDefinitions.get(i.name) ?? null,
    })),
    partitionOf: rel.parent ? `${rel.parent.schema}.${rel.parent.name}` : null,
    partitionBound: rel.partitionBound,
    partitionKey: rel.partitionKey,
    partitions: rel.partitions.map((p) => `${p.schema}.${p.name}`),
    ...(rel.kind === 'view' || rel.kind === 'materialized_view'
      ? { viewDefinition: details?.viewDefinition ?? null }
      : {}),
  };
}
