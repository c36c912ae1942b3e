#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Write the crafted ELF seeds of tests/fuzz/corpus/elf/.

    tests/fuzz/make_elf_seeds.py DIR

Each file is an 8 KiB x86-64 ELF shared object: one PT_LOAD over the whole
file, a build-id note (the SHA-1 of its name), a .symtab naming fr_crafted_loop at 0x1000, where the
countdown loop of `frtool map-exec FILE 0x1000 SECONDS` sits. valid.elf is
the well-formed base; every other file breaks one thing the ELF symbol
loader must survive: absurd section or program header counts, tables past
the end of the file, a huge sh_size, sections that overlap the headers or
link to themselves, names and indexes out of range, a note whose sizes wrap,
a compressed symbol table that claims a terabyte.
"""
import hashlib
import os
import struct
import sys

SIZE = 0x2000
CODE = 0x1000
NOTE = 0x1800
SYMTAB = 0x1900
STRTAB = 0x1940
SHSTRTAB = 0x1960
SHDRS = 0x1A00
LOOP = bytes([0x48, 0xFF, 0xCF, 0x75, 0xFB, 0xC3])   # dec %rdi; jnz .-3; ret
STRS = b"\0fr_crafted_loop\0"
SHSTRS = b"\0.text\0.symtab\0.strtab\0.shstrtab\0.note.gnu.build-id\0"


def name_off(n):
    return SHSTRS.index(n.encode() + b"\0")


def base():
    """The fields of valid.elf, as a dict the variants edit."""
    return {
        "phnum": 2, "shnum": 6, "shoff": SHDRS, "phoff": 0x40, "shstrndx": 4,
        "note": (4, 20, 3),
        "sym": (1, 0x12, 0, 1, CODE, len(LOOP)),
        "strtab": STRS,
        "sh": [
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
            (name_off(".text"), 1, 6, CODE, CODE, 0x100, 0, 0, 16, 0),
            (name_off(".symtab"), 2, 0, 0, SYMTAB, 48, 3, 1, 8, 24),
            (name_off(".strtab"), 3, 0, 0, STRTAB, len(STRS), 0, 0, 1, 0),
            (name_off(".shstrtab"), 3, 0, 0, SHSTRTAB, len(SHSTRS), 0, 0, 1, 0),
            (name_off(".note.gnu.build-id"), 7, 2, NOTE, NOTE, 36, 0, 0, 4, 0),
        ],
        "chdr": None,
    }


def build(name, f):
    img = bytearray(SIZE)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    img[0:64] = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, CODE, f["phoff"], f["shoff"], 0,
                                    64, 56, f["phnum"] & 0xFFFF, 64, f["shnum"] & 0xFFFF,
                                    f["shstrndx"])
    phdrs = [(1, 5, 0, 0, 0, SIZE, SIZE, 0x1000), (4, 4, NOTE, NOTE, NOTE, 36, 36, 4)]
    for i, ph in enumerate(phdrs):
        off = 0x40 + 56 * i
        img[off:off + 56] = struct.pack("<IIQQQQQQ", *ph)
    img[CODE:CODE + len(LOOP)] = LOOP
    namesz, descsz, ntype = f["note"]
    img[NOTE:NOTE + 16] = struct.pack("<III", namesz, descsz, ntype) + b"GNU\0"
    # Distinct build-ids: the symbol cache keys binaries by them.
    img[NOTE + 16:NOTE + 36] = hashlib.sha1(name.encode()).digest()
    img[SYMTAB + 24:SYMTAB + 48] = struct.pack("<IBBHQQ", *f["sym"])
    strtab = f["strtab"][:SHSTRTAB - STRTAB]
    img[STRTAB:STRTAB + len(strtab)] = strtab
    img[SHSTRTAB:SHSTRTAB + len(SHSTRS)] = SHSTRS
    for i, sh in enumerate(f["sh"]):
        off = SHDRS + 64 * i
        if off + 64 <= SIZE:
            img[off:off + 64] = struct.pack("<IIQQQQIIQQ", *sh)
    if f["chdr"]:
        img[SYMTAB:SYMTAB + 24] = struct.pack("<IIQQ", *f["chdr"])
    return bytes(img)


def sh_set(f, idx, **kw):
    keys = ["name", "type", "flags", "addr", "offset", "size", "link", "info", "align", "entsize"]
    row = list(f["sh"][idx])
    for k, v in kw.items():
        row[keys.index(k)] = v
    f["sh"][idx] = tuple(row)


def variants():
    yield "valid", base()
    f = base(); f["shnum"] = 0xFFFF; yield "huge-shnum", f
    f = base(); f["shoff"] = 0x100000; yield "shoff-past-eof", f
    f = base(); f["phnum"] = 0xFFFF; yield "huge-phnum", f
    f = base(); f["shnum"] = 0; sh_set(f, 0, size=0xFFFFFFFF); yield "extended-shnum", f
    f = base(); sh_set(f, 2, size=1 << 62); yield "huge-sh-size", f
    f = base(); sh_set(f, 2, link=2); yield "symtab-links-itself", f
    f = base(); sh_set(f, 2, offset=0, size=SIZE); sh_set(f, 3, offset=SHDRS, size=0x600)
    yield "sections-overlap-headers", f
    f = base(); sh_set(f, 2, offset=0x1FFF0); yield "section-past-eof", f
    f = base(); sh_set(f, 2, link=0xFFFF); yield "link-out-of-range", f
    f = base(); f["sym"] = (0xFFFFFFF0, 0x12, 0, 0xFFF0, (1 << 64) - 2, 1 << 63)
    yield "symbol-fields-out-of-range", f
    f = base(); f["note"] = (0xFFFFFFFF, 0xFFFFFFFC, 3); yield "note-sizes-wrap", f
    f = base(); f["strtab"] = b"\0" + b"A" * 64; sh_set(f, 3, size=SIZE - STRTAB)
    yield "strtab-unterminated", f
    f = base(); sh_set(f, 2, flags=0x800); f["chdr"] = (1, 0, 1 << 40, 8)
    yield "compressed-claims-terabyte", f
    f = base(); f["shstrndx"] = 0xFFFF; yield "shstrndx-out-of-range", f


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_elf_seeds.py DIR")
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, f in variants():
        with open(os.path.join(sys.argv[1], name + ".elf"), "wb") as out:
            out.write(build(name, f))


if __name__ == "__main__":
    main()
