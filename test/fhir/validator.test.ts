import { describe, expect, test } from 'vitest';
import { createFhirValidator, DEFAULT_TYPES, MAX_ISSUES, sharedFhirValidator } from '../../src/fhir/index.js';
import type { Release } from '../../src/fhir/index.js';
import { encounterWithContained, medicationRequest, REQUIRED_ELEMENT, searchsetBundle, VALID, XHTML_DIV } from './samples.js';
import type { Sample } from './samples.js';

const validator = sharedFhirValidator();
const RELEASES: Release[] = ['R4', 'R5'];

interface InvalidCase {
  name: string;
  mutate: (r: Sample) => void;
  path: string;
  message: RegExp;
}

const WRONG_TYPE: InvalidCase = { name: 'wrong type', mutate: (r) => (r.id = 42), path: 'id', message: /^must be a string$/ };
const UNKNOWN_PROPERTY: InvalidCase = { name: 'unknown property', mutate: (r) => (r.colour = 'blue'), path: 'colour', message: /^unknown property/ };
const BAD_REFERENCE_MESSAGE = /^must be an object$/;
const IDENTIFIER_USE_ENUM = /^must be equal to one of the allowed values \(usual, official, temp, secondary, old\)$/;

/** Mutations every DomainResource type must reject with exactly one precise issue. */
const DOMAIN_RESOURCE_INVALID: InvalidCase[] = [
  WRONG_TYPE,
  { name: 'missing required element', mutate: (r) => (r.text = { status: 'generated' }), path: 'text.div', message: /^required property missing$/ },
  {
    name: 'bad enum',
    mutate: (r) => (r.text = { status: 'bogus', div: XHTML_DIV }),
    path: 'text.status',
    message: /^must be equal to one of the allowed values \(generated, extensions, additional, empty\)$/,
  },
  {
    name: 'bad reference shape',
    mutate: (r) => (r.extension = [{ url: 'http://example.org/ext', valueReference: 'Patient/1' }]),
    path: 'extension[0].valueReference',
    message: BAD_REFERENCE_MESSAGE,
  },
  UNKNOWN_PROPERTY,
];

/** Bundle is a plain Resource (no text, extension or contained): the same kinds of mistake, elsewhere. */
const BUNDLE_INVALID: InvalidCase[] = [
  WRONG_TYPE,
  {
    name: 'missing required element',
    mutate: (r) => delete ((r.entry as Sample[])[0].resource as Sample).resourceType,
    path: 'entry[0].resource.resourceType',
    message: /^required property missing$/,
  },
  { name: 'bad enum', mutate: (r) => (r.identifier = { use: 'bogus' }), path: 'identifier.use', message: IDENTIFIER_USE_ENUM },
  { name: 'bad reference shape', mutate: (r) => (r.identifier = { assigner: 'Organization/1' }), path: 'identifier.assigner', message: BAD_REFERENCE_MESSAGE },
  UNKNOWN_PROPERTY,
];

describe.each(RELEASES)('%s default types', (release) => {
  test('every default type has a sample', () => {
    expect(Object.keys(VALID[release]).sort()).toEqual([...DEFAULT_TYPES[release]].sort());
  });

  describe.each(Object.keys(VALID[release]))('%s', (type) => {
    test('valid sample has no issues', () => {
      expect(validator.supports(release, type)).toBe(true);
      expect(validator.validate(release, VALID[release][type]())).toEqual([]);
    });

    test.each(type === 'Bundle' ? BUNDLE_INVALID : DOMAIN_RESOURCE_INVALID)('$name gives one precise issue', ({ mutate, path, message }) => {
      const resource = VALID[release][type]();
      mutate(resource);
      const issues = validator.validate(release, resource);
      expect(issues).toHaveLength(1);
      expect(issues[0].path).toBe(path);
      expect(issues[0].message).toMatch(message);
    });

    const required = REQUIRED_ELEMENT[release]?.[type];
    if (required !== undefined) {
      test(`missing top-level required ${required}`, () => {
        const resource = VALID[release][type]();
        delete resource[required];
        expect(validator.validate(release, resource)).toEqual([{ path: required, message: 'required property missing' }]);
      });
    }
  });
});

