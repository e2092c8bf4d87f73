#!/usr/bin/env bash
# Counts the Hexagon packets and instructions a program executes under qemu-hexagon (7.2 has no
# instruction-count plugin packaged): -singlestep makes every translation block one packet,
# in_asm gives each packet's instructions (immext words excluded), exec,nochain logs every
# packet executed. Emulation with this log is ~100x slower: for small kernels runs only.
#   scripts/hexagon-insn-count.sh PROGRAM [ARGS...]
set -euo pipefail
qemu=${QEMU:-qemu-hexagon}
command -v "$qemu" >/dev/null || { echo "hexagon-insn-count: $qemu not found (apt install qemu-user)" >&2; exit 1; }
"$qemu" -singlestep -d in_asm,exec,nochain "$@" 2>&1 >/dev/null | python3 -c '
import re, sys
insn_line = re.compile(r"^0x([0-9a-f]+):\s+0x[0-9a-f]+\s+(.*)$")
trace = re.compile(r"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/")
size, count, start, n = {}, {}, None, 0
for line in sys.stdin:
    m = insn_line.match(line)
    if m:
        if start is None:
            start, n = int(m.group(1), 16), 0
        if "immext" not in m.group(2):
            n += 1
        continue
    if start is not None:
        size[start] = n
        start = None
    m = trace.match(line)
    if m:
        pc = int(m.group(1), 16)
        count[pc] = count.get(pc, 0) + 1
packets = sum(count.values())
insns = sum(c * size.get(pc, 1) for pc, c in count.items())
print(f"packets {packets} instructions {insns}")
'
