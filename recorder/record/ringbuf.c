// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringbuf.c - BPF ring buffer consumer. See ringbuf.h.
 *
 * Layout (kernel/bpf/ringbuf.c, uapi): page 0 holds consumer_pos and is
 * mapped writable; page 1 holds producer_pos; the data area follows and is
 * mapped twice back to back so that a record never wraps. Each record has
 * an 8-byte header: u32 len with BUSY and DISCARD bits, u32 page offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "ringbuf.h"

struct ringbuf {
	int fd;
	size_t mask;
	size_t page;
	unsigned long *consumer;
	unsigned long *producer;
	uint8_t *data;
};

/*
 * ringbuf__new() - map the ring buffer map @map_fd for consumption.
 * Returns NULL and sets errno.
 */
struct ringbuf *ringbuf__new(int map_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct ringbuf *rb;
	void *p;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return NULL;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1))) {
		errno = EINVAL;
		return NULL;
	}
	rb = calloc(1, sizeof(*rb));
	if (!rb)
		return NULL;
	rb->fd = map_fd;
	rb->page = sysconf(_SC_PAGESIZE);
	rb->mask = info.max_entries - 1;
	p = mmap(NULL, rb->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto err_free;
	rb->consumer = p;
	p = mmap(NULL, rb->page + 2 * (size_t)info.max_entries, PROT_READ,
		 MAP_SHARED, map_fd, rb->page);
	if (p == MAP_FAILED)
		goto err_unmap;
	rb->producer = p;
	rb->data = (uint8_t *)p + rb->page;
	return rb;

err_unmap:
	munmap(rb->consumer, rb->page);
err_free:
	free(rb);
	return NULL;
}

void ringbuf__free(struct ringbuf *rb)
{
	if (!rb)
		return;
	munmap(rb->producer, rb->page + 2 * (rb->mask + 1));
	munmap(rb->consumer, rb->page);
	free(rb);
}

int ringbuf__fd(const struct ringbuf *rb)
{
	return rb->fd;
}

size_t ringbuf__size(const struct ringbuf *rb)
{
	return rb->mask + 1;
}

/* ringbuf__pending() - bytes produced and not yet consumed. */
uint64_t ringbuf__pending(const struct ringbuf *rb)
{
	unsigned long prod = __atomic_load_n(rb->producer, __ATOMIC_ACQUIRE);
	unsigned long cons = __atomic_load_n(rb->consumer, __ATOMIC_ACQUIRE);

	return prod - cons;
}

/*
 * ringbuf__consume() - hand the records committed when the call began to
 * @fn, in ring order, up to the producer position read then, or to a
 * record still being written. *@busy tells which (true: stopped at an
 * uncommitted record). Bounded by what was there at the start: producers
 * faster than @fn cannot keep the caller here, away from its other work
 * (its control socket). Returns the number of records, or the first
 * negative value @fn returned (that record counts as consumed).
 */
int ringbuf__consume(struct ringbuf *rb, fr_record_fn fn, void *ctx, bool *busy)
{
	unsigned long cons = __atomic_load_n(rb->consumer, __ATOMIC_ACQUIRE);
	unsigned long prod = __atomic_load_n(rb->producer, __ATOMIC_ACQUIRE);
	int n = 0, err = 0;

	*busy = false;
	while (cons < prod) {
		uint32_t *hdr = (uint32_t *)(rb->data + (cons & rb->mask));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		uint32_t size;

		if (len & BPF_RINGBUF_BUSY_BIT) {
			*busy = true;
			goto out;
		}
		size = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		cons += (BPF_RINGBUF_HDR_SZ + size + 7) & ~7UL;
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			n++;
			err = fn(ctx, (uint8_t *)hdr + BPF_RINGBUF_HDR_SZ, size);
		}
		__atomic_store_n(rb->consumer, cons, __ATOMIC_RELEASE);
		if (err < 0)
			return err;
	}
out:
	return n;
}
