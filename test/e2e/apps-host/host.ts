// A minimal MCP Apps host page for the tests, built on the extension's own host side
// (AppBridge from @modelcontextprotocol/ext-apps/app-bridge): it puts a view in a sandboxed
// iframe on another origin, sends it the tool's input and result, and hands the view's
// tools/call to the test (window.hostCallTool), which forwards it to pgmcp with the official
// SDK client. Bundled for the browser by the test (Vite), served on loopback.
import {
  AppBridge,
  PostMessageTransport,
  buildAllowAttribute,
} from '@modelcontextprotocol/ext-apps/app-bridge';

interface OpenView {
  viewUrl: string;
  tool: { name: string; inputSchema: Record<string, unknown>; [key: string]: unknown };
  args: Record<string, unknown>;
  result: Record<string, unknown>;
  permissions?: Record<string, unknown>;
  theme?: 'light' | 'dark';
}

interface HostWindow {
  hostCallTool(params: unknown): Promise<Record<string, unknown>>;
  hostDownloads: unknown[];
  /** When set, the host answers ui/download-file as a person who pressed Cancel. */
  hostDeclinesDownloads: boolean;
  hostReady: boolean;
  openView(options: OpenView): Promise<void>;
}

const host = window as unknown as HostWindow;
host.hostDownloads = [];
host.hostDeclinesDownloads = false;

host.openView = async (options) => {
  const frame = document.createElement('iframe');
  frame.title = options.tool.name;
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-downloads');
  frame.setAttribute('allow', buildAllowAttribute(options.permissions as never));
  document.getElementById('views')!.append(frame);
  const bridge = new AppBridge(
    null,
    { name: 'pgmcp-test-host', version: '1.0.0' },
    { serverTools: {}, downloadFile: {}, logging: {} },
    {
      hostContext: {
        toolInfo: { tool: options.tool as never },
        theme: options.theme ?? 'light',
        displayMode: 'inline',
        platform: 'web',
        containerDimensions: { maxHeight: 640 },
      },
    },
  );
  bridge.oncalltool = async (params) => (await host.hostCallTool(params)) as never;
  bridge.ondownloadfile = async (params) => {
    host.hostDownloads.push(params);
    return host.hostDeclinesDownloads ? { isError: true } : {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) frame.style.height = `${Math.min(height, 640)}px`;
  };
  bridge.oninitialized = () => {
    void bridge
      .sendToolInput({ arguments: options.args })
      .then(() => bridge.sendToolResult(options.result as never));
  };
  // Listening before the view loads: its ui/initialize comes as soon as its script runs.
  await bridge.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
  frame.src = options.viewUrl;
};
host.hostReady = true;
