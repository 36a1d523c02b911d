/**
 * A strict little XML reader for the chart specs (no XML library in the repo): elements, attributes,
 * text, comments, the five predefined entities and numeric references. It throws on anything a real
 * XML parser would reject among what the chart writer can produce (unbalanced or misnested tags,
 * unquoted or duplicate attributes, a bare `&` or `<`, forbidden characters), so "parses here" means
 * "well-formed SVG".
 */

export interface XmlElement {
  readonly name: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  text: string;
}

const NAME = /^[A-Za-z_:][\w.:-]*/;
const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;

function decode(raw: string, where: number): string {
  if (FORBIDDEN.test(raw)) throw new Error(`forbidden character near ${where}`);
  if (raw.includes('<')) throw new Error(`bare < near ${where}`);
  return raw.replace(/&([^;\s&]*);?/g, (m, ent: string) => {
    if (!m.endsWith(';')) throw new Error(`bare & near ${where}`);
    if (ent.startsWith('#x')) return String.fromCodePoint(parseInt(ent.slice(2), 16));
    if (ent.startsWith('#')) return String.fromCodePoint(parseInt(ent.slice(1), 10));
    const v = ENTITIES[ent];
    if (v === undefined) throw new Error(`unknown entity &${ent}; near ${where}`);
    return v;
  });
}

function parseAttrs(src: string, where: number): Record<string, string> {
  const attrs: Record<string, string> = {};
  let rest = src.trim();
  while (rest.length > 0) {
    const m = /^([A-Za-z_:][\w.:-]*)\s*=\s*("([^"]*)"|'([^']*)')\s*/.exec(rest);
    if (!m) throw new Error(`malformed attribute near ${where}: ${rest.slice(0, 40)}`);
    const name = m[1]!;
    if (name in attrs) throw new Error(`duplicate attribute ${name} near ${where}`);
    attrs[name] = decode(m[3] ?? m[4] ?? '', where);
    rest = rest.slice(m[0].length);
  }
  return attrs;
}

/** The document's root element; throws if the text is not one well-formed element (an XML declaration and comments allowed). */
export function parseXml(src: string): XmlElement {
  const root: XmlElement = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  let i = 0;
  while (i < src.length) {
    const lt = src.indexOf('<', i);
    const top = stack[stack.length - 1]!;
    const raw = src.slice(i, lt === -1 ? src.length : lt);
    const text = decode(raw, i);
    if (stack.length === 1 && text.trim() !== '') throw new Error(`text outside the root element near ${i}`);
    top.text += text;
    if (lt === -1) break;
    if (src.startsWith('<!--', lt) || src.startsWith('<?', lt)) {
      const end = src.indexOf(src.startsWith('<!--', lt) ? '-->' : '?>', lt);
      if (end === -1) throw new Error(`unterminated comment or declaration at ${lt}`);
      i = end + (src.startsWith('<!--', lt) ? 3 : 2);
      continue;
    }
    const gt = src.indexOf('>', lt);
    if (gt === -1) throw new Error(`unterminated tag at ${lt}`);
    const tag = src.slice(lt + 1, gt);
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      if (top.name !== name) throw new Error(`</${name}> closes <${top.name}> at ${lt}`);
      stack.pop();
    } else {
      const selfClosing = tag.endsWith('/');
      const body = selfClosing ? tag.slice(0, -1) : tag;
      const m = NAME.exec(body);
      if (!m) throw new Error(`bad tag name at ${lt}`);
      if (stack.length === 1 && root.children.length > 0) throw new Error('more than one root element');
      const el: XmlElement = { name: m[0], attrs: parseAttrs(body.slice(m[0].length), lt), children: [], text: '' };
      top.children.push(el);
      if (!selfClosing) stack.push(el);
    }
    i = gt + 1;
  }
  if (stack.length !== 1) throw new Error(`<${stack[stack.length - 1]!.name}> is never closed`);
  if (root.children.length !== 1) throw new Error('no root element');
  return root.children[0]!;
}

/** Every element below (and including) `el`, depth first. */
export function allElements(el: XmlElement): XmlElement[] {
  return [el, ...el.children.flatMap(allElements)];
}