describe('type-specific rules', () => {
  test('R4 Encounter.status outside its enum', () => {
    const encounter = { ...encounterWithContained(), status: 'done' };
    const issues = validator.validate('R4', encounter);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: 'status' });
    expect(issues[0].message).toMatch(/^must be equal to one of the allowed values \(planned, arrived, .*, …\)$/);
  });

  test('R4 reference given as a string or with a non-string reference', () => {
    expect(validator.validate('R4', { ...medicationRequest(), subject: 'Patient/1' })).toEqual([{ path: 'subject', message: 'must be an object' }]);
    expect(validator.validate('R4', { ...medicationRequest(), subject: { reference: 7 } })).toEqual([
      { path: 'subject.reference', message: 'must be a string' },
    ]);
  });

  test('R5 Patient name use outside its enum', () => {
    const issues = validator.validate('R5', { resourceType: 'Patient', name: [{ use: 'nick', family: 'X' }] });
    expect(issues).toHaveLength(1);
    expect(issues[0].path).toBe('name[0].use');
    expect(issues[0].message).toContain('official');
  });

  test('primitive pattern errors name the FHIR type', () => {
    expect(validator.validate('R4', { resourceType: 'Patient', birthDate: '01/02/1980' })).toEqual([
      { path: 'birthDate', message: 'must be a valid FHIR date' },
    ]);
    expect(validator.validate('R5', { resourceType: 'Patient', birthDate: '1980-13-01' })).toEqual([
      { path: 'birthDate', message: 'must be a valid FHIR date' },
    ]);
  });

  test('R5 decimals validate (the stray-brace pattern is fixed)', () => {
    const patient = (value: unknown) => ({ resourceType: 'Patient', extension: [{ url: 'http://example.org/w', valueDecimal: value }] });
    expect(validator.validate('R5', patient(72.5))).toEqual([]);
    expect(validator.validate('R5', patient('72.5'))).toEqual([{ path: 'extension[0].valueDecimal', message: 'must be a number' }]);
  });

  test('R4 rejects the Medplum-only Meta and Reference properties', () => {
    const resource = { ...medicationRequest(), meta: { project: 'p1' }, subject: { reference: 'Patient/1', resource: {} } };
    expect(validator.validate('R4', resource)).toEqual([
      { path: 'meta.project', message: 'unknown property (not defined by the FHIR schema)' },
      { path: 'subject.resource', message: 'unknown property (not defined by the FHIR schema)' },
    ]);
  });
});

