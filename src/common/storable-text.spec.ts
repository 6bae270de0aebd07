import { storableJson, storableText, UNSTORABLE } from './storable-text.js';

describe('storableText', () => {
  it('replaces U+0000 and unpaired surrogates by U+FFFD, and keeps pairs and everything else', () => {
    expect(storableText('a\u0000b')).toBe('a\uFFFDb');
    expect(storableText('\uD800x\uDC00')).toBe('\uFFFDx\uFFFD');
    expect(storableText('😀 ok \u202E')).toBe('😀 ok \u202E');
    expect(UNSTORABLE.test(storableText('\u0000\uD83D\uD800\uDE00'))).toBe(false);
  });

  it('storableJson makes every string and key of a value storable, and parses back to the same shape', () => {
    const text = storableJson({ locationId: '\u0000', list: ['\uDBFF', 1, null], ['k\u0000']: { deep: 'x\uD800' } });
    expect(UNSTORABLE.test(text)).toBe(false);
    expect(JSON.parse(text)).toEqual({ locationId: '\uFFFD', list: ['\uFFFD', 1, null], ['k\uFFFD']: { deep: 'x\uFFFD' } });
  });
});
