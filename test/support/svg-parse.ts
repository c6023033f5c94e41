/**
 * A strict little XML reader for checking the service's SVG in tests (no DTDs, no CDATA, no
 * processing instructions beyond an XML declaration): every tag closed in order, attributes
 * quoted and unique, only the five predefined entities and numeric references. Plus the path
 * data the pictures use (M, L, H, V, Z in either case) as polygons, and an even-odd point test.
 */

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** Text directly inside the element, entities decoded. */
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(s: string): string {
  return s.replace(/&([^;&\s]*);?/g, (m, name: string) => {
    if (!m.endsWith(';')) throw new Error(`XML: bare & in ${JSON.stringify(s.slice(0, 60))}`);
    if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    const v = ENTITIES[name];
    if (v === undefined) throw new Error(`XML: unknown entity &${name};`);
    return v;
  });
}

/** The document's root element; throws on anything not well formed. */
export function parseXml(src: string): XmlElement {
  const doc = src.replace(/^<\?xml[^?]*\?>\s*/, '');
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let at = 0;
  const tag = /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[A-Za-z_][\w:.-]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>|<!--[\s\S]*?-->/y;
  while (at < doc.length) {
    const lt = doc.indexOf('<', at);
    const text = doc.slice(at, lt < 0 ? doc.length : lt);
    if (text.trim() !== '') {
      if (stack.length === 0) throw new Error(`XML: text outside the root: ${JSON.stringify(text.slice(0, 40))}`);
      stack[stack.length - 1]!.text += decodeEntities(text);
    }
    if (lt < 0) break;
    tag.lastIndex = lt;
    const m = tag.exec(doc);
    if (!m) throw new Error(`XML: malformed markup at ${lt}: ${JSON.stringify(doc.slice(lt, lt + 60))}`);
    at = tag.lastIndex;
    if (m[0].startsWith('<!--')) continue;
    const [, close, name, attrText, selfClose] = m;
    if (close) {
      const open = stack.pop();
      if (!open || open.name !== name || attrText!.trim() !== '' || selfClose) throw new Error(`XML: </${name}> does not close <${open?.name}>`);
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of attrText!.matchAll(/([A-Za-z_][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
      if (a[1]! in attrs) throw new Error(`XML: attribute ${a[1]} twice on <${name}>`);
      attrs[a[1]!] = decodeEntities(a[2] ?? a[3] ?? '');
    }
    const el: XmlElement = { name: name!, attrs, children: [], text: '' };
    if (stack.length > 0) stack[stack.length - 1]!.children.push(el);
    else if (root) throw new Error('XML: a second root element');
    else root = el;
    if (!selfClose) stack.push(el);
  }
  if (stack.length > 0) throw new Error(`XML: <${stack[stack.length - 1]!.name}> never closed`);
  if (!root) throw new Error('XML: no root element');
  return root;
}

/** Every element of the tree (depth first, document order). */
export function allElements(el: XmlElement): XmlElement[] {
  return [el, ...el.children.flatMap(allElements)];
}

/** The element with this id, if any. */
export function byId(root: XmlElement, id: string): XmlElement | undefined {
  return allElements(root).find((e) => e.attrs.id === id);
}

/** The element's text and its descendants' text, in order. */
export function textOf(el: XmlElement): string {
  return el.text + el.children.map(textOf).join('');
}

/** Subpaths of path data (M, L, H, V, Z, absolute or relative) as point lists. */
export function pathPolygons(d: string): Array<Array<[number, number]>> {
  const tokens = d.match(/[MLHVZmlhvz]|-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/g) ?? [];
  const out: Array<Array<[number, number]>> = [];
  let cur: Array<[number, number]> = [];
  let x = 0;
  let y = 0;
  let cmd = '';
  let i = 0;
  const num = () => {
    const t = tokens[i++];
    if (t === undefined || /[A-Za-z]/.test(t)) throw new Error(`path: a number expected at token ${i - 1}`);
    return Number(t);
  };
  while (i < tokens.length) {
    if (/[A-Za-z]/.test(tokens[i]!)) cmd = tokens[i++]!;
    else if (cmd === 'M') cmd = 'L';
    else if (cmd === 'm') cmd = 'l';
    switch (cmd) {
      case 'M':
      case 'm': {
        if (cur.length > 0) out.push(cur);
        const [dx, dy] = [num(), num()];
        [x, y] = cmd === 'm' ? [x + dx, y + dy] : [dx, dy];
        cur = [[x, y]];
        break;
      }
      case 'L':
      case 'l': {
        const [dx, dy] = [num(), num()];
        [x, y] = cmd === 'l' ? [x + dx, y + dy] : [dx, dy];
        cur.push([x, y]);
        break;
      }
      case 'H':
      case 'h':
        x = cmd === 'h' ? x + num() : num();
        cur.push([x, y]);
        break;
      case 'V':
      case 'v':
        y = cmd === 'v' ? y + num() : num();
        cur.push([x, y]);
        break;
      case 'Z':
      case 'z':
        if (cur.length > 0) {
          out.push(cur);
          [x, y] = cur[0]!;
        }
        cur = [];
        break;
      default:
        throw new Error(`path: command ${cmd} is not read here`);
    }
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** Whether (px, py) is inside the polygons under the even-odd rule. */
export function insideEvenOdd(polys: Array<Array<[number, number]>>, px: number, py: number): boolean {
  let inside = false;
  for (const ring of polys) {
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const [xi, yi] = ring[i]!;
      const [xj, yj] = ring[j]!;
      if (yi > py !== yj > py && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
    }
  }
  return inside;
}
