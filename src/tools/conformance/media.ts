// Tiny media for the image, audio and binary-resource fixtures. Generated for pgmcp: a 2×2 RGB
// PNG (teal/orange checker) and 2 ms of 8 kHz mono 8-bit PCM WAV. A unit test decodes both.

export const PNG_MIME_TYPE = 'image/png';
export const WAV_MIME_TYPE = 'audio/wav';

export const TINY_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAE0lEQVR42mNgaGj438PAAMINDQAkpgUXP48eKQAAAABJRU5ErkJggg==';

export const TINY_WAV_BASE64 =
  'UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YRAAAACgoGBgoKBgYKCgYGCgoGBg';
