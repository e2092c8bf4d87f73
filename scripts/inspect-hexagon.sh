#!/usr/bin/env bash
# Binary inspection of the Hexagon device code (the model design's rules: compute kernels keep
# their vector state in registers, HVX kernels really use HVX). Disassembles Hexagon objects or a
# linked executable with llvm-objdump-19 and reports, per kernel function: instructions, HVX
# instructions, vrmpy count, loops, and vector loads/stores on the stack frame inside a loop.
#
#   scripts/inspect-hexagon.sh [-v] [--kernels REGEX] [--hvx REGEX] [FILE...]   (-v: list them)
#
# Without FILE, compiles src/htp/vec/{generic,hexagon_hvx*}.cpp with clang-19 -c
# (flags of scripts/check-hexagon-build.sh) into a temporary folder and inspects those.
#
# A loop is the address range of a backward branch (jump to a lower address) or of a hardware
# loop (loopN(start, ..) up to its :endloopN packet). Frame accesses are vmem/vmemu through r29
# or r30, or through a register last set to add(r29|r30, #imm) (register writes take effect at
# the end of their packet). A spill slot is a frame slot that both vector stores and vector
# loads use; the register allocator makes those.
#   spill / reload = vector store / load of a spill slot inside a loop        -> fails
#   handoff = other in-loop vector access to the frame: a vector store read back by scalar
#             loads (integer lanes handed to the scalar core, clearing scalar accumulators) or
#             a vector load of bytes the scalar core wrote; reported, allowed
# A function without HVX instructions that calls an HVX kernel of the same object (a GEMV that
# runs the GEMM code with one activation row) is shown with ">N", the callee's count.
# Fails (exit 1) when a compute kernel (--kernels, default gemv|gemm|tile_cols|superblock|quant)
# spills or reloads in a loop, or an HVX kernel (--hvx, default the HVX table's kernels) holds no
# HVX instruction (itself or in what it wraps).
set -euo pipefail
cd "$(dirname "$0")/.."

objdump=${OBJDUMP:-llvm-objdump-19}
# A linked executable carries no .hexagon.attributes (lld drops them): without the CPU and HVX
# features objdump shows every HVX instruction as <unknown>.
read -r -a objdump_flags <<<"${OBJDUMP_FLAGS:---mcpu=hexagonv67 --mattr=+hvxv67,+hvx-length128b}"
clang=${CLANG:-clang-19}
verbose=0
kernels='gemv|gemm|tile_cols|superblock|quant'
hvx='gemv32<|gemm32<|tile_cols<|hvx_gem[mv]_|hvx_quant_|gemm_k<|gemm_cols<'
files=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kernels) kernels=$2; shift 2 ;;
    --hvx) hvx=$2; shift 2 ;;
    -v|--verbose) verbose=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) files+=("$1"); shift ;;
  esac
done

