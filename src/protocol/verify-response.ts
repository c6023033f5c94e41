/**
 * Whole-response verification (docs/verification.md; the byte rules are docs/protocol-notes.md
 * §4–§6): a receipt proves that the responder signed a
 * list of fact_cids; this module checks that the facts a response *shows* are the ones those
 * receipts bind. For every fact it recomputes fact_cid from the body, finds a covering receipt
 * that lists it (the fact's own per-fact receipt, or an envelope receipt above it) and names
 * its cell, and checks every receipt's signature and carried merkle proof. Per-cell receipts
 * (`by_cell.<cell>.receipt`) must name their cell; other objects citing a fact_cid must cite
 * one a covering receipt binds, with the same value when the full fact is also present.
 *
 * Contract (style: malformed input is reported, never thrown): a verdict lists per receipt, per
 * fact and per reference what was checked and which coded failures occurred.
 */
import { isCell } from './cell64.js';
import { factCid, isFactCid } from './cid.js';
import { b32decode } from './base32.js';
import { batchRootFromProof, proofFromJson } from './merkle-batch.js';
import { equalBytes } from './bytes.js';
import { verifyReceipt, type ReceiptFailure, type VerifyOptions } from './receipt.js';
import { isObject, newCheck, fail as failCheck, type CheckInput, type CheckReport, type Json, type ResponseFailure } from './response-checks.js';
import { checkAnswer, isAnswer } from './verify-answer.js';
import { checkFieldAnswer, isFieldAnswer } from './field-boundaries.js';
import { checkHotspots } from './verify-hunt.js';
import { checkSearchResults, isSearchResponse } from './verify-search.js';

export type { CheckReport, ResponseFailure } from './response-checks.js';

/** Receipt fields a verifier shows but the signature does not cover (docs/verification.md, "What is not signed"). */
export const UNSIGNED_RECEIPT_FIELDS = ['schema_cid', 'registry_cid', 'responder_key_epoch', 'cost', 'intent'] as const;

export interface ReceiptReport {
  path: string;
  primitive: string | null;
  signer: string | null;
  preimage_version: number | null;
  cells: number;
  fact_cids: number;
  valid: boolean;
  trusted: boolean;
  failures: ReceiptFailure[];
  errors: string[];
}

/** Serving metadata beside a fact (not signed; see `fact_meta` in docs/verification.md). */
export interface FactMeta {
  attester?: string;
  attester_role?: string;
  log_index?: number;
  accepted_at?: string;
  source?: string;
  function?: string;
  declared_unit?: string;
  provenance_class?: string;
}

export interface FactReport {
  path: string;
  fact_cid: string;
  recomputed_cid: string | null;
  kind: unknown;
  cell: unknown;
  band: unknown;
  tslot: unknown;
  value: unknown;
  unit: unknown;
  /** Paths of the valid receipts that list this fact_cid and name its cell. */
  bound_by: string[];
  meta: FactMeta | null;
  /** Batch root the fact's own receipt proves it into (b32), when it carries a proof. */
  batch_root: string | null;
  ok: boolean;
  failures: ResponseFailure[];
  errors: string[];
}

export interface ReferenceReport {
  path: string;
  fact_cid: string;
  bound_by: string[];
  /** True when the full fact is in the response too and the values beside the cid were compared. */
  compared: boolean;
  ok: boolean;
  failures: ResponseFailure[];
  errors: string[];
}

export interface ResponseVerdict {
  /** Every receipt verifies, every fact recomputes and is bound, every reference is bound, every check passes. */
  valid: boolean;
  /** `valid` and every receipt is signed by the pinned (or a trusted) key. */
  trusted: boolean;
  /** True when the input was a bare receipt (no response around it). */
  bare_receipt: boolean;
  signers: string[];
  receipts: ReceiptReport[];
  facts: FactReport[];
  references: ReferenceReport[];
  /** What the response shows against what its receipts bind: bound cids shown, search results, hotspots, answers. */
  checks: CheckReport[];
  failures: ResponseFailure[];
  errors: string[];
  /** What a reader should know the signatures do not cover. */
  unsigned: string[];
}

