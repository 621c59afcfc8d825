#!/usr/bin/env node
'use strict';
// The `apply-patch` command (see ../lib/launch.js).
require('../lib/launch.js').launch('apply-patch');
