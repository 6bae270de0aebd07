import { stableJson } from './stable-json.js';

describe('stableJson', () => {
  it('prints the same bytes whatever order the keys were added in', () => {
    const a = { b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } };
    const b = { a: { c: null, d: [3, { y: 2, z: 1 }] }, b: 1 };
    expect(stableJson(a)).toBe(stableJson(b));
    expect(stableJson(a)).toBe('{\n  "a": {\n    "c": null,\n    "d": [\n      3,\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n');
  });

  it('keeps array order and leaves out undefined properties, as JSON.stringify does', () => {
    expect(JSON.parse(stableJson({ list: [3, 1, 2], gone: undefined }))).toEqual({ list: [3, 1, 2] });
    expect(stableJson({ gone: undefined })).toBe('{}\n');
  });
});
