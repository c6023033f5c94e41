/**
 * Planar polygon work for field boundaries, in the global tile units of one zoom (y grows
 * southward, exterior rings have positive shoelace area, holes negative; sources/pmtiles/mvt.ts):
 *
 * - `clipRing`: Sutherland–Hodgman against an axis-aligned rectangle. Where a concave ring
 *   leaves and re-enters, the output runs back and forth along the rectangle's side; those
 *   overlapping stretches cancel in `dissolve`.
 * - `dissolve`: the union of interior-disjoint pieces (a field's parts from neighbouring tiles,
 *   each clipped to its own tile) as the sum of their oriented edges: collinear axis-aligned
 *   edges are split at each other's ends and cancel where they run in opposite directions,
 *   opposite copies of any other edge cancel, and what remains is re-linked into rings. The
 *   cut points on a shared tile edge are the same numbers in both pieces: the parts carry the
 *   same global vertices and `clipRing` interpolates each edge from its endpoints in one fixed
 *   order.
 * - `groupPieces`: which pieces are parts of one field (same id, or opposite overlapping edges
 *   on a tile edge between them).
 */

/** [x, y] in global tile units. */
export type Pt = [number, number];
/** An open ring (the last vertex is not repeated). */
export type Ring = Pt[];
/** A polygon: its exterior ring and holes, open. */
export interface Poly {
  outer: Ring;
  holes: Ring[];
}
/** An axis-aligned rectangle. */
export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** Twice the signed shoelace area (positive for exterior rings here). */
export function ringArea2(r: Ring): number {
  let s = 0;
  for (let i = 0, j = r.length - 1; i < r.length; j = i++) s += r[j][0] * r[i][1] - r[i][0] * r[j][1];
  return s;
}

/** The ring without its closing vertex and without repeated consecutive vertices. */
export function openRing(r: readonly Pt[]): Ring {
  const out: Ring = [];
  for (const p of r) {
    const q = out[out.length - 1];
    if (!q || q[0] !== p[0] || q[1] !== p[1]) out.push([p[0], p[1]]);
  }
  while (out.length > 1 && out[0][0] === out[out.length - 1][0] && out[0][1] === out[out.length - 1][1]) out.pop();
  return out;
}

/** Where segment a–b meets the line `axis` = c, computed from the endpoints in a fixed order. */
function cut(a: Pt, b: Pt, axis: 0 | 1, c: number): Pt {
  const [p, q] = a[0] < b[0] || (a[0] === b[0] && a[1] <= b[1]) ? [a, b] : [b, a];
  const t = (c - p[axis]) / (q[axis] - p[axis]);
  const other = axis === 0 ? 1 : 0;
  const v = p[other] + t * (q[other] - p[other]);
  return axis === 0 ? [c, v] : [v, c];
}

/** The part of a ring inside a rectangle (Sutherland–Hodgman); empty when nothing is left. */
export function clipRing(ring: Ring, rect: Rect): Ring {
  let pts = ring;
  const sides: Array<[0 | 1, number, (p: Pt) => boolean]> = [
    [0, rect.x0, (p) => p[0] >= rect.x0],
    [0, rect.x1, (p) => p[0] <= rect.x1],
    [1, rect.y0, (p) => p[1] >= rect.y0],
    [1, rect.y1, (p) => p[1] <= rect.y1],
  ];
  for (const [axis, c, inside] of sides) {
    if (pts.length === 0) break;
    const out: Ring = [];
    for (let i = 0; i < pts.length; i++) {
      const cur = pts[i];
      const prev = pts[(i + pts.length - 1) % pts.length];
      const ci = inside(cur);
      const pi = inside(prev);
      if (ci) {
        if (!pi) out.push(cut(prev, cur, axis, c));
        out.push(cur);
      } else if (pi) out.push(cut(prev, cur, axis, c));
    }
    pts = out;
  }
  const r = openRing(pts);
  return r.length >= 3 ? r : [];
}

const key = (p: Pt) => `${p[0]},${p[1]}`;

interface Edge {
  a: Pt;
  b: Pt;
  used: boolean;
}

/**
 * The net edges of signed rings: collinear axis-aligned edges split at each other's ends and
 * summed per stretch (opposite directions cancel), the other edges as they are (two pieces of
 * a field share no slanted edge: their common edges lie on tile edges). `slanted: false` keeps
 * only the axis-aligned result.
 */
