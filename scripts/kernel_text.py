#!/usr/bin/env python3
"""Compares the machine code of the kernels in two sm_90 cubins (see sass_compare.sh).

Each kernel's code is its ELF section `.text.<mangled name>` (identical bytes: identical
instructions and registers). Kernels are matched by demangled name with `wham::detail::...::`
qualifiers removed, so a kernel moved between detail namespaces still matches; a kernel whose
name changed is matched by identical code instead.
  kernel_text.py OLD.cubin NEW.cubin
Exit status 0 when every old kernel has identical code in the new cubin, 1 otherwise."""
import hashlib
import re
import struct
import subprocess
import sys


def sections(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit(f"{path}: not an ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    def name(off):
        start = strtab[4] + off
        return data[start:data.index(b"\0", start)].decode()
    out = {}
    for h in heads:
        n = name(h[0])
        if n.startswith(".text."):
            out[n[len(".text."):]] = (data[h[4]:h[4] + h[5]], 0)
    return out


def demangle(names):
    if not names:
        return {}
    res = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return dict(zip(names, res))


def normal(d):
    return re.sub(r"wham::detail::(?:\w+::)*", "", d)


def main():
    old, new = sections(sys.argv[1]), sections(sys.argv[2])
    dold, dnew = demangle(list(old)), demangle(list(new))
    new_by_name = {normal(dnew[k]): k for k in new}
    new_by_code = {}
    for k, (code, regs) in new.items():
        new_by_code.setdefault((hashlib.sha256(code).hexdigest(), regs), []).append(k)
    same = renamed = differ = 0
    for k, (code, regs) in sorted(old.items(), key=lambda kv: dold[kv[0]]):
        n = normal(dold[k])
        key = (hashlib.sha256(code).hexdigest(), regs)
        if n in new_by_name and new[new_by_name[n]] == (code, regs):
            same += 1
        elif key in new_by_code:
            renamed += 1
            print(f"same code, new name: {n}\n    -> {normal(dnew[new_by_code[key][0]])}")
        else:
            differ += 1
            what = "differs" if n in new_by_name else "missing"
            extra = ""
            if n in new_by_name:
                c2, r2 = new[new_by_name[n]]
                extra = f" ({len(code)} -> {len(c2)} bytes)"
            print(f"{what}: {n}{extra}")
    added = len(new) - same - renamed
    print(f"{len(old)} kernels in old: {same} identical, {renamed} identical under a new name, "
          f"{differ} differ or missing; {max(added, 0)} kernels only in new")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
