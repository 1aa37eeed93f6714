import { describe, expect, it } from 'vitest';
import { httpDateForm, isEntityTag, opaqueTag } from '../../suites/versioning/support.js';

describe('entity-tag syntax', () => {
  it('accepts weak and strong tags, refuses unquoted or malformed ones', () => {
    expect(isEntityTag('W/"3"')).toBe(true);
    expect(isEntityTag('"abc-1"')).toBe(true);
    expect(isEntityTag('""')).toBe(true);
    expect(isEntityTag('3')).toBe(false);
    expect(isEntityTag('w/"3"')).toBe(false);
    expect(isEntityTag('"a"b"')).toBe(false);
    expect(isEntityTag(undefined)).toBe(false);
  });

  it('compares weak and strong forms of one version equal', () => {
    expect(opaqueTag('W/"7"')).toBe(opaqueTag('"7"'));
    expect(opaqueTag('W/"7"')).not.toBe(opaqueTag('W/"8"'));
  });
});

describe('HTTP-date forms', () => {
  it('names the three RFC 9110 forms', () => {
    expect(httpDateForm('Sun, 06 Nov 1994 08:49:37 GMT')).toBe('IMF-fixdate');
    expect(httpDateForm('Sunday, 06-Nov-94 08:49:37 GMT')).toBe('rfc850-date');
    expect(httpDateForm('Sun Nov  6 08:49:37 1994')).toBe('asctime-date');
  });

  it('refuses ISO 8601 and other non-HTTP dates', () => {
    expect(httpDateForm('2025-01-06T10:00:00Z')).toBeUndefined();
    expect(httpDateForm('Sun, 06 Nov 1994 08:49:37 UTC')).toBeUndefined();
    expect(httpDateForm(undefined)).toBeUndefined();
  });

  it('accepts what Date#toUTCString produces', () => {
    expect(httpDateForm(new Date(0).toUTCString())).toBe('IMF-fixdate');
  });
});