const FACT_KINDS = new Set(['primary', 'absence', 'derivative']);
// Objects whose fact_cids describe work, not evidence: not checked as references.
const NOT_EVIDENCE = new Set(['materialize_notes', 'fact_meta', 'merkle_proofs', 'duplicates']);
const REFERENCE_LISTS = new Set(['fact_cids', 'evidence_cids']);

/** A receipt-shaped object (what `receipt` keys hold, or a bare receipt document). */
export function looksLikeReceipt(x: unknown): x is Json {
  return isObject(x) && typeof x.signature === 'string' && typeof x.primitive === 'string' && Array.isArray(x.fact_cids);
}

/**
 * A served fact: a fact_cid beside a fact kind and a band or cell, or beside its own per-fact
 * receipt (primitive `<prefix>.fact`), so that deleting or garbling any one field still leaves
 * it checked as a fact.
 */
function looksLikeFact(o: Json): boolean {
  if (typeof o.fact_cid !== 'string') return false;
  // Summaries (trajectory points, diff ends) carry kind and value but neither cell nor band.
  if (typeof o.kind === 'string' && FACT_KINDS.has(o.kind) && ('band' in o || 'cell' in o)) return true;
  return isObject(o.receipt) && typeof o.receipt.primitive === 'string' && o.receipt.primitive.endsWith('.fact');
}

interface Covering {
  path: string;
  receipt: Json;
  report: ReceiptReport;
  cids: Set<string>;
  cells: Set<string>;
}

/** A part of the response a shape check reads once every fact is known. */
interface Shape {
  run: (x: CheckInput) => CheckReport;
  node: Json;
  path: string;
  chain: Covering[];
}

