// The OpenTelemetry SDK, set up here (the composition root) and nowhere else: the layers below
// use only the API (core/tracing.ts), which does nothing until this registers a provider.
//
// Off unless an OTLP endpoint is named (telemetry.otlpEndpoint, OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and the SDK is not disabled (OTEL_SDK_DISABLED,
// OTEL_TRACES_EXPORTER=none). Off, none of the SDK's code is loaded. On, the standard variables
// apply as the SDK reads them: the service name and resource attributes, the exporter's headers,
// timeout and compression, the sampler, the batch processor's delays and sizes.
import type { Logger } from 'pino';
import type { TelemetryConfig } from '../config/index.js';
import { configureTracing } from '../core/tracing.js';
import { VERSION } from './version.js';

export interface Tracing {
  /** Sends what is still buffered and stops. */
  shutdown(): Promise<void>;
}

type Env = Record<string, string | undefined>;

const isSet = (value: string | undefined): boolean => value !== undefined && value.trim() !== '';

/** Whether traces are to be sent, by the configuration and the standard variables. */
export function tracingWanted(config: TelemetryConfig, env: Env): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  const exporters = (env['OTEL_TRACES_EXPORTER'] ?? '').split(',').map((e) => e.trim());
  if (exporters.includes('none')) return false;
  return (
    config.otlpEndpoint !== null ||
    isSet(env['OTEL_EXPORTER_OTLP_ENDPOINT']) ||
    isSet(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'])
  );
}

export async function startTracing(
  config: TelemetryConfig,
  logger: Logger,
  env: Env = process.env,
): Promise<Tracing | null> {
  if (!tracingWanted(config, env)) return null;
  const [api, { NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  // The SDK's own complaints (an exporter that cannot deliver) go to the log, once each.
  api.diag.setLogger(
    {
      error: (message) => logger.warn({ telemetry: message }, 'trace export problem'),
      warn: () => undefined,
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    api.DiagLogLevel.ERROR,
  );
  // pgmcp's name and version, under what OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES say.
  const resource = resources
    .resourceFromAttributes({ 'service.name': 'pgmcp', 'service.version': VERSION })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const base = config.otlpEndpoint?.replace(/\/+$/, '');
  const exporter = new OTLPTraceExporter(base ? { url: `${base}/v1/traces` } : {});
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // The global provider, the AsyncLocalStorage context manager and the W3C propagator.
  provider.register();
  // The AI SDK (7 and later) makes its spans (the agent loop, each step's model call, each tool
  // call) only through a registered integration: its OpenTelemetry one, on the provider above.
  const [{ registerTelemetry }, { OpenTelemetry }] = await Promise.all([
    import('ai'),
    import('@ai-sdk/otel'),
  ]);
  registerTelemetry(new OpenTelemetry());
  configureTracing({ on: true, includeSql: config.includeSql, sqlComment: config.sqlComment }, api);
  logger.info(
    { includeSql: config.includeSql, sqlComment: config.sqlComment },
    'sending traces over OTLP/HTTP',
  );
  return {
    async shutdown() {
      configureTracing({ on: false, includeSql: false, sqlComment: false });
      await provider.shutdown().catch(() => undefined);
    },
  };
}
