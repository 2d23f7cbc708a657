// The view's side of MCP Apps: one App (from @modelcontextprotocol/ext-apps, bundled into the
// file) talking to the host over postMessage. The host sends the tool's arguments and result;
// the view asks it to call tools again (the next page) and to save files.
import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type McpUiHostContext,
} from '@modelcontextprotocol/ext-apps';

export interface ToolCallOutcome {
  structuredContent?: Record<string, unknown>;
  content?: { type: string; text?: string }[];
  isError?: boolean;
}

export interface HostLink {
  app: App;
  /** The tool that opened this view, when the host says (hostContext.toolInfo). */
  toolName(): string | null;
  /** That tool's output schema, when the host says. */
  outputSchema(): unknown;
  call(name: string, args: Record<string, unknown>): Promise<ToolCallOutcome>;
  /**
   * Saves a text file through the host when it offers `ui/download-file`; only a host without
   * it gets a browser download. False when the host's answer was an error (the person
   * cancelled, or the host refused): then nothing is downloaded at all.
   */
  save(fileName: string, mimeType: string, text: string): Promise<boolean>;
}

export interface LinkHandlers {
  onInput(args: Record<string, unknown>): void;
  onResult(result: ToolCallOutcome): void;
  onCancelled(reason: string): void;
}

function applyContext(context: McpUiHostContext | undefined): void {
  if (!context) return;
  if (context.theme) applyDocumentTheme(context.theme);
  if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
}

export async function connectToHost(name: string, handlers: LinkHandlers): Promise<HostLink> {
  const app = new App({ name: `pgmcp ${name}`, version: '1' }, {}, { autoResize: true });
  // Set before connecting: the host may send the input and result right after the handshake.
  app.ontoolinput = (params) => handlers.onInput(params.arguments ?? {});
  app.ontoolresult = (params) => handlers.onResult(params as ToolCallOutcome);
  app.ontoolcancelled = (params) => handlers.onCancelled(params.reason ?? 'cancelled');
  app.onhostcontextchanged = (params) => applyContext(params);
  app.onteardown = async () => ({});
  await app.connect();
  applyContext(app.getHostContext());
  return {
    app,
    toolName: () => app.getHostContext()?.toolInfo?.tool.name ?? null,
    outputSchema: () => app.getHostContext()?.toolInfo?.tool.outputSchema,
    call: async (tool, args) =>
      (await app.callServerTool({ name: tool, arguments: args })) as ToolCallOutcome,
    async save(fileName, mimeType, text) {
      if (app.getHostCapabilities()?.downloadFile) {
        const uri = `file:///${encodeURIComponent(fileName)}`;
        const saved = await app.downloadFile({
          contents: [{ type: 'resource', resource: { uri, mimeType, text } }],
        });
        // A cancel or a refusal is the person's (or host's) answer: no download behind its back.
        return saved.isError !== true;
      }
      const url = URL.createObjectURL(new Blob([text], { type: mimeType }));
      const link = document.createElement('a');
      link.href = url;
      link.download = fileName;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      return true;
    },
  };
}

/** The text blocks of a result, joined (what an error says). */
export function textOf(result: ToolCallOutcome): string {
  return (result.content ?? [])
    .map((block) => (block.type === 'text' ? (block.text ?? '') : ''))
    .join('\n')
    .trim();
}

/** Copies text; a sandboxed frame may be refused the clipboard API, so the older way is tried. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    document.body.append(area);
    area.select();
    const done = document.execCommand('copy');
    area.remove();
    return done;
  }
}
