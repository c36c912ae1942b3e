// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rows.c - unwind rows from an ELF file's CFI. See rows.h.
 *
 * libdw does the DWARF: it parses the CIEs and FDEs and interprets the
 * call frame instructions (dwarf_cfi_addrframe). What it does not expose
 * is the list of FDEs with their address ranges, so walk_fdes() reads the
 * initial location and range of each FDE that dwarf_next_cfi() returns,
 * with the CIE's pointer encoding: a dozen lines, hand-written for that
 * reason only. Each FDE is then cut into rows by asking libdw for the
 * frame state at its start and at the end of each state it returns.
 *
 * The file is hostile until shown otherwise (any user can map one), and
 * libdw trusts it more than a root daemon can: one lookup runs every
 * instruction of the FDE and its CIE, grows its register table to the
 * highest register named (up to 2 GiB), and copies that table on each
 * DW_CFA_remember_state. So before libdw sees a byte, cfi_vet() reads
 * every CIE's and FDE's instructions (hand-written for that reason: libdw
 * cannot check instructions without running them), and libdw is given a
 * one-section ELF image holding only the section walk_fdes() read, so no
 * .eh_frame_hdr table or PT_GNU_EH_FRAME segment can point it at entries
 * that were not vetted. A build also stops at a CPU time budget: each
 * lookup starts over at its FDE's first instruction, so a long FDE costs
 * the square of its length.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <time.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "rows.h"
#include "util.h"

#define FR_DW_RSP	7
#define FR_DW_RBP	6
#define FR_DW_RA	16
#define FR_DW_RIP	16
#define FR_DW_RDI	5

/*
 * What cfi_vet() lets through to libdw. The x86-64 psABI numbers DWARF
 * registers up to 145 (APX's r16-r31 are 130-145); GCC's and LLVM's CFI
 * name 0-16 only. 255 keeps libdw's table of rules under 4 KiB. Real code
 * nests DW_CFA_remember_state once or twice.
 */
#define FR_CFI_REG_MAX		255
#define FR_CFI_DEPTH_MAX	16

/*
 * A build's CPU time budget: 0.5 s plus 1 us per byte of the CFI section.
 * Real files take 50-110 ns per byte on a slow 2-CPU VM (python3.11 37 ms,
 * libLLVM-15 398 ms for 5.2 MB), 10x under the budget.
 */
#define FR_UROWS_CPU_BASE_NS	500000000ull
#define FR_UROWS_CPU_BYTE_NS	1000ull
/*
 * The budget is for this code as shipped. Under ASan a build costs about
 * 10x (cc1's 2.3 MB: 3.5 s of CPU beside a compile, over its 2.8 s
 * budget, so the ASan daemon walked every cc1 without rows, in
 * test_compile); the budget guards against CFI that costs quadratically,
 * which any constant factor still stops.
 */
#ifdef __SANITIZE_ADDRESS__
#define FR_UROWS_CPU_SLOWDOWN	4ull
#else
#define FR_UROWS_CPU_SLOWDOWN	1ull
#endif
#define FR_UROWS_CPU_EVERY	64	/* lookups between two reads of the clock */

/* A row being built: the rule and the order it sorts in at one pc. */
struct row_tmp {
	struct fr_urow r;
	uint32_t prio;		/* 0: the gap after an FDE; 1: an FDE's own row */
};

struct builder {
	struct row_tmp *v;
	size_t n, cap;
	struct urows_stats st;
	uint64_t deadline_ns;	/* thread CPU time at which the build gives up */
	uint32_t lookups;
};

struct cie_info {
	uint64_t off;
	uint8_t enc;		/* FDE pointer encoding ('R'), DW_EH_PE_absptr if none */
	bool signal;		/* 'S' augmentation */
	bool aug_z;		/* 'z': FDEs carry a sized augmentation block */
	unsigned depth;		/* DW_CFA_remember_state nesting its instructions leave */
};

/* The calling thread's CPU time; 0 if the clock cannot be read. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts = { 0 };

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One more libdw lookup: -ETIMEDOUT once the build is over its budget. */
static int builder__tick(struct builder *b)
{
	if (++b->lookups % FR_UROWS_CPU_EVERY)
		return 0;
	return thread_cpu_ns() > b->deadline_ns ? -ETIMEDOUT : 0;
}