/** Verify every receipt, fact and fact reference in a response (or a bare receipt). */
export function verifyResponse(doc: unknown, opts: VerifyOptions = {}): ResponseVerdict {
  const v: ResponseVerdict = {
    valid: false,
    trusted: false,
    bare_receipt: false,
    signers: [],
    receipts: [],
    facts: [],
    references: [],
    checks: [],
    failures: [],
    errors: [],
    unsigned: [
      `receipt fields ${UNSIGNED_RECEIPT_FIELDS.join(', ')} are shown but not signed`,
      'response fields outside facts and receipts (captions, caveats, notes, aggregates, fact_meta) are not signed',
      'search scores, answer words between facts (titles, place labels, interpretations) and hunt sample reports are shown, not signed',
    ],
  };
  const memo = new Map<string, ReceiptReport>();
  const metas = collectFactMeta(doc);
  const fullFacts = new Map<string, Json>();

  const checkReceipt = (r: Json, path: string): ReceiptReport => {
    const key = JSON.stringify(r);
    const seen = memo.get(key);
    if (seen) return { ...seen, path };
    const rv = verifyReceipt(r, opts);
    const rep: ReceiptReport = {
      path,
      primitive: typeof r.primitive === 'string' ? r.primitive : null,
      signer: rv.signer,
      preimage_version: rv.preimage_version,
      cells: Array.isArray(r.cells) ? r.cells.length : 0,
      fact_cids: Array.isArray(r.fact_cids) ? r.fact_cids.length : 0,
      valid: rv.valid,
      trusted: rv.valid && rv.trusted,
      failures: rv.failures,
      errors: rv.errors,
    };
    memo.set(key, rep);
    return rep;
  };
  const coverings: Covering[] = [];
  const covering = (r: Json, path: string): Covering => {
    const c: Covering = {
      path,
      receipt: r,
      report: checkReceipt(r, path),
      cids: new Set((r.fact_cids as unknown[]).filter((c): c is string => typeof c === 'string')),
      cells: new Set(Array.isArray(r.cells) ? (r.cells as unknown[]).filter((c): c is string => typeof c === 'string') : []),
    };
    coverings.push(c);
    return c;
  };
  // fact_cids each receipt occurrence covers that the response shows (as a body or a citation).
  const shown = new Map<Covering, Set<string>>();
  const show = (cid: string, chain: Covering[]) => {
    for (const c of chain) {
      let set = shown.get(c);
      if (!set) shown.set(c, (set = new Set()));
      set.add(cid);
    }
  };
  const shapes: Shape[] = [];

  function walk(node: unknown, path: string, chain: Covering[], cellKey: string | undefined): void {
    // A fact_cid under any other name (newest_fact_cid, fact_cid_a …) still shows the fact to a reader.
    if (typeof node === 'string') {
      if (isFactCid(node)) show(node, chain);
      return;
    }
    if (Array.isArray(node)) {
      node.forEach((x, i) => walk(x, `${path}[${i}]`, chain, cellKey));
      return;
    }
    if (!isObject(node)) return;
    if (looksLikeFact(node)) {
      checkFact(node, path, chain, cellKey);
      return;
    }
    let here = chain;
    if (looksLikeReceipt(node.receipt)) {
      const c = covering(node.receipt, `${path}.receipt`);
      v.receipts.push(c.report);
      here = [c, ...chain];
      if (cellKey !== undefined && !c.cells.has(cellKey)) {
        fail(c.report, 'cell_mismatch', `${path}.receipt: the per-cell receipt does not name its cell ${cellKey}`);
      }
    }
    const primitive = here[0] && typeof here[0].receipt.primitive === 'string' ? here[0].receipt.primitive : undefined;
    if (isSearchResponse(node, primitive)) shapes.push({ run: checkSearchResults, node, path, chain: here });
    if (Array.isArray(node.hotspots)) shapes.push({ run: checkHotspots, node, path, chain: here });
    if (isAnswer(node, here !== chain ? primitive : undefined)) shapes.push({ run: checkAnswer, node, path, chain: here });
    if (here !== chain && isFieldAnswer(node, primitive)) shapes.push({ run: checkFieldAnswer, node, path, chain: here });
    for (const [k, x] of Object.entries(node)) {
      if (k === 'receipt' || NOT_EVIDENCE.has(k)) continue;
      const sub = `${path}.${k}`;
      if (k === 'merkle_proofs' || (k === 'fact_cid' && typeof x === 'string')) continue;
      if (REFERENCE_LISTS.has(k) && Array.isArray(x)) {
        x.forEach((c, i) => typeof c === 'string' && checkReference(c, `${sub}[${i}]`, here, undefined));
        continue;
      }
      if (k === 'by_cell' && isObject(x)) {
        for (const [cell, entry] of Object.entries(x)) walk(entry, `${sub}.${cell}`, here, cell);
        continue;
      }
      // Inside a by_cell entry every fact must be the entry's cell's: the key is passed down.
      walk(x, sub, here, cellKey);
    }
    if (typeof node.fact_cid === 'string') checkReference(node.fact_cid, `${path}.fact_cid`, here, node);
  }

  function checkFact(o: Json, path: string, chain: Covering[], cellKey: string | undefined): void {
    const claimed = o.fact_cid as string;
    const rep: FactReport = {
      path,
      fact_cid: claimed,
      recomputed_cid: null,
      kind: o.kind,
      cell: o.cell,
      band: o.band,
      tslot: o.tslot,
      value: o.value,
      unit: o.unit,
      bound_by: [],
      meta: metas.get(claimed) ?? null,
      batch_root: null,
      ok: false,
      failures: [],
      errors: [],
    };
    const own = o.receipt as Json | undefined;
    if (isObject(own) && isObject(own.merkle_proof) && Array.isArray(own.fact_cids) && own.fact_cids[0] === claimed && typeof own.merkle_proof.root === 'string') {
      rep.batch_root = own.merkle_proof.root;
    }
    let local = chain;
    if (looksLikeReceipt(o.receipt)) {
      const own = covering(o.receipt, `${path}.receipt`);
      v.receipts.push(own.report);
      local = [own, ...chain];
    }
    try {
      rep.recomputed_cid = factCid(o);
    } catch (e) {
      rep.errors.push(`cid_mismatch: ${path}: the body cannot be encoded canonically (${(e as Error).message})`);
    }
    if (rep.recomputed_cid !== claimed) {
      rep.failures.push('cid_mismatch');
      rep.errors.push(
        `cid_mismatch: ${path} (${String(o.band)} at ${String(o.cell)}): the body hashes to ${rep.recomputed_cid ?? '—'}, not to its fact_cid ${claimed}; a field of the fact was changed`,
      );
    }
    const listing = local.filter((c) => c.cids.has(claimed));
    if (listing.length === 0) {
      rep.failures.push('unbound_fact');
      rep.errors.push(`unbound_fact: ${path}: no receipt covering this fact lists ${claimed}`);
    } else {
      const cell = typeof o.cell === 'string' ? o.cell : undefined;
      const naming = listing.filter((c) => cell === undefined || !isCell(cell) || c.cells.has(cell));
      if (naming.length === 0) {
        rep.failures.push('cell_not_in_receipt');
        rep.errors.push(`cell_not_in_receipt: ${path}: the receipts listing ${claimed} do not name its cell ${String(o.cell)}`);
      }
      rep.bound_by = naming.filter((c) => c.report.valid).map((c) => c.path);
      if (naming.length > 0 && rep.bound_by.length === 0) {
        rep.errors.push(`${path}: every receipt binding this fact failed its own checks`);
      }
    }
    if (cellKey !== undefined && o.cell !== cellKey) {
      rep.failures.push('cell_mismatch');
      rep.errors.push(`cell_mismatch: ${path}: a fact at ${String(o.cell)} is filed under by_cell.${cellKey}`);
    }
    rep.ok = rep.failures.length === 0 && rep.bound_by.length > 0;
    if (rep.recomputed_cid === claimed) fullFacts.set(claimed, o);
    show(claimed, local);
    v.facts.push(rep);
  }

  const pendingRefs: { cid: string; path: string; chain: Covering[]; holder: Json | undefined }[] = [];
  function checkReference(cid: string, path: string, chain: Covering[], holder: Json | undefined): void {
    pendingRefs.push({ cid, path, chain, holder });
    show(cid, chain);
  }

  if (looksLikeReceipt(doc)) {
    v.bare_receipt = true;
    v.receipts.push(checkReceipt(doc, '$'));
  } else {
    walk(doc, '$', [], undefined);
  }

  // References are checked after the walk, when every full fact of the response is known.
  for (const p of pendingRefs) {
    const rep: ReferenceReport = { path: p.path, fact_cid: p.cid, bound_by: [], compared: false, ok: false, failures: [], errors: [] };
    rep.bound_by = p.chain.filter((c) => c.cids.has(p.cid) && c.report.valid).map((c) => c.path);
    if (!p.chain.some((c) => c.cids.has(p.cid))) {
      rep.failures.push('unbound_reference');
      rep.errors.push(`unbound_reference: ${p.path}: ${p.cid} is cited but no covering receipt lists it`);
    }
    const full = fullFacts.get(p.cid);
    if (full && p.holder) {
      rep.compared = true;
      for (const field of ['value', 'unit', 'band', 'tslot'] as const) {
        if (field in p.holder && field in full && JSON.stringify(p.holder[field]) !== JSON.stringify(full[field])) {
          rep.failures.push('reference_mismatch');
          rep.errors.push(`reference_mismatch: ${p.path}: ${field} ${JSON.stringify(p.holder[field])} differs from the signed fact's ${JSON.stringify(full[field])}`);
        }
      }
      const cell = p.holder.cell64 ?? p.holder.cell;
      if (typeof cell === 'string' && isCell(cell) && cell !== full.cell) {
        rep.failures.push('reference_mismatch');
        rep.errors.push(`reference_mismatch: ${p.path}: cell ${cell} differs from the signed fact's ${String(full.cell)}`);
      }
    }
    rep.ok = rep.failures.length === 0;
    v.references.push(rep);
  }

  function fail(r: ReceiptReport, f: ReceiptFailure | 'cell_mismatch', msg: string): void {
    (r.failures as string[]).push(f);
    r.errors.push(msg);
    r.valid = false;
    r.trusted = false;
  }

  // Merkle proofs handed out by a write (attest's `merkle_proofs`: fact_cid → proof).
  checkProofMaps(doc, '$', v);

  // A receipt binds what the answer rests on: a bound fact the response no longer shows was cut.
  for (const c of coverings) {
    if (!c.report.valid) continue;
    const missing = [...c.cids].filter((cid) => !shown.get(c)?.has(cid));
    if (missing.length === 0) continue;
    const rep = newCheck('bound_shown', c.path);
    for (const cid of missing) failCheck(rep, 'bound_not_shown', `${c.path} binds ${cid}, which the response shows nowhere (no fact body, no citation): it was left out`);
    v.checks.push(rep);
  }
  // Shape checks, now that every fact body is known: search results, hotspots, answers.
  for (const sh of shapes) {
    const cover = sh.chain[0];
    v.checks.push(sh.run({ node: sh.node, path: sh.path, receipt: cover?.report.valid ? cover.receipt : undefined, facts: fullFacts }));
  }

  if (v.receipts.length === 0) {
    v.failures.push('no_receipt');
    v.errors.push('no_receipt: the document carries no receipt to verify');
  }
  for (const r of v.receipts) {
    for (const f of r.failures) if (!v.failures.includes(f)) v.failures.push(f);
    v.errors.push(...r.errors.map((e) => (e.startsWith('$') ? e : `${r.path}: ${e}`)));
    if (r.signer && !v.signers.includes(r.signer)) v.signers.push(r.signer);
  }
  for (const item of [...v.facts, ...v.references, ...v.checks]) {
    for (const f of item.failures) if (!v.failures.includes(f)) v.failures.push(f);
    v.errors.push(...item.errors);
  }
  const factsOk = v.facts.every((f) => f.ok);
  v.valid = v.receipts.length > 0 && v.receipts.every((r) => r.valid) && factsOk && v.references.every((r) => r.ok) && v.checks.every((c) => c.ok);
  v.trusted = v.valid && v.receipts.every((r) => r.trusted);
  return v;
}