describe('nested resources', () => {
  test('the spec Encounter with contained Condition, ClinicalImpression, CarePlan and #condition-N diagnoses is valid', () => {
    expect(validator.validate('R4', encounterWithContained())).toEqual([]);
  });

  test('a bad contained resource is reported under its contained path', () => {
    const encounter = encounterWithContained();
    const contained = encounter.contained as Sample[];
    delete contained[0].subject;
    (contained[4] as Sample).status = 42;
    expect(validator.validate('R4', encounter)).toEqual([
      { path: 'contained[0].subject', message: 'required property missing' },
      { path: 'contained[4].status', message: 'must be a string' },
    ]);
  });

  test('a bad Bundle entry is reported with a path into the entry', () => {
    const entries = Array.from({ length: 5 }, () => medicationRequest());
    (entries[3].subject as Sample).reference = 42;
    expect(validator.validate('R4', searchsetBundle(entries))).toEqual([{ path: 'entry[3].resource.subject.reference', message: 'must be a string' }]);
  });

  test('an entry resource without resourceType, of an unknown type or not an object', () => {
    const bundle = searchsetBundle([medicationRequest()]);
    (bundle.entry as Sample[]).push({ resource: { id: 'x' } }, { resource: { resourceType: 'Spaceship' } }, { resource: 'MedicationRequest/1' });
    expect(validator.validate('R4', bundle)).toEqual([
      { path: 'entry[1].resource.resourceType', message: 'required property missing' },
      { path: 'entry[3].resource', message: 'must be an object' },
      { path: 'entry[2].resource.resourceType', message: 'unsupported resourceType "Spaceship": not a FHIR R4 resource type' },
    ]);
  });

  test('a Bundle inside a Bundle is followed', () => {
    const inner = searchsetBundle([{ resourceType: 'Patient', gender: 'robot' }]);
    const issues = validator.validate('R4', searchsetBundle([inner]));
    expect(issues.map((i) => i.path)).toEqual(['entry[0].resource.entry[0].resource.gender']);
  });

  test('issues are capped, the last one counting those left out', () => {
    const entries = Array.from({ length: 30 }, () => ({ ...medicationRequest(), status: 1 }));
    const issues = validator.validate('R4', searchsetBundle(entries));
    expect(issues).toHaveLength(MAX_ISSUES);
    expect(issues[0]).toEqual({ path: 'entry[0].resource.status', message: 'must be a string' });
    expect(issues[MAX_ISSUES - 1]).toEqual({ path: '', message: '11 more issues not shown' });
  });
});

describe('dispatch', () => {
  test('unknown and unconfigured resource types give one issue', () => {
    expect(validator.validate('R4', { resourceType: 'Spaceship' })).toEqual([
      { path: 'resourceType', message: 'unsupported resourceType "Spaceship": not a FHIR R4 resource type' },
    ]);
    const issues = validator.validate('R5', medicationRequest());
    expect(issues).toHaveLength(1);
    expect(issues[0].message).toMatch(/^unsupported resourceType "MedicationRequest": not among the types validated for R5 \(DocumentReference, /);
  });

  test.each([null, 'Patient', 42, [], undefined])('non-object input %j', (input) => {
    const issues = validator.validate('R4', input);
    expect(issues).toHaveLength(1);
    expect(issues[0].path).toBe('');
    expect(issues[0].message).toMatch(/^must be a JSON object \(a FHIR resource\), got /);
  });

  test('missing or non-string resourceType', () => {
    expect(validator.validate('R4', { id: '1' })).toEqual([{ path: 'resourceType', message: 'required property missing' }]);
    expect(validator.validate('R4', { resourceType: 4 })).toEqual([{ path: 'resourceType', message: 'must be a string' }]);
  });

  test('supports follows the configured types and the schema', () => {
    const custom = createFhirValidator({ types: { R4: ['Observation', 'NotAType'] } });
    expect(custom.supports('R4', 'Observation')).toBe(true);
    expect(custom.supports('R4', 'NotAType')).toBe(false);
    expect(custom.supports('R4', 'MedicationRequest')).toBe(false);
    expect(custom.supports('R5', 'DocumentReference')).toBe(true);
    expect(custom.validate('R4', { resourceType: 'Observation', status: 'final', code: { text: 'BP' } })).toEqual([]);
    expect(validator.supports('R5', 'MedicationRequest')).toBe(false);
  });

  test('sharedFhirValidator is one instance', () => {
    expect(sharedFhirValidator()).toBe(validator);
  });
});

describe('what the schemas do not check (see docs/fhir-validation.md)', () => {
  test('R4 MedicationRequest.status and intent accept any code', () => {
    expect(validator.validate('R4', { ...medicationRequest(), status: 'bogus', intent: 'whatever' })).toEqual([]);
  });

  test('R5 Patient.gender accepts any code', () => {
    expect(validator.validate('R5', { resourceType: 'Patient', gender: 'robot' })).toEqual([]);
  });

  test('local references need not resolve to a contained resource', () => {
    const encounter = { ...encounterWithContained(), diagnosis: [{ condition: { reference: '#condition-9' } }] };
    expect(validator.validate('R4', encounter)).toEqual([]);
  });
});