static int builder__add(struct builder *b, uint64_t pc, const struct fr_urow *r, uint32_t prio)
{
	if (pc >> 32)
		return -E2BIG;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		void *v = realloc(b->v, cap * sizeof(*b->v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n].r = *r;
	b->v[b->n].r.pc = (uint32_t)pc;
	b->v[b->n++].prio = prio;
	return 0;
}

/* Size in bytes of a pointer in encoding @enc, 0 if not supported. */
static unsigned enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	default:
		return 0;
	}
}

/*
 * Decode a pointer in encoding @enc at @p (bounded by @end). @pcrel_base
 * is the virtual address of @p, for DW_EH_PE_pcrel. Returns 0 or -ENOEXEC.
 */
static int read_enc(const uint8_t *p, const uint8_t *end, uint8_t enc, uint64_t pcrel_base,
		    bool apply, uint64_t *out)
{
	unsigned sz = enc_size(enc);
	uint64_t v = 0;

	if (!sz || end - p < sz)
		return -ENOEXEC;
	memcpy(&v, p, sz);	/* little-endian host and file, checked by the caller */
	if (enc & 0x08) {	/* signed forms */
		if (sz == 4)
			v = (uint64_t)(int64_t)(int32_t)v;
		else if (sz == 2)
			v = (uint64_t)(int64_t)(int16_t)v;
	}
	if (apply) {
		switch (enc & 0x70) {
		case 0:
			break;
		case DW_EH_PE_pcrel:
			v += pcrel_base;
			break;
		default:
			return -ENOEXEC;	/* datarel, textrel, funcrel: not in .eh_frame */
		}
	}
	*out = v;
	return 0;
}

/*
 * Read an unsigned LEB128 at *@p, no further than @end, as libdw reads
 * one (at most 10 bytes). Returns false when it runs past @end or on.
 */
static bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned i = 0; i < 10 && *p < end; i++) {
		uint8_t byte = *(*p)++;

		r |= (uint64_t)(byte & 0x7f) << (7 * i);
		if (!(byte & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/* A ULEB128 register operand no higher than FR_CFI_REG_MAX. */
static bool vet_reg(const uint8_t **p, const uint8_t *end)
{
	uint64_t reg;

	return uleb(p, end, &reg) && reg <= FR_CFI_REG_MAX;
}

/* A ULEB128 length and the block it sizes. */
static bool vet_block(const uint8_t **p, const uint8_t *end)
{
	uint64_t len;

	if (!uleb(p, end, &len) || len > (uint64_t)(end - *p))
		return false;
	*p += len;
	return true;
}

/*
 * Operands of a call frame instruction, by opcode (DWARF 5 6.4.2 and the
 * GNU and MIPS extensions libdw 0.188 runs): R a register, U/S a
 * (S)LEB128, B a sized block, and 1/2/4/8 fixed bytes. The rest (NULL)
 * are refused. DW_CFA_set_loc (0x01) is handled by the caller.
 */
static const char *const cfa_operands[0x30] = {
	[DW_CFA_nop] = "", [DW_CFA_advance_loc1] = "1", [DW_CFA_advance_loc2] = "2",
	[DW_CFA_advance_loc4] = "4", [DW_CFA_offset_extended] = "RU",
	[DW_CFA_restore_extended] = "R", [DW_CFA_undefined] = "R", [DW_CFA_same_value] = "R",
	[DW_CFA_register] = "RR", [DW_CFA_remember_state] = "", [DW_CFA_restore_state] = "",
	[DW_CFA_def_cfa] = "RU", [DW_CFA_def_cfa_register] = "R", [DW_CFA_def_cfa_offset] = "U",
	[DW_CFA_def_cfa_expression] = "B", [DW_CFA_expression] = "RB",
	[DW_CFA_offset_extended_sf] = "RS", [DW_CFA_def_cfa_sf] = "RS",
	[DW_CFA_def_cfa_offset_sf] = "S", [DW_CFA_val_offset] = "RU",
	[DW_CFA_val_offset_sf] = "RS", [DW_CFA_val_expression] = "RB",
	[DW_CFA_MIPS_advance_loc8] = "8", [DW_CFA_GNU_window_save] = "",
	[DW_CFA_GNU_args_size] = "U", [DW_CFA_GNU_negative_offset_extended] = "RU",
};

/* The operands @ops of one instruction at *@p, stepped over. */
static bool vet_operands(const char *ops, const uint8_t **p, const uint8_t *end)
{
	uint64_t v;

	for (; *ops; ops++) {
		switch (*ops) {
		case 'R':
			if (!vet_reg(p, end))
				return false;
			break;
		case 'U':
		case 'S':
			if (!uleb(p, end, &v))	/* the same bytes as an SLEB128 */
				return false;
			break;
		case 'B':
			if (!vet_block(p, end))
				return false;
			break;
		default:
			if (end - *p < *ops - '0')
				return false;
			*p += *ops - '0';
			break;
		}
	}
	return true;
}

/*
 * cfi_vet() - check the call frame instructions [@p, @end) before libdw
 * runs them (see the top of the file). @set_loc is the size of
 * DW_CFA_set_loc's operand (0: not allowed); *@depth the remember_state
 * nesting, carried from a CIE into its FDEs. Returns 0, or -ENOEXEC for
 * an operand past @end, an opcode not in cfa_operands, a register above
 * FR_CFI_REG_MAX, or nesting deeper than FR_CFI_DEPTH_MAX.
 */
static int cfi_vet(const uint8_t *p, const uint8_t *end, unsigned set_loc, unsigned *depth)
{
	while (p < end) {
		uint8_t op = *p++;
		const char *ops;

		if (op & 0xc0) {
			/* advance_loc, offset (and its ULEB128), restore: the
			 * register is in the low 6 bits, below FR_CFI_REG_MAX */
			if ((op & 0xc0) == DW_CFA_offset && !vet_operands("U", &p, end))
				return -ENOEXEC;
			continue;
		}
		if (op == DW_CFA_set_loc) {
			if (!set_loc || (size_t)(end - p) < set_loc)
				return -ENOEXEC;
			p += set_loc;
			continue;
		}
		ops = op < sizeof(cfa_operands) / sizeof(cfa_operands[0]) ? cfa_operands[op] : NULL;
		if (!ops || !vet_operands(ops, &p, end))
			return -ENOEXEC;
		if (op == DW_CFA_remember_state && ++*depth > FR_CFI_DEPTH_MAX)
			return -ENOEXEC;
		if (op == DW_CFA_restore_state && *depth)
			--*depth;
	}
	return 0;
}

/*
 * The 'R' encoding and the 'S' flag of a CIE's augmentation, and its
 * instructions vetted. Returns 0, or -ENOEXEC for instructions cfi_vet()
 * refuses or an augmentation libdw might read differently.
 */
static int cie_parse(const Dwarf_CIE *c, struct cie_info *ci)
{
	const uint8_t *a = c->augmentation_data;
	const uint8_t *aend = a ? a + c->augmentation_data_size : NULL;
	const char *aug = c->augmentation ? c->augmentation : "", *s = aug;
	int err;

	ci->enc = DW_EH_PE_absptr;
	ci->signal = false;
	ci->aug_z = *s == 'z';
	ci->depth = 0;
	err = cfi_vet(c->initial_instructions, c->initial_instructions_end, 0, &ci->depth);
	if (err)
		return err;
	if (*s != 'z') {
		/* .debug_frame's "" or "S": no augmentation data. Any other
		 * letter may hide some before the instructions. */
		for (; *s; s++)
			if (*s != 'S')
				return -ENOEXEC;
		ci->signal = *aug == 'S';
		return 0;
	}
	for (s++; *s; s++) {
		switch (*s) {
		case 'R':
			if (a && a < aend)
				ci->enc = *a++;
			break;
		case 'L':
			if (a && a < aend)
				a++;
			break;
		case 'P':
			if (a && a < aend) {
				unsigned sz = enc_size(*a);

				a += 1 + sz;
			}
			break;
		case 'S':
			ci->signal = true;
			break;
		default:
			return 0;
		}
	}
	return 0;
}

/* The Dwarf_Op list @ops is "CFA + k": store k. */
static bool is_cfa_offset(const Dwarf_Op *ops, size_t n, int64_t *k)
{
	if (n < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (n == 1) {
		*k = 0;
		return true;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*k = (int64_t)ops[1].number;
		return true;
	}
	if (n == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus) {
		*k = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * GCC's PLT CFA: rsp + n, + 8 once past the push of a lazy-binding entry:
 * breg7 n; breg16 0; lit15; and; litK; ge; lit3; shl; plus.
 */
static bool is_plt_expr(const Dwarf_Op *o, size_t n, struct fr_urow *r)
{
	if (n != 9 || o[0].atom != DW_OP_breg7 || o[1].atom != DW_OP_breg16 || o[1].number ||
	    o[2].atom != DW_OP_lit15 || o[3].atom != DW_OP_and ||
	    o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit31 || o[5].atom != DW_OP_ge ||
	    o[6].atom != DW_OP_lit3 || o[7].atom != DW_OP_shl || o[8].atom != DW_OP_plus)
		return false;
	if ((int64_t)o[0].number < 0 || o[0].number > UINT16_MAX)
		return false;
	r->kind = FR_UROW_PLT;
	r->cfa_off = (uint16_t)o[0].number;
	r->rbp_off = (int8_t)(o[4].atom - DW_OP_lit0);
	return true;
}

/* The CFA rule of @fr into @r; false if the walker cannot follow it. */
static bool cfa_rule(Dwarf_Frame *fr, struct fr_urow *r)
{
	Dwarf_Op *ops;
	size_t n;

	if (dwarf_frame_cfa(fr, &ops, &n) || n == 0)
		return false;
	if (n == 1) {
		uint64_t reg = ops[0].atom == DW_OP_bregx ? ops[0].number :
			       (uint64_t)(ops[0].atom - DW_OP_breg0);
		int64_t off = (int64_t)(ops[0].atom == DW_OP_bregx ? ops[0].number2 :
					ops[0].number);

		/* libdw gives "reg + off" as DW_OP_bregx, an expression as DW_OP_bregN. */
		if (ops[0].atom != DW_OP_bregx &&
		    (ops[0].atom < DW_OP_breg0 || ops[0].atom > DW_OP_breg31))
			return false;
		if ((reg != FR_DW_RSP && reg != FR_DW_RBP) || off < 0 || off > UINT16_MAX)
			return false;
		r->kind = reg == FR_DW_RSP ? FR_UROW_RSP : FR_UROW_RBP;
		r->cfa_off = (uint16_t)off;
		return true;
	}
	return is_plt_expr(ops, n, r);
}

/* The Dwarf_Op list @ops is "in register rdi" (DW_CFA_register): the return address of __vfork. */
static bool is_reg_rdi(const Dwarf_Op *ops, size_t n)
{
	return n == 1 && ((ops[0].atom == DW_OP_regx && ops[0].number == FR_DW_RDI) ||
			  ops[0].atom == DW_OP_reg0 + FR_DW_RDI);
}

/* The rule of @fr at one address, as a row (pc not set). */
static void frame_rule(Dwarf_Frame *fr, bool signal, struct fr_urow *r, struct urows_stats *st)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t k;

	memset(r, 0, sizeof(*r));
	if (signal) {
		r->kind = FR_UROW_SIGNAL;
		return;
	}
	r->kind = FR_UROW_INVALID;
	if (dwarf_frame_register(fr, FR_DW_RA, mem, &ops, &n))
		goto invalid;
	if (n == 0 && ops == mem) {
		r->kind = FR_UROW_STOP;		/* DW_CFA_undefined rip: outermost */
		st->stop++;
		return;
	}
	if (is_reg_rdi(ops, n)) {
		if (!cfa_rule(fr, r) || r->kind != FR_UROW_RSP)
			goto invalid;
		r->kind = FR_UROW_RA_RDI;
		st->ra_rdi++;
		return;
	}
	if (!is_cfa_offset(ops, n, &k) || k != -8)
		goto invalid;
	if (!cfa_rule(fr, r))
		goto invalid;
	if (r->kind == FR_UROW_PLT)
		st->plt++;
	if (dwarf_frame_register(fr, FR_DW_RBP, mem, &ops, &n))
		goto invalid;
	if (n == 0)
		return;			/* same value, or undefined: rbp is kept */
	if (!is_cfa_offset(ops, n, &k) || (k & 7) || k / 8 < INT8_MIN || k / 8 > INT8_MAX)
		goto invalid;
	if (r->kind == FR_UROW_PLT)
		goto invalid;		/* rbp_off holds the PLT threshold */
	r->kind |= FR_UROW_RBP_CFA;
	r->rbp_off = (int8_t)(k / 8);
	return;
invalid:
	memset(r, 0, sizeof(*r));
	r->kind = FR_UROW_INVALID;
	st->invalid++;
}

/* The rows of one FDE covering [lo, hi), then a gap row at hi. */
static int fde_rows(Dwarf_CFI *cfi, uint64_t lo, uint64_t hi, bool signal, struct builder *b)
{
	const struct fr_urow gap = { .kind = FR_UROW_NONE };
	uint64_t addr = lo;
	int err;

	while (addr < hi) {
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr start, end;
		bool sig = false;
		struct fr_urow r;

		err = builder__tick(b);
		if (err)
			return err;
		if (dwarf_cfi_addrframe(cfi, addr, &fr) || !fr)
			break;
		if (dwarf_frame_info(fr, &start, &end, &sig) < 0)
			end = hi;
		frame_rule(fr, signal || sig, &r, &b->st);
		free(fr);
		/* A return address - 1 must find a signal trampoline's row: it
		 * starts a byte early too, and at lo over the gap an FDE right
		 * before may end with there. */
		if (addr == lo && (signal || sig) && addr) {
			err = builder__add(b, addr - 1, &r, 1);
			if (err)
				return err;
		}
		err = builder__add(b, addr, &r, 1);
		if (err)
			return err;
		if (end <= addr || end > hi)
			break;
		addr = end;
	}
	return builder__add(b, hi, &gap, 0);
}

/* The CIE at section offset @off among @cies[0..@n), or NULL. */
static const struct cie_info *cie_find(const struct cie_info *cies, size_t n, uint64_t off)
{
	for (size_t i = n; i-- > 0;)
		if (cies[i].off == off)
			return &cies[i];
	return NULL;
}

/*
 * The address range of FDE @f of CIE @ci, read from CFI data @d at
 * virtual address @vaddr, into *@lo and *@len; with @vet, its
 * instructions vetted too. Returns 0 or -ENOEXEC.
 */
static int fde_parse(const Dwarf_FDE *f, const struct cie_info *ci, bool eh, const Elf_Data *d,
		     uint64_t vaddr, bool vet, uint64_t *lo, uint64_t *len)
{
	uint8_t enc = eh ? ci->enc : DW_EH_PE_absptr;
	const uint8_t *p = f->start;
	uint64_t field = vaddr + (uint64_t)(p - (const uint8_t *)d->d_buf);
	unsigned depth = ci->depth;

	if (read_enc(p, f->end, enc, field, true, lo) ||
	    read_enc(p + enc_size(enc), f->end, enc, 0, false, len))
		return -ENOEXEC;
	if (!vet)
		return 0;
	p += 2 * enc_size(enc);
	if (ci->aug_z && !vet_block(&p, f->end))
		return -ENOEXEC;
	return cfi_vet(p, f->end, eh ? enc_size(enc) : 0, &depth);
}

/*
 * Every entry of CFI section @scn (.eh_frame if @eh): with @cfi NULL,
 * each CIE and FDE read and its instructions vetted; else each FDE cut
 * into rows through @cfi. Returns 0 or -errno.
 */
static int walk_fdes(Elf *e, Elf_Scn *scn, bool eh, Dwarf_CFI *cfi, struct builder *b)
{
	struct cie_info *cies = NULL;
	size_t ncies = 0, cap = 0;
	Dwarf_Off off = 0, next;
	GElf_Shdr sh;
	Elf_Data *d;
	int err = 0;

	if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return -ENOEXEC;
	for (;;) {
		Dwarf_CFI_Entry ent;
		const struct cie_info *ci;
		uint64_t lo, len, cur = off;
		int r = dwarf_next_cfi((const unsigned char *)elf_getident(e, NULL), d, eh,
				       off, &next, &ent);

		if (r > 0)
			break;
		if (r < 0) {
			err = -ENOEXEC;
			break;
		}
		off = next;
		if (dwarf_cfi_cie_p(&ent)) {
			if (ncies == cap) {
				void *v = realloc(cies, (cap = cap ? cap * 2 : 16) * sizeof(*cies));

				if (!v) {
					err = -ENOMEM;
					break;
				}
				cies = v;
			}
			cies[ncies].off = cur;
			err = cie_parse(&ent.cie, &cies[ncies]);
			if (err)
				break;
			ncies++;
			if (next == (Dwarf_Off)-1)
				break;
			continue;
		}
		ci = cie_find(cies, ncies, ent.fde.CIE_pointer);
		err = ci ? fde_parse(&ent.fde, ci, eh, d, sh.sh_addr, !cfi, &lo, &len) : -ENOEXEC;
		if (err)
			break;
		if (cfi) {
			b->st.fdes++;
			if (ci->signal)
				b->st.signal++;
			if (len)
				err = fde_rows(cfi, lo, lo + len, ci->signal, b);
			if (err)
				break;
		}
		if (next == (Dwarf_Off)-1)
			break;
	}
	free(cies);
	return err;
}

static int row_tmp__cmp(const void *a, const void *b)
{
	const struct row_tmp *x = a, *y = b;

	if (x->r.pc != y->r.pc)
		return x->r.pc < y->r.pc ? -1 : 1;
	return (int)x->prio - (int)y->prio;
}

static bool same_rule(const struct fr_urow *a, const struct fr_urow *b)
{
	return a->kind == b->kind && a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}

/*
 * Sort, keep one row per pc (an FDE's own row over the gap an earlier FDE
 * ends with there), and drop each row whose rule is its predecessor's.
 */
static int builder__finish(struct builder *b, struct urows *u)
{
	size_t n = 0;

	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), row_tmp__cmp);
	u->row = malloc((b->n ? b->n : 1) * sizeof(*u->row));
	if (!u->row)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		const struct fr_urow *r = &b->v[i].r;

		if (i + 1 < b->n && b->v[i + 1].r.pc == r->pc)
			continue;	/* the last one at a pc wins: highest prio */
		if (n && same_rule(&u->row[n - 1], r))
			continue;
		if (!n && (r->kind & FR_UROW_KIND_MASK) == FR_UROW_NONE)
			continue;
		u->row[n++] = *r;
	}
	if (n > FR_UROWS_MAX)
		return -E2BIG;
	u->n = (uint32_t)n;
	u->st = b->st;
	return 0;
}

static void read_loads(Elf *e, struct urows *u)
{
	size_t phnum;

	if (elf_getphdrnum(e, &phnum))
		return;
	for (size_t i = 0; i < phnum && u->nload < FR_UROWS_LOADS; i++) {
		GElf_Phdr ph;

		/* Code only: lld puts a read-only and the code segment in one
		 * file page, and only executable mappings are walked. */
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		u->load[u->nload++] = (struct urows_load){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
}

static Elf_Scn *find_section(Elf *e, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;	/* ld leaves an empty .eh_frame beside .debug_frame */
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The image lone_elf() makes: its header, section headers and names; then the data. */
struct lone_hdr {
	Elf64_Ehdr eh;
	Elf64_Shdr sh[3];	/* none, .shstrtab, the CFI */
	char names[32];
};

#define FR_LONE_NAMES	"\0.shstrtab"	/* then the CFI section's name */

/*
 * lone_elf() - a copy of section @scn, named @name, alone in an ELF image
 * in memory at the same address, of the file's ELF type @type: what
 * libdw is given (see the top of the file). On success *@out is the
 * image's Elf and *@img its memory, to be freed after elf_end(). Returns
 * 0, -ENOEXEC when the section's data cannot be read, or -ENOMEM.
 */
static int lone_elf(Elf_Scn *scn, const char *name, uint16_t type, Elf **out, void **img)
{
	const size_t hdr = (sizeof(struct lone_hdr) + 15) & ~(size_t)15;
	size_t at = sizeof(FR_LONE_NAMES);
	struct lone_hdr *l;
	GElf_Shdr sh;
	Elf_Data *d;

	*out = NULL;
	*img = NULL;
	if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return -ENOEXEC;
	l = calloc(1, hdr + d->d_size);
	if (!l)
		return -ENOMEM;
	memcpy((char *)l + hdr, d->d_buf, d->d_size);
	memcpy(l->eh.e_ident, ELFMAG, SELFMAG);
	l->eh.e_ident[EI_CLASS] = ELFCLASS64;
	l->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	l->eh.e_ident[EI_VERSION] = EV_CURRENT;
	l->eh.e_type = type;
	l->eh.e_machine = EM_X86_64;
	l->eh.e_version = EV_CURRENT;
	l->eh.e_ehsize = sizeof(l->eh);
	l->eh.e_shoff = offsetof(struct lone_hdr, sh);
	l->eh.e_shentsize = sizeof(l->sh[0]);
	l->eh.e_shnum = 3;
	l->eh.e_shstrndx = 1;
	memcpy(l->names, FR_LONE_NAMES, at);
	memcpy(l->names + at, name, strlen(name) + 1);	/* ".debug_frame": 12 + 1 bytes */
	l->sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB,
				 .sh_offset = offsetof(struct lone_hdr, names),
				 .sh_size = sizeof(l->names), .sh_addralign = 1 };
	l->sh[2] = (Elf64_Shdr){ .sh_name = (Elf64_Word)at, .sh_type = SHT_PROGBITS,
				 .sh_flags = sh.sh_flags & SHF_ALLOC, .sh_addr = sh.sh_addr,
				 .sh_offset = hdr, .sh_size = d->d_size, .sh_addralign = 8 };
	*out = elf_memory((char *)l, hdr + d->d_size);
	if (!*out) {
		free(l);
		return -ENOMEM;
	}
	*img = l;
	return 0;
}

/*
 * Rows from lone image @lone (eh: .eh_frame): every entry vetted, then
 * cut into rows through libdw within the CPU time budget. Returns 0 or
 * -errno.
 */
static int build_lone(Elf *lone, bool eh, struct builder *b)
{
	Elf_Scn *scn = elf_getscn(lone, 2);
	Dwarf_CFI *cfi = NULL;
	Dwarf *dw = NULL;
	GElf_Shdr sh;
	int err;

	if (!scn || !gelf_getshdr(scn, &sh))
		return -ENOEXEC;
	err = walk_fdes(lone, scn, eh, NULL, b);
	if (err)
		return err;
	if (eh) {
		cfi = dwarf_getcfi_elf(lone);
	} else {
		dw = dwarf_begin_elf(lone, DWARF_C_READ, NULL);
		cfi = dw ? dwarf_getcfi(dw) : NULL;
	}
	b->deadline_ns = thread_cpu_ns() + FR_UROWS_CPU_SLOWDOWN * (FR_UROWS_CPU_BASE_NS +
							       sh.sh_size * FR_UROWS_CPU_BYTE_NS);
	if (cfi)
		err = walk_fdes(lone, scn, eh, cfi, b);
	if (dw)
		dwarf_end(dw);
	else if (cfi)
		dwarf_cfi_end(cfi);
	return err;
}

/*
 * The rows of @e: .eh_frame through libdw's EH CFI, else .debug_frame.
 * Returns 0 or -errno.
 */
/*
 * The ELF entry point is where the kernel starts a process, or ld.so: no
 * call leads there, so a frame at it is the outermost. glibc's ld.so
 * enters at _start, whose inline asm (RTLD_START) has no CFI, nor has
 * _dl_start_user after it, to which _dl_start and _dl_init return: Debian
 * 12's ld.so leaves [0x1ab70, 0x1abb0) between two FDEs. Without a row
 * there, every sample in the dynamic loader of a starting process ended
 * in frame pointers that were never set (no_info; 3 % of the samples of
 * 20-50 ms gzip processes under ASan), where perf's stacks end at _start.
 * So the gap that holds @entry, if no FDE covers it, gets a stop row from
 * @entry to the next FDE, but for FR_ENTRY_STOP_MAX bytes at most: past
 * that, code without CFI keeps its frame pointers. A file without CFI
 * keeps no rows. Returns 0 or -ENOMEM.
 */
#define FR_ENTRY_STOP_MAX	256

/*
 * Drop each row whose rule is its predecessor's. entry_stop() can put its
 * stop row beside a stop row of the file's own CFI (an FDE whose return
 * address is undefined, as _start's may be, right before or after the
 * gap), and the BPF binary search must never meet two rows with one rule.
 */
static void merge_neighbours(struct urows *u)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < u->n; i++) {
		if (n && same_rule(&u->row[n - 1], &u->row[i]))
			continue;
		u->row[n++] = u->row[i];
	}
	u->n = n;
}

static int entry_stop(struct urows *u, uint64_t entry)
{
	struct fr_urow *row;
	uint64_t next, end;
	uint32_t i = 0, from;
	bool replace, tail;

	if (!u->n || !entry || (entry + FR_ENTRY_STOP_MAX) >> 32 || u->n + 2 > FR_UROWS_MAX)
		return 0;
	while (i < u->n && u->row[i].pc <= entry)
		i++;
	/* row[i - 1] rules at @entry; row[i] is the first row past it */
	if (i && (u->row[i - 1].kind & FR_UROW_KIND_MASK) != FR_UROW_NONE)
		return 0;
	next = i < u->n ? u->row[i].pc : UINT64_MAX;
	end = FR_MIN(next, entry + FR_ENTRY_STOP_MAX);
	replace = i && u->row[i - 1].pc == entry;	/* a gap's row at @entry itself */
	if (replace)
		i--;
	tail = end < next;
	from = replace ? i + 1 : i;	/* the rows that move */
	row = realloc(u->row, (u->n + !replace + tail) * sizeof(*row));
	if (!row)
		return -ENOMEM;
	u->row = row;
	memmove(&row[i + 1 + tail], &row[from], (u->n - from) * sizeof(*row));
	row[i] = (struct fr_urow){ .pc = (uint32_t)entry, .kind = FR_UROW_STOP };
	if (tail)
		row[i + 1] = (struct fr_urow){ .pc = (uint32_t)end, .kind = FR_UROW_NONE };
	u->n += !replace + tail;
	u->st.stop++;
	merge_neighbours(u);
	return 0;
}

static int build_elf(Elf *e, struct urows *u)
{
	struct builder b = { 0 };
	Elf *lone = NULL;
	void *img = NULL;
	Elf_Scn *scn;
	GElf_Ehdr eh;
	bool is_eh;
	int err = 0;

	memset(u, 0, sizeof(*u));
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return -ENOEXEC;
	read_loads(e, u);
	scn = find_section(e, ".eh_frame");
	is_eh = scn != NULL;
	if (!scn)
		scn = find_section(e, ".debug_frame");
	if (scn)
		err = lone_elf(scn, is_eh ? ".eh_frame" : ".debug_frame", eh.e_type, &lone, &img);
	if (!err && lone)
		err = build_lone(lone, is_eh, &b);
	if (!err)
		err = builder__finish(&b, u);
	if (!err && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN))
		err = entry_stop(u, eh.e_entry);
	elf_end(lone);
	free(img);
	free(b.v);
	if (err)
		urows__fini(u);
	return err;
}

int urows__build_fd(int fd, struct urows *out)
{
	struct pyfile py;
	Elf *e;
	int err;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return -ENOEXEC;
	err = build_elf(e, out);
	/* Rows or not, the same open file says whether it is an interpreter. */
	if (pydetect__elf(e, &py) <= 0)
		memset(&py, 0, sizeof(py));
	out->py = py;
	elf_end(e);
	return err;
}

int urows__build_mem(const void *image, size_t len, struct urows *out)
{
	void *copy = malloc(len ? len : 1);
	Elf *e;
	int err;

	memset(out, 0, sizeof(*out));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, len);	/* libelf may want to write to its image */
	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_memory(copy, len))) {
		free(copy);
		return -ENOEXEC;
	}
	err = build_elf(e, out);
	elf_end(e);
	free(copy);
	return err;
}

void urows__fini(struct urows *u)
{
	if (!u)
		return;
	free(u->row);
	u->row = NULL;
	u->n = 0;
}

const struct fr_urow *urows__find(const struct urows *u, uint32_t v)
{
	uint32_t lo = 0, hi = u->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (u->row[mid].pc <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &u->row[lo - 1] : NULL;
}

int fr_load_bias(const struct urows_load *load, uint32_t n, uint64_t start, uint64_t pgoff,
		 uint64_t *bias)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct urows_load *l = &load[i];
		uint64_t page_off = l->offset & ~(uint64_t)0xfff;

		if (pgoff >= page_off && pgoff < l->offset + FR_MAX(l->filesz, 1)) {
			*bias = start - pgoff + l->offset - l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}