/** `fact_meta` maps anywhere in the response, merged (fact_cid → metadata). */
function collectFactMeta(doc: unknown): Map<string, FactMeta> {
  const out = new Map<string, FactMeta>();
  const visit = (x: unknown, depth: number): void => {
    if (depth > 6 || !isObject(x)) return;
    if (isObject(x.fact_meta)) for (const [cid, m] of Object.entries(x.fact_meta)) if (isObject(m)) out.set(cid, m as FactMeta);
    if (isObject(x.by_cell)) for (const e of Object.values(x.by_cell)) visit(e, depth + 1);
  };
  visit(doc, 0);
  return out;
}

/** Check each `merkle_proofs` entry (fact_cid → batch proof) takes its fact_cid to its root. */
function checkProofMaps(doc: unknown, path: string, v: ResponseVerdict): void {
  if (!isObject(doc) || !isObject(doc.merkle_proofs)) return;
  for (const [cid, proof] of Object.entries(doc.merkle_proofs)) {
    const rep: ReferenceReport = { path: `${path}.merkle_proofs.${cid}`, fact_cid: cid, bound_by: [], compared: false, ok: false, failures: [], errors: [] };
    try {
      const p = proofFromJson(proof as never);
      rep.ok = equalBytes(batchRootFromProof(b32decode(cid, 32, 'fact_cid'), p.index, p.siblings), p.root);
    } catch (e) {
      rep.errors.push(`merkle_inclusion: ${rep.path}: ${(e as Error).message}`);
    }
    if (!rep.ok) {
      rep.failures.push('merkle_inclusion');
      rep.errors.push(`merkle_inclusion: ${rep.path}: the proof does not take ${cid} to its root`);
    }
    const envelopeRoot = isObject(doc.receipt) && isObject(doc.receipt.merkle_proof) ? doc.receipt.merkle_proof.root : undefined;
    if (rep.ok && typeof envelopeRoot === 'string' && isObject(proof) && proof.root !== envelopeRoot) {
      rep.ok = false;
      rep.failures.push('merkle_inclusion');
      rep.errors.push(`merkle_inclusion: ${rep.path}: the proof's root is not the batch root the receipt signs`);
    }
    v.references.push(rep);
  }
}
