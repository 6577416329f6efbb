// What a metadata-only change would change, as a dry run names it: pure logic.
import { describe, expect, it } from 'vitest';
import { attributeChanges } from '../../src/sync/attribute-changes.js';

describe('attributeChanges', () => {
  it('names each key given otherwise, added or dropped, sorted; ferry’s own keys and equal values are no change', () => {
    expect(
      attributeChanges(
        { metadata: { Kunde: 'Müller', Datum: '14.03.2026', gone: 'x', 'ferry.sha256': 'abc' }, ocrStrategy: 'detect' },
        { metadata: { Kunde: 'Müller GmbH', Datum: '14.03.2026', neu: '1', 'ferry.sha256': 'def' }, ocrStrategy: 'always' },
      ),
    ).toEqual([
      { key: 'gone', was: 'x', now: null },
      { key: 'Kunde', was: 'Müller', now: 'Müller GmbH' },
      { key: 'neu', was: null, now: '1' },
      { key: 'ocrStrategy', was: 'detect', now: 'always' },
    ]);
  });

  it('a setting the entry leaves out keeps the service’s value: no change', () => {
    expect(attributeChanges({ ocrEngine: 'engineA', metadata: { a: '1' } }, { metadata: { a: '1' } })).toEqual([]);
  });
});
