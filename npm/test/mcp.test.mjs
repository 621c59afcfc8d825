// `npx apply-patch mcp`, driven by the official TypeScript MCP SDK as an MCP client would
// drive it: list the tools, read a file, apply a patch on the version read, undo it.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { tree, readText, update, project } from './helpers.mjs';

test('npx apply-patch mcp serves read, apply_patch and undo to the TypeScript SDK', async () => {
  const root = tree({ 'a.txt': 'one\ntwo\nthree\n' });
  const transport = new StdioClientTransport({
    command: 'npx',
    args: ['apply-patch', 'mcp', '--root', root],
    cwd: project,
    env: { ...process.env },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'apply-patch-npm-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['read', 'apply_patch', 'edit', 'preview', 'confirm', 'undo']) {
      assert.ok(names.includes(name), `${name} in ${names}`);
    }
    assert.ok(tools.every((t) => t.outputSchema), 'every tool has an output schema');

    const read = await client.callTool({ name: 'read', arguments: { path: 'a.txt' } });
    assert.notEqual(read.isError, true, JSON.stringify(read));
    const { base } = read.structuredContent;
    assert.match(base, /^[0-9a-f]{16}$/);

    const patch = update('a.txt', [' one', '-two', '+2', ' three'], base);
    const applied = await client.callTool({ name: 'apply_patch', arguments: { patch } });
    assert.notEqual(applied.isError, true, JSON.stringify(applied));
    assert.equal(applied.structuredContent.ok, true);
    assert.equal(applied.structuredContent.files[0].path, 'a.txt');
    assert.equal(readText(root, 'a.txt'), 'one\n2\nthree\n');

    // The same patch again: the Base no longer matches, the tool answers with the error.
    const stale = await client.callTool({ name: 'apply_patch', arguments: { patch } });
    assert.equal(stale.isError, true);
    assert.ok(['stale_file', 'already_applied'].includes(stale.structuredContent.error.code));

    const undone = await client.callTool({ name: 'undo', arguments: {} });
    assert.notEqual(undone.isError, true, JSON.stringify(undone));
    assert.equal(typeof undone.structuredContent.undone, 'string');
    assert.equal(readText(root, 'a.txt'), 'one\ntwo\nthree\n');
  } finally {
    await client.close();
  }
});
