#!/usr/bin/env -S node --max-semi-space-size=2 --max-old-space-size=128
// The hypercache command. This file is committed (not built) so that npm links the command even
// before the build has run. The V8 flags bound memory: a `load` of any size stays near 120 MB of
// RSS (bench/sdk.ts); without them V8's lazy collection lets the heap grow past 150 MB.
import "../dist/bin.js";
