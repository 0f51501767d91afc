#!/usr/bin/env python3
"""Static SASS instruction counts per kernel, for comparing builds without a GPU.

  sass_mix.py patch IN.cubin OUT.cubin
      Rewrites a CUDA 12.8+ cubin's ELF header (ABI version 8, architecture in bits
      8-15 of e_flags) to the older encoding (ABI version 7, EF_CUDA_SM | texmode
      unified | 64-bit addresses | EF_CUDA_VIRTUAL_SM) that nvdisasm 11.8 reads.
      The code sections are not touched.
  sass_mix.py mix FILE.sass [SUBSTRING]
      Per kernel whose mangled name contains SUBSTRING: the total instruction count
      (NOPs left out) and the count of each opcode (modifiers dropped), largest first.
Counts are static (each instruction once, loops not unrolled by their trip
counts): a proxy for straight-line kernels, not a profile.
"""
import collections
import re
import struct
import sys


def patch(src, dst):
    data = bytearray(open(src, 'rb').read())
    if data[:4] != b'\x7fELF':
        sys.exit(f'{src}: not an ELF file')
    flags = struct.unpack_from('<I', data, 0x30)[0]
    if data[8] == 8:  # the newer encoding: architecture in bits 8-15
        sm = (flags >> 8) & 0xff
        data[8] = 7
        struct.pack_into('<I', data, 0x30, sm | 0x100 | 0x400 | (sm << 16))
    open(dst, 'wb').write(data)


def mix(path, substring=''):
    sections = open(path).read().split('//--------------------- ')
    for sec in sections:
        head = sec.split('\n', 1)[0].strip()
        if not head.startswith('.text.') or substring not in head:
            continue
        ops = collections.Counter()
        for line in sec.split('\n'):
            m = re.match(r'\s+/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)', line)
            if m and m.group(2) != 'NOP':
                ops[m.group(2).split('.')[0]] += 1
        name = head[len('.text.'):].split()[0]
        print(f'{name}\n  total {sum(ops.values())}: ' +
              ', '.join(f'{k} {v}' for k, v in ops.most_common()))


if __name__ == '__main__':
    if len(sys.argv) >= 4 and sys.argv[1] == 'patch':
        patch(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == 'mix':
        mix(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else '')
    else:
        sys.exit(__doc__)