for tool in "$objdump" python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "inspect-hexagon: $tool not found (scripts/setup.sh installs it: llvm-19, python3)" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ ${#files[@]} -eq 0 ]]; then
  if ! command -v "$clang" >/dev/null; then
    echo "inspect-hexagon: $clang not found (scripts/setup.sh installs clang-19)" >&2
    exit 1
  fi
  for src in generic hexagon_hvx hexagon_hvx_k hexagon_hvx_quant; do
    "$clang" --target=hexagon -mv67 -mhvx -mhvx-length=128b -ffreestanding -fno-exceptions -fno-rtti \
      -std=c++20 -O2 -Wall -Wextra -Wdouble-promotion -Werror -Isrc -c "src/htp/vec/$src.cpp" -o "$tmp/$src.o"
    files+=("$tmp/$src.o")
  done
fi

for f in "${files[@]}"; do
  echo "### $(basename "$f")"
  "$objdump" -d -C --no-show-raw-insn "${objdump_flags[@]}" "$f"
done >"$tmp/dis.txt"

python3 - "$tmp/dis.txt" "$kernels" "$hvx" "$verbose" <<'EOF'
import re, sys

dis, kernel_re, hvx_re = sys.argv[1], re.compile(sys.argv[2]), re.compile(sys.argv[3])
verbose = sys.argv[4] == '1'
func_hdr = re.compile(r'^([0-9a-f]+) <(.*)>:$')
line_re = re.compile(r'^\s*([0-9a-f]+):\s*(.*)$')
hvx_reg = re.compile(r'\b(v\d+|q[0-3])\b|vmem|vtmp')
jump_re = re.compile(r'jump(?::n?t)?\s+0x([0-9a-f]+)')
loop_re = re.compile(r'loop([01])\(0x([0-9a-f]+)')
vmem_re = re.compile(r'vmemu?\((r\d+)(?:\+#(-?(?:0x)?[0-9a-f]+))?\)')
frame_set = re.compile(r'^(r\d+)\s*=\s*add\((r29|r30),#(-?(?:0x)?[0-9a-f]+)\)')
dest_re = re.compile(r'^(?:if \([^)]*\)\s*)?(r\d+)(?::(\d+))?(?:\.new)?\s*=')

def num(s):
    return int(s, 0) if s else 0

funcs, cur, obj, pkt = [], None, '', 0
for raw in open(dis):
    raw = raw.rstrip('\n')
    if raw.startswith('### '):
        obj = raw[4:]
        continue
    m = func_hdr.match(raw)
    if m:
        cur = {'name': m.group(2), 'obj': obj, 'insns': [], 'addr': int(m.group(1), 16)}
        funcs.append(cur)
        continue
    m = line_re.match(raw)
    if not m or cur is None:
        continue
    addr, text = int(m.group(1), 16), m.group(2)
    if '{' in text:
        pkt += 1
    endloop = re.findall(r':endloop([01])', text)
    text = re.sub(r':endloop[01]', '', text).replace('{', '').replace('}', '')
    for ins in [s.strip() for s in text.split(';') if s.strip()]:
        cur['insns'].append((addr, ins, endloop, pkt))
        endloop = []  # attach the packet end to one instruction only

def loops_of(insns):
    ranges, starts = [], {}
    for addr, ins, endl, _ in insns:
        for n, tgt in loop_re.findall(ins):
            starts[n] = int(tgt, 16)
        for n in endl:
            if n in starts:
                ranges.append((starts.pop(n), addr))
        m = jump_re.search(ins)
        if m and int(m.group(1), 16) <= addr:
            ranges.append((int(m.group(1), 16), addr))
    return ranges

def frame_accesses(insns):
    """(addr, kind 'load'/'store', slot) for vector accesses through the frame."""
    # Registers written in a packet take their new value after it (reads in the packet see the
    # old one, .new aside).
    frame, out, pending, cur_pkt = {}, [], [], None
    for addr, ins, _, pk in insns:
        if pk != cur_pkt:
            for op, reg, val in pending:
                if op == 'set':
                    frame[reg] = val
                else:
                    frame.pop(reg, None)
            pending, cur_pkt = [], pk
        for m in vmem_re.finditer(ins):
            base, off = m.group(1), num(m.group(2)) * 128
            if base in ('r29', 'r30'):
                slot = (base, off)
            elif base in frame:
                slot = (frame[base][0], frame[base][1] + off)
            else:
                continue
            store = re.search(r'vmemu?\([^)]*\)(?::nt)?\s*=', ins) is not None
            out.append((addr, 'store' if store else 'load', slot))
        m = frame_set.match(ins)
        d = dest_re.match(ins)
        if m:
            pending.append(('set', m.group(1), (m.group(2), num(m.group(3)))))
        elif d:
            pending.append(('kill', d.group(1), None))
            if d.group(2):
                pending.append(('kill', 'r' + d.group(2), None))
    return out

# Per object: function start -> function; HVX instruction counts, to follow thin wrappers.
starts = {(f['obj'], f['addr']): f for f in funcs}
for f in funcs:
    f['hvx'] = sum(1 for _, i, _, _ in f['insns'] if hvx_reg.search(i))
call_re = re.compile(r'(?:call|jump(?::n?t)?)\s+0x([0-9a-f]+)')

def callees(f):
    out = []
    for a, i, _, _ in f['insns']:
        for t in call_re.findall(i):
            g = starts.get((f['obj'], int(t, 16)))
            if g is not None and g is not f and int(t, 16) != a:
                out.append(g)
    return out

def wrapped_hvx(f, depth=0):
    """HVX instructions of f, or of the kernels it calls when f itself holds none."""
    if f['hvx'] or depth > 3:
        return f['hvx'], None
    for g in callees(f):
        n, _ = wrapped_hvx(g, depth + 1)
        if n:
            return n, g['name']
    return 0, None

bad, rows = [], []
for f in funcs:
    name = f['name']
    is_kernel = kernel_re.search(name) is not None
    is_hvx = hvx_re.search(name) is not None
    if not (is_kernel or is_hvx):
        continue
    insns = f['insns']
    n_hvx = f['hvx']
    via_n, via = wrapped_hvx(f)
    n_vrmpy = sum(1 for _, i, _, _ in insns if 'vrmpy' in i)
    loops = loops_of(insns)
    acc = frame_accesses(insns)
    # A spill slot is a frame slot that vector stores write and vector loads read back.
    stored = {s for _, k, s in acc if k == 'store'}
    loaded = {s for _, k, s in acc if k == 'load'}
    spill_slots = stored & loaded
    inloop = lambda a: any(lo <= a <= hi for lo, hi in loops)
    reload = sum(1 for a, k, s in acc if k == 'load' and inloop(a) and s in spill_slots)
    spill = sum(1 for a, k, s in acc if k == 'store' and inloop(a) and s in spill_slots)
    handoff = sum(1 for a, k, s in acc if inloop(a) and s not in spill_slots)
    rows.append((f['obj'], name, len(insns), n_hvx if not via else f'>{via_n}', n_vrmpy, len(loops), spill,
                 reload, handoff))
    if verbose:
        for a, k, sl in acc:
            if inloop(a) and sl in spill_slots:
                print(f'  {name[:60]} {a:#x} {k} {sl}', file=sys.stderr)
    if is_kernel and (spill or reload):
        bad.append(f'{name}: {spill} vector spills and {reload} reloads inside loops')
    if is_hvx and n_hvx == 0 and not via:
        bad.append(f'{name}: an HVX kernel without HVX instructions')

def short(n):
    n = re.sub(r'hexllm::htp::|\(anonymous namespace\)::', '', n)
    return re.sub(r'\([^()]*\)$', '', n)

print(f'{"object":<16} {"function":<44} {"insns":>6} {"hvx":>5} {"vrmpy":>5} {"loops":>5} '
      f'{"spill":>5} {"reload":>6} {"handoff":>7}')
for o, n, i, h, v, l, s, r, ho in rows:
    print(f'{o[:16]:<16} {short(n)[:44]:<44} {i:>6} {h:>5} {v:>5} {l:>5} {s:>5} {r:>6} {ho:>7}')
print(f'inspect-hexagon: {len(rows)} kernel functions, '
      f'{sum(1 for r in rows if hvx_re.search(r[1]))} HVX kernels, {len(bad)} problems')
for b in bad:
    print('inspect-hexagon: FAIL ' + b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
