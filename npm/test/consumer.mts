// Compiled with `tsc --noEmit` by scripts/npm-test.sh: the package's hand-written types
// describe the API as an agent loop uses it, and refuse what the API refuses.

import { applyPatch, read, undo, confirm, binaryPath, ApplyPatchError } from '@apply-patch/apply-patch';
import type {
  ApplyOptions,
  ErrorCode,
  Level,
  ReadReport,
  Report,
  UndoReport,
} from '@apply-patch/apply-patch';

export async function agentStep(root: string, body: string): Promise<string> {
  const view: ReadReport = await read(root, 'src/app.ts', { lines: [1, 40] });
  const around = await read(root, 'src/app.ts', { around: 12 });
  const options: ApplyOptions = {
    rebase: true,
    maxRisk: 30,
    include: ['src/**'],
    protect: '.env',
    durability: 'atomic',
    postCheck: 'npm test',
    rollbackOnFail: true,
  };
  try {
    const patch = `*** Begin Patch\n*** Update File: src/app.ts\n*** Base: ${view.base}\n${body}*** End Patch\n`;
    const report: Report = await applyPatch(root, patch, options);
    const levels: Level[] = report.files.flatMap((f) => f.hunks.map((h) => h.level));
    return `${levels.join(',')} ${report.verification?.status ?? ''} ${around.around?.kind}`;
  } catch (e) {
    if (!(e instanceof ApplyPatchError)) throw e;
    const code: ErrorCode = e.code;
    const nearest = e.details.nearest?.lines.map((l) => `${l.line}: ${l.text}`) ?? [];
    return `${code} ${e.message} ${e.hint ?? ''} ${e.exitStatus} ${nearest.join('\n')} ${e.report.files.length}`;
  }
}

export async function more(): Promise<void> {
  const edited = await applyPatch(new URL('file:///tmp/project'), {
    edits: [{ op: 'replace', path: 'a.ts', old: 'x', new: 'y' }],
    base: { 'a.ts': '0123456789abcdef' },
  });
  const previewed = await applyPatch('.', new Uint8Array([42]), { preview: true, threeWay: true });
  if (previewed.preview) await confirm('.', previewed.preview);
  const undone: UndoReport = await undo('.');
  const id: string | null = undone.undone;
  console.log(edited.ok, id, binaryPath());

  // @ts-expect-error: an unknown option is a type error (a TypeError at run time)
  await applyPatch('.', '', { threeway: true });
  // @ts-expect-error: format is one of the formats the command line knows
  await applyPatch('.', '', { format: 'svn' });
  // @ts-expect-error: a JSON edit needs its op's fields
  await applyPatch('.', { edits: [{ op: 'insert', path: 'a' }] });
  // @ts-expect-error: the patch is text, bytes or an edit request
  await applyPatch('.', 42);
  // @ts-expect-error: read takes lines or around, nothing else
  await read('.', 'a', { line: 3 });
}
