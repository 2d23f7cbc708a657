import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { TINY_PNG_BASE64, TINY_WAV_BASE64 } from './media.js';

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

describe('conformance media', () => {
  it('PNG is a well-formed 2x2 RGB image with valid chunk checksums', () => {
    const png = Buffer.from(TINY_PNG_BASE64, 'base64');
    expect(png.subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );
    const chunks: Array<{ type: string; data: Buffer }> = [];
    let at = 8;
    while (at < png.length) {
      const length = png.readUInt32BE(at);
      const typeAndData = png.subarray(at + 4, at + 8 + length);
      expect(png.readUInt32BE(at + 8 + length)).toBe(crc32(typeAndData));
      chunks.push({
        type: typeAndData.subarray(0, 4).toString('ascii'),
        data: typeAndData.subarray(4),
      });
      at += 12 + length;
    }
    expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    const ihdr = chunks[0]!.data;
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9]]).toEqual([2, 2, 8, 2]);
    // two scanlines of (filter byte + 2 pixels × 3 bytes)
    expect(inflateSync(chunks[1]!.data)).toHaveLength(14);
  });

  it('WAV is a RIFF/WAVE PCM file whose sizes add up', () => {
    const wav = Buffer.from(TINY_WAV_BASE64, 'base64');
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    expect(wav.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(wav.readUInt16LE(20)).toBe(1); // PCM
    expect(wav.readUInt32LE(24)).toBe(8000);
    expect(wav.toString('ascii', 36, 40)).toBe('data');
    expect(wav.readUInt32LE(40)).toBe(wav.length - 44);
  });
});
