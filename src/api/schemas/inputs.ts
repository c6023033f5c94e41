/**
 * Request pieces many operations share, as TypeBox schemas: each is a JSON Schema (what REST,
 * MCP and OpenAPI see) and a TypeScript type (`Static<typeof X>`, what an operation's `run`
 * receives), declared once.
 */
import { Type } from '@sinclair/typebox';

export const Scope = Type.Object(
  {
    user_id: Type.Optional(Type.String({ maxLength: 200 })),
    agent_id: Type.Optional(Type.String({ maxLength: 200 })),
    run_id: Type.Optional(Type.String({ maxLength: 200 })),
    org_id: Type.Optional(Type.String({ maxLength: 200 })),
  },
  {
    additionalProperties: false,
    description:
      'multi-tenant binding: reads see only facts written under the same four-tuple; bound into the receipt. A read naming a scope needs `Authorization: Bearer` for it (POST /v1/scope_bearer), sent as the HTTP header of the REST or MCP request (docs/scopes.md)',
  },
);

/** An Ed25519 public key or a fact_cid: 52 lowercase base32 characters. */
export const B32Key = Type.String({ pattern: '^[a-z2-7]{52}$' });

/** An Ed25519 signature: 103 lowercase base32 characters (64 bytes). */
export const B32Signature = Type.String({ pattern: '^[a-z2-7]{103}$' });

export const Cell = Type.String({ minLength: 1, maxLength: 200, description: 'cell64 (e.g. defi.zb64a.cike.zfa2f) or a place name' });
export const Bands = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 64, description: 'namespaced band keys (see /v1/bands)' });
export const Tslot = Type.Integer({ minimum: 0, description: "count of the band's tempo unit since the Unix epoch" });
export const Rfc3339 = Type.String({ minLength: 10, maxLength: 40, description: 'RFC 3339 time' });

/** A string from a fixed list (a JSON Schema `enum`, typed as the union of its members). */
export function OneOf<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
