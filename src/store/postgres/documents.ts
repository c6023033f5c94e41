/**
 * The PostgreSQL driver's content-addressed documents (contract.ts, DocumentStore): one table
 * in the deployment's schema, created with the others (schema.ts), so a document one responder
 * stores is read by every responder of the schema. The primary key makes a put atomic across
 * processes (`ON CONFLICT DO NOTHING`: the first text stays); it resolves after its COMMIT.
 */
import type pg from 'pg';
import { isoSeconds } from '../../protocol/receipt.js';
import { checkDocumentKey, checkDocumentText } from '../documents.js';
import { rows } from './pg-db.js';
import type { Tables } from './tables.js';

export class PgDocuments {
  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
    private readonly now: () => Date,
  ) {}

  async putOnce(kind: string, cid: string, text: string): Promise<'stored' | 'existing'> {
    checkDocumentKey(kind, cid);
    checkDocumentText(text);
    const got = await rows(
      this.pool,
      `INSERT INTO ${this.t.documents} (kind, cid, body, stored_at) VALUES ($1, $2, $3, $4)
      ON CONFLICT (kind, cid) DO NOTHING RETURNING 1 AS ok`,
      [kind, cid, text, isoSeconds(this.now())],
    );
    return got.length === 1 ? 'stored' : 'existing';
  }

  async get(kind: string, cid: string): Promise<string | null> {
    checkDocumentKey(kind, cid);
    const got = await rows<{ body: string }>(this.pool, `SELECT body FROM ${this.t.documents} WHERE kind = $1 AND cid = $2`, [kind, cid]);
    return got[0]?.body ?? null;
  }
}
