/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python.bpf.h - the sampled thread's Python frames (contract.h, issue 27).
 *
 * The daemon puts where a process's interpreter keeps its state, and the
 * layout of its structures, in the process's table (struct fr_pyproc). At
 * a sample the thread's state is found by its kernel tid: the one holding
 * the GIL is tried first, then the interpreter's list, bounded. Its frame
 * chain is walked leaf first, bounded, and each frame sent as (code
 * object, instruction index, fingerprint): the daemon reads the code
 * object's names itself, later, through its untrusted-input rules. Every
 * pointer is the process's: read with bpf_probe_read_user(), never trusted.
 * A chain that loops or breaks ends the walk; what was read is sent.
 */
#ifndef FR_PYTHON_BPF_H
#define FR_PYTHON_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_pybuf);
} pyscratch SEC(".maps");

static __always_inline __u64 py_u64(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/*
 * py_thread() - the thread state of kernel thread @tid in interpreter
 * @py's process: the GIL holder's if it is @tid's, else the first of the
 * main interpreter's FR_PY_MAX_THREADS states whose native_thread_id is
 * @tid. 0: none (a thread Python does not know, or an unreadable list).
 */
static __always_inline __u64 py_thread(const struct fr_pyproc *py, __u32 tid)
{
	__u64 ts = py_u64(py->runtime + py->off[FR_PYOFF_TSTATE_CURRENT]), interp;

	if (ts && py_u64(ts + py->off[FR_PYOFF_TSTATE_TID]) == tid)
		return ts;
	interp = py_u64(py->runtime + py->off[FR_PYOFF_INTERP_HEAD]);
	if (!interp)
		return 0;
	ts = py_u64(interp + py->off[FR_PYOFF_INTERP_THREADS]);
	for (int i = 0; i < FR_PY_MAX_THREADS && ts; i++) {
		if (py_u64(ts + py->off[FR_PYOFF_TSTATE_TID]) == tid)
			return ts;
		ts = py_u64(ts + py->off[FR_PYOFF_TSTATE_NEXT]);
	}
	return 0;
}

/*
 * fr_py_walk() - the Python frames of thread @tid of the process whose
 * table is @p, leaf first, into @b: b->tail.pn frames, and the eval
 * loop's code. Returns the number of frames, 0 when the thread has none
 * (or the process no interpreter), -1 when its state could not be read.
 * A global function: verified once, on its own (FR_PY_MAX_FRAMES
 * iterations of a short body, well inside the verifier's limits).
 */
__noinline int fr_py_walk(const struct fr_uproc *p, struct fr_pybuf *b, __u32 tid)
{
	const struct fr_pyproc *py;
	__u64 ts, frame;
	__u32 n = 0;

	if (!p || !b || !p->py.runtime)
		return 0;
	py = &p->py;
	ts = py_thread(py, tid);
	if (!ts)
		return 0;
	frame = py_u64(ts + py->off[FR_PYOFF_TSTATE_CFRAME]);
	if (!frame)
		return -1;
	frame = py_u64(frame + py->off[FR_PYOFF_CFRAME_CURRENT]);
	for (int i = 0; i < FR_PY_MAX_FRAMES && frame; i++) {
		__u64 code = py_u64(frame + py->off[FR_PYOFF_FRAME_CODE]);
		__u64 instr = py_u64(frame + py->off[FR_PYOFF_FRAME_INSTR]), first;
		__u32 w[6] = {}, lasti = 0;
		__u8 entry = 0;

		if (!code)
			break;
		bpf_probe_read_user(&entry, 1, (const void *)(frame + py->off[FR_PYOFF_FRAME_ENTRY]));
		if (bpf_probe_read_user(w, sizeof(w),
					(const void *)(code + py->off[FR_PYOFF_CODE_PRINT])))
			break;
		first = code + py->off[FR_PYOFF_CODE_CODE];
		/* A frame not started yet points just before its first instruction. */
		if (instr >= first && instr - first < (1ULL << 31))
			lasti = (__u32)((instr - first) / 2);
		b->f[i].code = code;
		b->f[i].lasti = lasti | (entry ? FR_PYFRAME_ENTRY : 0);
		b->f[i].print = fr_pyprint(w);
		n = i + 1;
		frame = py_u64(frame + py->off[FR_PYOFF_FRAME_PREVIOUS]);
	}
	b->tail.eval[0] = py->eval[0];
	b->tail.eval[1] = py->eval[1];
	b->tail.eval[2] = py->eval[2];
	b->tail.eval[3] = py->eval[3];
	b->tail.pn = n;
	b->tail.pad = 0;
	return (int)n;
}

#endif /* FR_PYTHON_BPF_H */
