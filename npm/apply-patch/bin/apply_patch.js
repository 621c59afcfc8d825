#!/usr/bin/env node
'use strict';
// The `apply_patch` command: Codex's drop-in, the binary run under that name (see
// ../lib/launch.js).
require('../lib/launch.js').launch('apply_patch');
