import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as core from '../index.js';
import { BACKEND_PLUGIN_API_VERSION } from './backend-plugin.js';
import { isMinorBump, judgeSdkSurface, SDK_ROOTS, type SdkSurface } from './sdk-surface.js';

/*
 * The plugin SDK's surface, extracted from the sources with the compiler API (no build needed): each
 * SDK symbol's declaration as tsc would emit it into a .d.ts, compared with libs/core/sdk-surface.json.
 */

const CORE_DIR = fileURLToPath(new URL('../../', import.meta.url));
const SNAPSHOT = join(CORE_DIR, 'sdk-surface.json');

interface ExtractedSdk {
  readonly sdk: Record<string, string[]>;
  /** `Symbol → Type` where an SDK declaration names a type core's index does not export. */
  readonly unexported: string[];
}

function declaredNames(statement: ts.Statement): string[] {
  if (ts.isVariableStatement(statement)) return statement.declarationList.declarations.map((d) => d.name.getText());
  const name = (statement as { name?: ts.Node }).name;
  return name && ts.isIdentifier(name) ? [name.text] : [];
}

function isPrivateMember(member: ts.ClassElement): boolean {
  return (ts.getCombinedModifierFlags(member as ts.Declaration) & ts.ModifierFlags.Private) !== 0 || (member.name !== undefined && ts.isPrivateIdentifier(member.name));
}

/** Private members are no contract: a subclass can neither see nor rely on them. */
function withoutPrivateMembers(statement: ts.Statement): ts.Statement {
  if (!ts.isClassDeclaration(statement)) return statement;
  const members = statement.members.filter((m) => !isPrivateMember(m));
  return ts.factory.updateClassDeclaration(statement, statement.modifiers, statement.name, statement.typeParameters, statement.heritageClauses, members);
}

function leftmost(name: ts.EntityName | ts.Expression): string {
  if (ts.isQualifiedName(name)) return leftmost(name.left);
  if (ts.isPropertyAccessExpression(name)) return leftmost(name.expression);
  return name.getText();
}

/** The type names a declaration mentions, with whether each came through a relative import("…"). */
function referencedNames(node: ts.Node, found: Map<string, boolean>): void {
  if (ts.isTypeReferenceNode(node)) found.set(leftmost(node.typeName), found.get(leftmost(node.typeName)) ?? false);
  if (ts.isExpressionWithTypeArguments(node)) found.set(leftmost(node.expression), found.get(leftmost(node.expression)) ?? false);
  if (ts.isTypeQueryNode(node)) found.set(leftmost(node.exprName), found.get(leftmost(node.exprName)) ?? false);
  if (ts.isImportTypeNode(node) && node.qualifier) {
    const arg = node.argument;
    const relative = ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal) && arg.literal.text.startsWith('.');
    found.set(leftmost(node.qualifier), relative);
  }
  ts.forEachChild(node, (child) => {
    referencedNames(child, found);
  });
}

/** Names a .d.ts imports from the same package (relative specifiers) or declares itself. */
function ownNames(dts: ts.SourceFile): Set<string> {
  const own = new Set<string>();
  for (const st of dts.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier) && st.moduleSpecifier.text.startsWith('.')) {
      const bindings = st.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) for (const el of bindings.elements) own.add(el.name.text);
      if (st.importClause?.name) own.add(st.importClause.name.text);
    } else {
      for (const n of declaredNames(st)) own.add(n);
    }
  }
  return own;
}

