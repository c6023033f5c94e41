/**
 * Field boundaries (docs/field-boundaries.md): the content ids an answer of polygons is signed
 * by, and the offline check of such an answer. A field is not a fact in the log: its id is the
 * content id of its body (`field_cid = b32(H(cbor(field minus field_cid)))`, the fact rule of
 * §4), and the answer's receipt lists every field_cid in `fact_cids`, in the order shown. The
 * receipt's `field` binding names the area (`aoi_cid`, the anchor of the box read) and how the
 * polygons were read (`derivation_cid`, the content id of the derivation block), so a verifier
 * holding only the answer and the responder key can check every coordinate, area and
 * confidence shown, the box they were clipped to, and that no field was added or left out.
 */
import { anchorId, contentId } from './cid.js';
import { fail, isObject, newCheck, type CheckInput, type CheckReport, type Json } from './response-checks.js';

/** The box an answer was read over, as it is anchored (degrees). */
export interface FieldArea {
  min_lat: number;
  min_lng: number;
  max_lat: number;
  max_lng: number;
}

/** The body a field_cid hashes: the field as served minus its field_cid. */
export function fieldBody<T extends Record<string, unknown>>(field: T): Omit<T, 'field_cid'> {
  const { field_cid: _c, ...body } = field;
  return body;
}

/** field_cid of a field (served form or bare body). */
export function fieldCid(field: Record<string, unknown>): string {
  return contentId(fieldBody(field));
}

/** aoi_cid of the box an answer covers: the anchor of `{kind: "bbox", min_lat, min_lng, max_lat, max_lng}`. */
export function fieldAreaCid(box: FieldArea): string {
  return anchorId({ kind: 'bbox', min_lat: box.min_lat, min_lng: box.min_lng, max_lat: box.max_lat, max_lng: box.max_lng });
}

/** The body a derivation_cid hashes: the derivation block minus its derivation_cid. */
export function derivationCid(derivation: Record<string, unknown>): string {
  const { derivation_cid: _d, ...body } = derivation;
  return contentId(body);
}

/** A part of a response that shows field polygons under a field-boundaries receipt. */
export function isFieldAnswer(node: Json, primitive: string | undefined): boolean {
  return Array.isArray(node.fields) && primitive !== undefined && primitive.endsWith('.field_boundaries');
}

/**
 * Each field recomputes to its field_cid, the receipt lists exactly the fields shown in the
 * order shown, and its `field` binding is the shown area and derivation.
 */
export function checkFieldAnswer(x: CheckInput): CheckReport {
  const r = newCheck('field_boundaries', `${x.path}.fields`);
  const fields = x.node.fields as unknown[];
  const receipt = x.receipt;
  if (!receipt) {
    fail(r, 'field_mismatch', `${r.path}: no valid receipt covers the fields, so none of them is bound`);
    return r;
  }
  const bound = Array.isArray(receipt.fact_cids) ? (receipt.fact_cids as unknown[]) : [];
  const shown: string[] = [];
  fields.forEach((f, i) => {
    const p = `${r.path}[${i}]`;
    if (!isObject(f) || typeof f.field_cid !== 'string') return fail(r, 'field_mismatch', `${p}: not a field with a field_cid`);
    let cid: string | undefined;
    try {
      cid = fieldCid(f);
    } catch (e) {
      return fail(r, 'field_mismatch', `${p}: the body cannot be encoded canonically (${(e as Error).message})`);
    }
    if (cid !== f.field_cid) fail(r, 'field_mismatch', `${p}: the body hashes to ${cid}, not to its field_cid ${f.field_cid}; a coordinate, area or property was changed`);
    shown.push(f.field_cid);
  });
  if (bound.length !== shown.length || bound.some((c, i) => c !== shown[i])) {
    fail(r, 'field_mismatch', `${r.path}: the receipt binds ${bound.length} field_cids, the answer shows ${shown.length} (or another order)`);
  }
  const binding = isObject(receipt.field) ? receipt.field : undefined;
  const area = isObject(x.node.area) ? x.node.area : undefined;
  const box = area && isObject(area.bbox) ? (area.bbox as unknown as FieldArea) : undefined;
  if (!binding) fail(r, 'field_mismatch', `${x.path}.receipt: carries no field binding {aoi_cid, derivation_cid}`);
  else {
    if (!box) fail(r, 'field_mismatch', `${x.path}.area.bbox: missing, so the signed aoi_cid cannot be checked`);
    else {
      let aoi: string | undefined;
      try {
        aoi = fieldAreaCid(box);
      } catch {
        aoi = undefined;
      }
      if (aoi !== binding.aoi_cid) fail(r, 'field_mismatch', `${x.path}.area.bbox: anchors to ${String(aoi)}, the receipt signs aoi_cid ${String(binding.aoi_cid)}`);
      if (area && area.aoi_cid !== undefined && area.aoi_cid !== binding.aoi_cid) fail(r, 'field_mismatch', `${x.path}.area.aoi_cid differs from the signed one`);
    }
    const d = isObject(x.node.derivation) ? x.node.derivation : undefined;
    if (!d) fail(r, 'field_mismatch', `${x.path}.derivation: missing, so the signed derivation_cid cannot be checked`);
    else {
      const dc = derivationCid(d);
      if (dc !== binding.derivation_cid || (d.derivation_cid !== undefined && d.derivation_cid !== dc)) {
        fail(r, 'field_mismatch', `${x.path}.derivation: hashes to ${dc}, the receipt signs derivation_cid ${String(binding.derivation_cid)}`);
      }
    }
  }
  return r;
}
