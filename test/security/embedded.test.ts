// The hostile corpus on the embedded PGlite: one backend session shared by every call (so a
// setting that survived one call would be seen by the next), superuser, and no
// statement_timeout of its own (pgmcp restarts the child to stop a runaway statement).
import { describe } from 'vitest';
import { runSecuritySuite } from './harness.js';
import { embeddedTarget } from './targets.js';

describe('read-only promise on the embedded database', () => {
  runSecuritySuite('embedded PGlite', () => embeddedTarget());
});
