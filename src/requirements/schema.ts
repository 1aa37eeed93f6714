import { AREAS } from './types.js';

export const REQUIREMENT_ID_PATTERN = '^[a-z0-9-]+\\.[a-z0-9-]+(\\.[a-z0-9-]+)*$';

/** JSON Schema of suites/requirements.json. */
export const requirementsFileSchema = {
  type: 'object',
  required: ['specVersion', 'requirements'],
  additionalProperties: false,
  properties: {
    specVersion: { type: 'string', minLength: 1 },
    requirements: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'area', 'section', 'text', 'level', 'testable'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', pattern: REQUIREMENT_ID_PATTERN },
          area: { type: 'string', enum: [...AREAS] },
          section: { type: 'string', minLength: 1 },
          text: { type: 'string', minLength: 1 },
          level: { type: 'string', enum: ['MUST', 'SHOULD', 'observation'] },
          testable: { type: 'boolean' },
          reason: { type: 'string', minLength: 1 },
          notes: { type: 'string', minLength: 1 },
        },
        if: { properties: { testable: { const: false } } },
        then: { required: ['reason'] },
        else: { not: { required: ['reason'] } },
      },
    },
  },
} as const;
