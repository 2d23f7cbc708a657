// Conformance resources and the one resource template. Contents the suites compare are verbatim.
import type { ResourceSpec, ResourceTemplateSpec } from '../../core/specs.js';
import { compileUriTemplate } from '../uri-template.js';
import { PNG_MIME_TYPE, TINY_PNG_BASE64 } from './media.js';
import { completeFrom } from './support.js';

export const staticText: ResourceSpec = {
  uri: 'test://static-text',
  name: 'static-text',
  title: 'Static text',
  description: 'A fixed plain-text resource (conformance: resources-read-text).',
  mimeType: 'text/plain',
  read: async () => ({
    contents: [
      {
        uri: 'test://static-text',
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource.',
      },
    ],
  }),
};

export const staticBinary: ResourceSpec = {
  uri: 'test://static-binary',
  name: 'static-binary',
  title: 'Static binary',
  description: 'A small PNG served as a base64 blob (conformance: resources-read-binary).',
  mimeType: PNG_MIME_TYPE,
  read: async () => ({
    contents: [{ uri: 'test://static-binary', mimeType: PNG_MIME_TYPE, blob: TINY_PNG_BASE64 }],
  }),
};

/** Subscribed to and unsubscribed from by resources-subscribe / -unsubscribe. */
export const watched: ResourceSpec = {
  uri: 'test://watched-resource',
  name: 'watched-resource',
  title: 'Watched resource',
  description:
    'A resource clients may subscribe to (conformance: resources-subscribe, resources-unsubscribe).',
  mimeType: 'text/plain',
  read: async () => ({
    contents: [
      { uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content.' },
    ],
  }),
};

export const TEMPLATE_URI = 'test://template/{id}/data';
const matchTemplate = compileUriTemplate(TEMPLATE_URI);
const KNOWN_IDS = ['1', '12', '123', '1234', '42', '7'];

export const dataTemplate: ResourceTemplateSpec = {
  uriTemplate: TEMPLATE_URI,
  name: 'template-data',
  title: 'Data by id',
  description: 'JSON data for any id (conformance: resources-templates-read).',
  mimeType: 'application/json',
  match: matchTemplate,
  read: async (uri, vars) => ({
    contents: [
      {
        uri,
        mimeType: 'application/json',
        text: JSON.stringify({
          id: vars.id,
          templateTest: true,
          data: `Data for ID: ${vars.id ?? ''}`,
        }),
      },
    ],
  }),
  complete: async (argument, value) =>
    argument === 'id' ? completeFrom(KNOWN_IDS, value) : { values: [], total: 0, hasMore: false },
};

export const conformanceResources: readonly ResourceSpec[] = [staticText, staticBinary, watched];
export const conformanceTemplates: readonly ResourceTemplateSpec[] = [dataTemplate];