function packageOf(fileName: string): string {
  const parts = fileName.split('node_modules/').pop()!.split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

const printer = ts.createPrinter({ removeComments: true });

function normalisedLines(text: string): string[] {
  // Emitted types spell some references as import("../x.js").T; the path is no contract, the name is.
  return text
    .replace(/import\("\.{1,2}\/[^"]*"\)\./g, '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '');
}

/**
 * Each root's declaration (and, transitively, of every type of this package they mention) as the
 * declaration emit writes it, for the exports of `indexFile`; `packageDir` tells own files apart.
 */
function extractSdk(program: ts.Program, indexFile: string, packageDir: string, roots: readonly string[]): ExtractedSdk {
  const checker = program.getTypeChecker();
  const index = program.getSourceFile(indexFile);
  if (!index) throw new Error(`${indexFile} is not part of the program`);
  const moduleSymbol = checker.getSymbolAtLocation(index);
  if (!moduleSymbol) throw new Error(`${indexFile} is not a module`);
  const exported = new Map<string, ts.Symbol>();
  for (const e of checker.getExportsOfModule(moduleSymbol)) exported.set(e.name, e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e);

  const emitted = new Map<string, ts.SourceFile>();
  const dtsOf = (file: ts.SourceFile): ts.SourceFile => {
    let dts = emitted.get(file.fileName);
    if (!dts) {
      let text = '';
      program.emit(file, (_name, data) => (text = data), undefined, true);
      dts = ts.createSourceFile(`${file.fileName}.d.ts`, text, ts.ScriptTarget.Latest, true);
      emitted.set(file.fileName, dts);
    }
    return dts;
  };

  const sdk: Record<string, string[]> = {};
  const unexported: string[] = [];
  const queue = [...roots];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const symbol = exported.get(name);
    const declaration = symbol?.declarations?.[0];
    if (!symbol || !declaration) throw new Error(`SDK symbol ${name} is not exported from ${indexFile}`);
    const source = declaration.getSourceFile();
    if (!source.fileName.startsWith(packageDir)) {
      sdk[name] = [`export type { ${symbol.name} } from "${packageOf(source.fileName)}";`];
      continue;
    }
    const dts = dtsOf(source);
    const statements = dts.statements.filter((s) => declaredNames(s).includes(symbol.name)).map(withoutPrivateMembers);
    sdk[name] = statements.flatMap((s) => normalisedLines(printer.printNode(ts.EmitHint.Unspecified, s, dts)));
    const own = ownNames(dts);
    const refs = new Map<string, boolean>();
    for (const s of statements) referencedNames(s, refs);
    for (const [ref, viaRelativeImport] of refs) {
      if (ref === symbol.name) continue;
      if (exported.has(ref)) queue.push(ref);
      else if (viaRelativeImport || own.has(ref)) unexported.push(`${name} → ${ref}`);
    }
  }
  const sorted: Record<string, string[]> = {};
  for (const key of Object.keys(sdk).sort()) sorted[key] = sdk[key];
  return { sdk: sorted, unexported };
}

function declarationProgram(rootNames: string[], options: ts.CompilerOptions): ts.Program {
  return ts.createProgram({
    rootNames,
    options: { ...options, noEmit: false, declaration: true, emitDeclarationOnly: true, declarationMap: false, sourceMap: false, composite: false, incremental: false },
  });
}

function coreProgram(): ts.Program {
  const host: ts.ParseConfigFileHost = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const parsed = ts.getParsedCommandLineOfConfigFile(join(CORE_DIR, 'tsconfig.lib.json'), {}, host);
  if (!parsed) throw new Error('cannot read libs/core/tsconfig.lib.json');
  return declarationProgram([join(CORE_DIR, 'src/index.ts')], parsed.options);
}

/** The README's minimal plugin, type-checked against core's sources as a file of core would be. */
function readmeExampleDiagnostics(): string[] {
  const readme = readFileSync(join(CORE_DIR, 'README.md'), 'utf8');
  const example = /### Minimal example[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (example === undefined) throw new Error('README.md has no "### Minimal example" ts block');
  const parsed = ts.getParsedCommandLineOfConfigFile(join(CORE_DIR, 'tsconfig.lib.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  const file = join(CORE_DIR, 'src', '__readme_example__.ts');
  const options = { ...parsed!.options, noEmit: true, composite: false, incremental: false };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, onError) => (name === file ? ts.createSourceFile(name, example, version) : getSourceFile(name, version, onError));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram({ rootNames: [file], options, host });
  const source = program.getSourceFile(file)!;
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

function surface(over: Partial<SdkSurface> = {}): SdkSurface {
  return {
    version: '0.1.0',
    apiVersion: 'kube-proxy.backend/v1',
    runtimeExports: ['PROVIDER', 'planServicePort'],
    sdk: {
      Provider: ['export interface Provider {', '    sync(): void;', '}'],
      plan: ['export declare function plan(svc: Svc): Plan;'],
      Ctx: ['export interface Ctx {', '    readonly nodeName: string;', '}'],
    },
    ...over,
  };
}

describe('judgeSdkSurface', () => {
  const base = surface();
  const withSdk = (sdk: Record<string, readonly string[]>, over: Partial<SdkSurface> = {}) => surface({ sdk: { ...base.sdk, ...sdk }, ...over });

  it('accepts an unchanged surface, whatever the versions say', () => {
    expect(judgeSdkSurface(base, surface()).kind).toBe('same');
    expect(judgeSdkSurface(base, surface({ version: '0.1.1' })).kind).toBe('same');
  });

  it('refuses any change while the package version equals the recorded one, naming the fix', () => {
    const v = judgeSdkSurface(base, surface({ runtimeExports: [...base.runtimeExports, 'newHelper'] }));
    expect(v).toEqual({ kind: 'refuse', message: expect.stringContaining("the SDK surface changed: bump @kube-proxy/core's version") });
    expect(v.kind === 'refuse' && v.message).toContain('UPDATE_SDK_SURFACE=1 npx nx test core');
    expect(v.kind === 'refuse' && v.message).toContain('runtime exports added: newHelper');
  });

  it('refuses an addition with only a patch bump, records it after a minor bump', () => {
    const added = { Extra: ['export type Extra = string;'] };
    expect(judgeSdkSurface(base, withSdk(added, { version: '0.1.1' })).kind).toBe('refuse');
    expect(judgeSdkSurface(base, withSdk(added, { version: '0.2.0' }))).toEqual({ kind: 'record', message: expect.stringContaining('0.1.0 → 0.2.0') });
  });

  it('treats a new optional member of an implemented interface as an addition', () => {
    const current = withSdk({ Provider: ['export interface Provider {', '    sync(): void;', '    onServiceCIDRsChanged?(cidrs: readonly string[]): void;', '}'] }, { version: '0.2.0' });
    expect(judgeSdkSurface(base, current).kind).toBe('record');
  });

  it('treats a new required member of an implemented interface as breaking', () => {
    const current = withSdk({ Provider: ['export interface Provider {', '    sync(): void;', '    flush(): void;', '}'] }, { version: '0.2.0' });
    expect(judgeSdkSurface(base, current)).toEqual({ kind: 'refuse', message: expect.stringContaining('SDK changed: Provider') });
  });

  it('lets a type plugins only read gain a required member', () => {
    const current = withSdk({ Ctx: ['export interface Ctx {', '    readonly nodeName: string;', '    readonly zone: string;', '}'] }, { version: '0.2.0' });
    expect(judgeSdkSurface(base, current).kind).toBe('record');
  });

  it('treats an optional parameter appended to a signature as an addition, any other signature change as breaking', () => {
    const widened = withSdk({ plan: ['export declare function plan(svc: Svc, ctx?: PlanContext): Plan;'] }, { version: '0.2.0' });
    expect(judgeSdkSurface(base, widened).kind).toBe('record');
    const narrowed = withSdk({ plan: ['export declare function plan(svc: Svc, ctx: PlanContext): Plan;'] }, { version: '0.2.0' });
    expect(judgeSdkSurface(base, narrowed).kind).toBe('refuse');
  });

  it('ignores renamed parameters', () => {
    const renamed = withSdk({ plan: ['export declare function plan(_svc: Svc): Plan;'] });
    expect(judgeSdkSurface(base, renamed).kind).toBe('same');
  });

  it('requires a new apiVersion when an SDK symbol is removed, even after a version bump', () => {
    const { Ctx: _gone, ...rest } = base.sdk;
    const bumpedOnly = judgeSdkSurface(base, surface({ sdk: rest, version: '1.0.0' }));
    expect(bumpedOnly).toEqual({ kind: 'refuse', message: expect.stringContaining('BACKEND_PLUGIN_API_VERSION is still kube-proxy.backend/v1') });
    expect(bumpedOnly.kind === 'refuse' && bumpedOnly.message).toContain('SDK removed: Ctx');
    expect(judgeSdkSurface(base, surface({ sdk: rest, version: '0.2.0', apiVersion: 'kube-proxy.backend/v2' })).kind).toBe('record');
  });

  it('still requires the package bump when the apiVersion alone changed', () => {
    expect(judgeSdkSurface(base, surface({ apiVersion: 'kube-proxy.backend/v2' })).kind).toBe('refuse');
  });

  it('compares versions as semver', () => {
    expect(isMinorBump('0.1.0', '0.2.0')).toBe(true);
    expect(isMinorBump('0.9.3', '1.0.0')).toBe(true);
    expect(isMinorBump('0.1.0', '0.1.5')).toBe(false);
    expect(isMinorBump('0.2.0', '0.1.9')).toBe(false);
    expect(isMinorBump('0.1.0', 'next')).toBe(false);
  });
});

describe('extractSdk', () => {
  it('records emitted declarations without comments or private members, following referenced types', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kpts-sdk-surface-'));
    try {
      writeFileSync(join(dir, 'index.ts'), "export * from './a.js';\nexport { Opts } from './b.js';\n");
      writeFileSync(
        join(dir, 'a.ts'),
        [
          "import type { Opts, Hidden } from './b.js';",
          '/** Doc comments are no contract. */',
          'export class Thing {',
          '  private secret = 1;',
          '  constructor(protected readonly opts: Opts) {}',
          '  size(): number { return this.secret; }',
          '}',
          'export function leak(h: Hidden): void { void h; }',
          "export const VERSION = 'x/v1';",
        ].join('\n'),
      );
      writeFileSync(join(dir, 'b.ts'), 'export interface Opts { readonly name: string }\nexport interface Hidden { readonly n: number }\n');
      const program = declarationProgram([join(dir, 'index.ts')], {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        strict: true,
        lib: ['lib.es2022.d.ts'],
        types: [],
      });
      const { sdk, unexported } = extractSdk(program, join(dir, 'index.ts'), dir, ['Thing', 'VERSION', 'leak']);
      expect(Object.keys(sdk)).toEqual(['Opts', 'Thing', 'VERSION', 'leak']);
      expect(sdk['Thing']).toEqual(['export declare class Thing {', '    protected readonly opts: Opts;', '    constructor(opts: Opts);', '    size(): number;', '}']);
      expect(sdk['VERSION']).toEqual(['export declare const VERSION = "x/v1";']);
      expect(unexported).toEqual(['leak → Hidden']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("core's SDK surface", () => {
  const pkg = JSON.parse(readFileSync(join(CORE_DIR, 'package.json'), 'utf8')) as { version: string };
  let extracted: ExtractedSdk;
  let current: SdkSurface;

  beforeAll(() => {
    extracted = extractSdk(coreProgram(), join(CORE_DIR, 'src/index.ts'), join(CORE_DIR, 'src'), SDK_ROOTS);
    current = {
      version: pkg.version,
      apiVersion: BACKEND_PLUGIN_API_VERSION,
      runtimeExports: Object.keys(core).sort(),
      sdk: extracted.sdk,
    };
  }, 30_000);

  it("README's minimal plugin type-checks against core", () => {
    expect(readmeExampleDiagnostics()).toEqual([]);
  }, 30_000);

  it('names only types a plugin can import from core', () => {
    expect(extracted.unexported).toEqual([]);
  });

  it(`matches ${SNAPSHOT.slice(CORE_DIR.length)} unless the versions allow the change`, () => {
    const update = process.env['UPDATE_SDK_SURFACE'] === '1';
    if (!existsSync(SNAPSHOT)) {
      if (!update) throw new Error(`no recorded SDK surface: run \`UPDATE_SDK_SURFACE=1 npx nx test core\``);
      writeFileSync(SNAPSHOT, `${JSON.stringify(current, null, 2)}\n`);
      return;
    }
    const recorded = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as SdkSurface;
    const verdict = judgeSdkSurface(recorded, current);
    if (verdict.kind === 'refuse') throw new Error(verdict.message);
    if (update) {
      writeFileSync(SNAPSHOT, `${JSON.stringify(current, null, 2)}\n`);
      return;
    }
    if (verdict.kind === 'record') throw new Error(verdict.message);
  });
});
