import { bareSpecifiers, undeclaredImports } from './undeclared-imports.js';

describe('bareSpecifiers', () => {
  it('finds static, re-export, side-effect and literal dynamic imports, reduced to package names', () => {
    const js = [
      "import { a } from 'tsyringe';",
      'export { b } from "@kube-proxy/core/sub";',
      "import 'reflect-metadata';",
      "const m = await import('execa');",
      "import { join } from 'node:path';",
      "import { x } from './local.js';",
      '// a dashboard can tell "none" from "not reported"',
      'throw new Error(`chain "${c}" is referenced from "${name}"`);',
      "export const y = 'not-a-module';",
    ].join('\n');
    expect(bareSpecifiers(js).sort()).toEqual(['@kube-proxy/core', 'execa', 'reflect-metadata', 'tsyringe']);
  });
});

describe('undeclaredImports', () => {
  it('passes dependencies, peers, builtins without the node: prefix and the package itself', () => {
    const manifest = { name: '@kube-proxy/backend-x', dependencies: { tslib: '^2' }, peerDependencies: { '@kube-proxy/core': '0.1.0' } };
    expect(undeclaredImports(['tslib', '@kube-proxy/core', 'fs', '@kube-proxy/backend-x'], manifest)).toEqual([]);
  });

  it('names an import that only resolves through a sibling package (hoisting hides it)', () => {
    expect(undeclaredImports(['execa', 'tslib', 'winston'], { name: 'p', dependencies: { tslib: '^2' } })).toEqual(['execa', 'winston']);
  });
});
