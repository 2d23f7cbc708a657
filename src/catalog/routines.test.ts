import { describe, expect, it } from 'vitest';
import { parseRoutineComment } from './routines.js';

describe('parseRoutineComment', () => {
  it('needs an @mcp line', () => {
    expect(parseRoutineComment('Just prose.')).toBeNull();
    expect(parseRoutineComment('@mcp_name x\nprose mentioning @mcp inline')).toBeNull();
  });

  it('takes the description from @mcp_description, then @mcp text, then prose', () => {
    expect(parseRoutineComment('@mcp Adds.\nProse.')?.description).toBe('Adds.');
    expect(parseRoutineComment('Line one.\n@mcp\nLine two.')?.description).toBe(
      'Line one.\nLine two.',
    );
    expect(parseRoutineComment('@mcp Short.\n@mcp_description Long one.')?.description).toBe(
      'Long one.',
    );
    expect(parseRoutineComment('@mcp')?.description).toBeNull();
  });

  it('reads the name, roles and tags, and ignores other annotations', () => {
    expect(
      parseRoutineComment(
        '@mcp\n@mcp_name get_it\n@authorize admin, auditor\n@tags a, b\n@http GET',
      ),
    ).toEqual({
      name: 'get_it',
      description: null,
      authorize: ['admin', 'auditor'],
      tags: ['a', 'b'],
    });
    expect(parseRoutineComment('@mcp\n@authorize')?.authorize).toEqual([]);
  });
});