function netEdges(rings: readonly Ring[], slanted = true): Edge[] {
  const lines = new Map<number, Array<{ lo: number; hi: number; dir: 1 | -1 }>>();
  const vertical = new Map<number, Array<{ lo: number; hi: number; dir: 1 | -1 }>>();
  const out: Edge[] = [];
  for (const r of rings) {
    for (let i = 0; i < r.length; i++) {
      const a = r[i];
      const b = r[(i + 1) % r.length];
      const isV = a[0] === b[0];
      if (isV && a[1] === b[1]) continue;
      if (isV || a[1] === b[1]) {
        const [map, c, s, t] = isV ? [vertical, a[0], a[1], b[1]] : [lines, a[1], a[0], b[0]];
        let list = map.get(c);
        if (!list) map.set(c, (list = []));
        list.push({ lo: Math.min(s, t), hi: Math.max(s, t), dir: t > s ? 1 : -1 });
      } else if (slanted) out.push({ a, b, used: false });
    }
  }
  for (const [map, isV] of [
    [vertical, true],
    [lines, false],
  ] as const) {
    for (const [c, list] of map) {
      const at = (u: number): Pt => (isV ? [c, u] : [u, c]);
      if (list.length === 1) {
        const e = list[0];
        out.push(e.dir > 0 ? { a: at(e.lo), b: at(e.hi), used: false } : { a: at(e.hi), b: at(e.lo), used: false });
        continue;
      }
      const stops = [...new Set(list.flatMap((e) => [e.lo, e.hi]))].sort((x, y) => x - y);
      const index = new Map(stops.map((u, i) => [u, i]));
      const diff = new Array<number>(stops.length).fill(0);
      for (const e of list) {
        diff[index.get(e.lo)!] += e.dir;
        diff[index.get(e.hi)!] -= e.dir;
      }
      let net = 0;
      for (let i = 0; i + 1 < stops.length; i++) {
        net += diff[i];
        if (net > 0) out.push({ a: at(stops[i]), b: at(stops[i + 1]), used: false });
        else if (net < 0) out.push({ a: at(stops[i + 1]), b: at(stops[i]), used: false });
      }
    }
  }
  return out;
}

/** Drop vertices that lie on the straight line between their neighbours. */
function dropCollinear(r: Ring): Ring {
  const pts = [...r];
  let i = 0;
  let unchanged = 0;
  while (pts.length > 3 && unchanged < pts.length) {
    const n = pts.length;
    const [p, q, s] = [pts[(i + n - 1) % n], pts[i], pts[(i + 1) % n]];
    const cross = (q[0] - p[0]) * (s[1] - q[1]) - (q[1] - p[1]) * (s[0] - q[0]);
    const dot = (q[0] - p[0]) * (s[0] - q[0]) + (q[1] - p[1]) * (s[1] - q[1]);
    if (cross === 0 && dot >= 0) {
      pts.splice(i, 1);
      i %= pts.length;
      unchanged = 0;
    } else {
      i = (i + 1) % n;
      unchanged++;
    }
  }
  return pts;
}

