/**
 * The embedded driver's content-addressed documents (contract.ts, DocumentStore): a database
 * file of its own, `${dataDir}/documents.sqlite`, beside index.sqlite and transients.sqlite.
 * Not a table in index.sqlite, because that file is derived from the log: deleting it rebuilds
 * it, a schema upgrade drops and rebuilds it, and its writes wait in a deferred transaction for
 * up to 200 ms, while a document is not in the log and must be durable before `putOnce`
 * answers. Not in transients.sqlite either: that file holds short-lived state an operator may
 * lose, and documents are kept for good. Each put commits on its own, synchronously, with
 * `synchronous = FULL` (it survives a power cut, not only a crash).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { SvcError } from '../../protocol/errors.js';
import { isoSeconds } from '../../protocol/receipt.js';
import type { DocumentStore } from '../contract.js';
import { isDiskFull, storageFull } from '../disk-full.js';
import { checkDocumentKey, checkDocumentText } from '../documents.js';

export class SqliteDocuments implements DocumentStore {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, string, string, string], unknown>;
  private readonly read: Database.Statement<[string, string], string | undefined>;

  constructor(
    dataDir: string,
    private readonly now: () => Date,
  ) {
    this.db = new Database(join(dataDir, 'documents.sqlite'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS documents (
      kind      TEXT NOT NULL,
      cid       TEXT NOT NULL,
      body      TEXT NOT NULL,
      stored_at TEXT NOT NULL,
      PRIMARY KEY (kind, cid)
    ) WITHOUT ROWID;`);
    // Content-addressed: the first text under a cid stays; `changes` says whether this put wrote.
    this.insert = this.db.prepare('INSERT INTO documents (kind, cid, body, stored_at) VALUES (?, ?, ?, ?) ON CONFLICT (kind, cid) DO NOTHING');
    this.read = this.db.prepare('SELECT body FROM documents WHERE kind = ? AND cid = ?').pluck() as Database.Statement<[string, string], string | undefined>;
  }

  async putOnce(kind: string, cid: string, text: string): Promise<'stored' | 'existing'> {
    checkDocumentKey(kind, cid);
    checkDocumentText(text);
    try {
      return this.insert.run(kind, cid, text, isoSeconds(this.now())).changes === 1 ? 'stored' : 'existing';
    } catch (err) {
      if (isDiskFull(err)) throw storageFull('documents', err); // nothing stored: the caller may retry
      throw new SvcError('internal', `documents.putOnce: ${(err as Error).message}`, {}, { cause: err });
    }
  }

  async get(kind: string, cid: string): Promise<string | null> {
    checkDocumentKey(kind, cid);
    try {
      return this.read.get(kind, cid) ?? null;
    } catch (err) {
      throw new SvcError('internal', `documents.get: ${(err as Error).message}`, {}, { cause: err });
    }
  }

  close(): void {
    this.db.close();
  }
}