/** Point strictly inside an open ring (even–odd). */
export function inRing(p: Pt, r: Ring): boolean {
  let inside = false;
  for (let i = 0, j = r.length - 1; i < r.length; j = i++) {
    const [xi, yi] = r[i];
    const [xj, yj] = r[j];
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/**
 * The union of interior-disjoint pieces (each a list of signed rings) as polygons, or null when
 * the remaining edges do not close into rings (the caller keeps the pieces apart then).
 */
export function dissolve(rings: readonly Ring[]): Poly[] | null {
  const edges = netEdges(rings);
  const from = new Map<string, Edge[]>();
  for (const e of edges) {
    const k = key(e.a);
    const list = from.get(k);
    if (list) list.push(e);
    else from.set(k, [e]);
  }
  const closed: Ring[] = [];
  for (const start of edges) {
    if (start.used) continue;
    start.used = true;
    const ring: Ring = [start.a];
    let cur = start;
    for (let steps = 0; ; steps++) {
      if (steps > edges.length) return null;
      if (key(cur.b) === key(start.a)) break;
      const next = (from.get(key(cur.b)) ?? []).filter((e) => !e.used);
      if (next.length === 0) return null;
      // At a vertex several rings touch, take the sharpest right turn (the interior is on the
      // right in these units), so rings that only touch there come out as separate rings.
      const din: Pt = [cur.b[0] - cur.a[0], cur.b[1] - cur.a[1]];
      const turn = (e: Edge) => {
        const d: Pt = [e.b[0] - e.a[0], e.b[1] - e.a[1]];
        return Math.atan2(din[0] * d[1] - din[1] * d[0], din[0] * d[0] + din[1] * d[1]);
      };
      const pick = next.reduce((best, e) => (turn(e) > turn(best) ? e : best));
      pick.used = true;
      ring.push(pick.a);
      cur = pick;
    }
    const r = dropCollinear(openRing(ring));
    if (r.length >= 3 && ringArea2(r) !== 0) closed.push(r);
  }
  const outers = closed.filter((r) => ringArea2(r) > 0).map((r) => ({ outer: r, holes: [] as Ring[], area: ringArea2(r) }));
  outers.sort((a, b) => a.area - b.area);
  for (const h of closed.filter((r) => ringArea2(r) < 0)) {
    const probe: Pt = [(h[0][0] + h[1][0]) / 2, (h[0][1] + h[1][1]) / 2];
    const owner = outers.find((o) => inRing(probe, o.outer));
    if (!owner) return null;
    owner.holes.push(h);
  }
  return outers.map(({ outer, holes }) => ({ outer, holes }));
}

/** A piece as grouping sees it: its layer, upstream id, tile and its rings clipped to its tile. */
export interface GroupInput {
  layer: string;
  id: string | null;
  tile: { x: number; y: number };
  rings: Ring[];
}

/**
 * Pieces that are parts of one field, as index groups: the same layer and upstream id, or
 * (without ids) parts in neighbouring tiles whose edges on the tile edge between them overlap in
 * opposite directions: the field's interior reaches the edge from both sides there.
 */
export function groupPieces(pieces: readonly GroupInput[], units: number): number[][] {
  const parent = pieces.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  const join = (i: number, j: number) => {
    const [a, b] = [find(i), find(j)];
    if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
  };
  const byId = new Map<string, number>();
  pieces.forEach((p, i) => {
    if (p.id === null) return;
    const k = `${p.layer}\u0000${p.id}`;
    const first = byId.get(k);
    if (first === undefined) byId.set(k, i);
    else join(first, i);
  });
  const onEdges = new Map<string, Array<{ i: number; lo: number; hi: number; dir: number }>>();
  pieces.forEach((p, i) => {
    const xs = [p.tile.x * units, (p.tile.x + 1) * units];
    const ys = [p.tile.y * units, (p.tile.y + 1) * units];
    // The piece's own net edges: the back-and-forth runs a clip leaves along a side cancel first.
    for (const { a, b } of netEdges(p.rings, false)) {
      let line: string | undefined;
      let s = 0;
      let t = 0;
      if (a[0] === b[0] && xs.includes(a[0])) [line, s, t] = [`${p.layer}|v${a[0]}`, a[1], b[1]];
      else if (a[1] === b[1] && ys.includes(a[1])) [line, s, t] = [`${p.layer}|h${a[1]}`, a[0], b[0]];
      if (line === undefined || s === t) continue;
      let list = onEdges.get(line);
      if (!list) onEdges.set(line, (list = []));
      list.push({ i, lo: Math.min(s, t), hi: Math.max(s, t), dir: Math.sign(t - s) });
    }
  });
  for (const list of onEdges.values()) {
    list.sort((a, b) => a.lo - b.lo);
    for (let m = 0; m < list.length; m++) {
      for (let n = m + 1; n < list.length && list[n].lo < list[m].hi; n++) {
        const [u, v] = [list[m], list[n]];
        if (u.dir === v.dir || u.i === v.i) continue;
        const [pu, pv] = [pieces[u.i], pieces[v.i]];
        if (pu.id !== null && pv.id !== null && pu.id !== pv.id) continue;
        if (Math.min(u.hi, v.hi) > Math.max(u.lo, v.lo)) join(u.i, v.i);
      }
    }
  }
  const groups = new Map<number, number[]>();
  pieces.forEach((_, i) => {
    const r = find(i);
    const g = groups.get(r);
    if (g) g.push(i);
    else groups.set(r, [i]);
  });
  return [...groups.values()];
}
