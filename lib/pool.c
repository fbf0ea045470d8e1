// SPDX-License-Identifier: MIT
/*
 * Caching allocator.  Each size class keeps a LIFO of its buffers (the most
 * recently freed is the warmest in the caches and TLB); all kept buffers are
 * also on one LRU list so the cap evicts the coldest first.  Classes are
 * found through a small hash table and freed when they empty, so memory
 * held by the bookkeeping follows what is kept; the last one to empty is
 * kept as a spare, because an alloc/free loop of one size empties and
 * refills its class every cycle.
 *
 * Buffers are released outside the pool lock: munmap() and the FREE ioctl
 * are slow, and the pool must not serialise every thread behind them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "log.h"
#include "pool.h"

struct aclmem_pool_class {
	struct aclmem_pool_class *next;	/* hash chain */
	size_t size;
	uint32_t kpolicy;
	uint32_t kflags;
	int32_t device;
	uint8_t kind;
	struct aclmem_buf *head;	/* LIFO, through cls_next/cls_prev */
};

size_t aclmem_pool_parse_cap(const char *s, size_t dflt)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!s || !*s)
		return dflt;
	if (!strcmp(s, "off") || !strcmp(s, "no"))
		return 0;
	if (*s < '0' || *s > '9')
		return dflt;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return dflt;
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		end++;
		break;
	case 'm': case 'M':
		shift = 20;
		end++;
		break;
	case 'g': case 'G':
		shift = 30;
		end++;
		break;
	}
	if (*end == 'i' || *end == 'B')	/* "MiB", "MB" */
		end++;
	if (*end == 'B')
		end++;
	if (*end)
		return dflt;
	if (shift && v > (SIZE_MAX >> shift))
		return SIZE_MAX;
	return (size_t)(v << shift);
}

void aclmem_pool_init(struct aclmem_pool *p, size_t cap,
		      void (*release)(struct aclmem_buf *buf))
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->cap = cap;
	p->release = release;
}

static unsigned int bucket_of(uint8_t kind, uint32_t kpolicy, uint32_t kflags,
			      int32_t device, size_t size)
{
	uint64_t h = (uint64_t)size ^ ((uint64_t)kpolicy << 56) ^
		     ((uint64_t)kflags << 52) ^ ((uint64_t)kind << 48) ^
		     ((uint64_t)(uint32_t)device << 40);

	/* Sizes are page multiples: mix the high bits down (Fibonacci hash). */
	h *= 0x9e3779b97f4a7c15ull;
	return (unsigned int)(h >> 56) % ACLMEM_POOL_BUCKETS;
}

static struct aclmem_pool_class **class_slot(struct aclmem_pool *p,
					     uint8_t kind, uint32_t kpolicy,
					     uint32_t kflags, int32_t device,
					     size_t size)
{
	struct aclmem_pool_class **pc;

	pc = &p->buckets[bucket_of(kind, kpolicy, kflags, device, size)];
	for (; *pc; pc = &(*pc)->next) {
		struct aclmem_pool_class *c = *pc;

		if (c->size == size && c->kpolicy == kpolicy &&
		    c->kflags == kflags && c->kind == kind &&
		    c->device == device)
			break;
	}
	return pc;
}

static void lru_unlink(struct aclmem_pool *p, struct aclmem_buf *b)
{
	if (b->lru_prev)
		b->lru_prev->lru_next = b->lru_next;
	else
		p->lru_head = b->lru_next;
	if (b->lru_next)
		b->lru_next->lru_prev = b->lru_prev;
	else
		p->lru_tail = b->lru_prev;
	b->lru_prev = b->lru_next = NULL;
}

/* Take b out of its class and of the LRU; the class goes when empty. */
static void unlink_buf(struct aclmem_pool *p, struct aclmem_buf *b)
{
	struct aclmem_pool_class **pc, *c;

	pc = class_slot(p, b->kind, b->kpolicy, b->kflags, b->device,
			b->pool_class);
	c = *pc;
	if (b->cls_prev)
		b->cls_prev->cls_next = b->cls_next;
	else
		c->head = b->cls_next;
	if (b->cls_next)
		b->cls_next->cls_prev = b->cls_prev;
	b->cls_prev = b->cls_next = NULL;
	if (!c->head) {
		*pc = c->next;
		free(p->spare);
		p->spare = c;
	}
	lru_unlink(p, b);
	p->bytes -= b->map_len;
	p->dev_bytes[b->device] -= b->map_len;
	p->count--;
}

struct aclmem_buf *aclmem_pool_get(struct aclmem_pool *p, uint8_t kind,
				   uint32_t kpolicy, uint32_t kflags,
				   int32_t device, size_t size_class)
{
	struct aclmem_pool_class *c;
	struct aclmem_buf *b = NULL;

	if (!p->cap || !size_class)
		return NULL;
	pthread_mutex_lock(&p->lock);
	c = *class_slot(p, kind, kpolicy, kflags, device, size_class);
	if (c) {
		b = c->head;
		unlink_buf(p, b);
		p->stats.hits++;
	} else {
		p->stats.misses++;
	}
	pthread_mutex_unlock(&p->lock);
	return b;
}

/* Unlink the coldest buffers until bytes <= keep; returns them as a list. */
static struct aclmem_buf *evict(struct aclmem_pool *p, size_t keep)
{
	struct aclmem_buf *list = NULL, *b;

	while (p->bytes > keep && (b = p->lru_tail)) {
		unlink_buf(p, b);
		p->stats.evictions++;
		b->lru_next = list;
		list = b;
	}
	return list;
}

static size_t release_list(struct aclmem_pool *p, struct aclmem_buf *list)
{
	size_t bytes = 0;

	while (list) {
		struct aclmem_buf *next = list->lru_next;

		bytes += list->map_len;
		list->lru_next = NULL;
		p->release(list);
		list = next;
	}
	return bytes;
}

bool aclmem_pool_put(struct aclmem_pool *p, struct aclmem_buf *b)
{
	struct aclmem_pool_class **pc, *c;
	struct aclmem_buf *victims;

	if (!p->cap || !b->pool_class || b->map_len > p->cap ||
	    b->device < 0 || b->device >= ACLMEM_DEVICES_MAX)
		return false;
	pthread_mutex_lock(&p->lock);
	pc = class_slot(p, b->kind, b->kpolicy, b->kflags, b->device,
			b->pool_class);
	c = *pc;
	if (!c) {
		c = p->spare ? p->spare : malloc(sizeof(*c));
		if (!c) {
			pthread_mutex_unlock(&p->lock);
			return false;
		}
		p->spare = NULL;
		c->next = NULL;
		c->head = NULL;
		c->size = b->pool_class;
		c->kpolicy = b->kpolicy;
		c->kflags = b->kflags;
		c->device = b->device;
		c->kind = b->kind;
		*pc = c;
	}
	b->cls_prev = NULL;
	b->cls_next = c->head;
	if (c->head)
		c->head->cls_prev = b;
	c->head = b;
	b->lru_prev = NULL;
	b->lru_next = p->lru_head;
	if (p->lru_head)
		p->lru_head->lru_prev = b;
	else
		p->lru_tail = b;
	p->lru_head = b;
	p->bytes += b->map_len;
	p->dev_bytes[b->device] += b->map_len;
	p->count++;
	p->stats.puts++;
	victims = evict(p, p->cap);
	pthread_mutex_unlock(&p->lock);
	release_list(p, victims);
	return true;
}

size_t aclmem_pool_trim(struct aclmem_pool *p, size_t keep)
{
	struct aclmem_buf *victims;

	pthread_mutex_lock(&p->lock);
	victims = evict(p, keep);
	pthread_mutex_unlock(&p->lock);
	return release_list(p, victims);
}

void aclmem_pool_forget(struct aclmem_pool *p)
{
	struct aclmem_buf *b;
	unsigned int i;

	/* Single-threaded child: the lock may be a copy of a held one. */
	pthread_mutex_init(&p->lock, NULL);
	while ((b = p->lru_head)) {
		p->lru_head = b->lru_next;
		free(b);
	}
	for (i = 0; i < ACLMEM_POOL_BUCKETS; i++) {
		while (p->buckets[i]) {
			struct aclmem_pool_class *c = p->buckets[i];

			p->buckets[i] = c->next;
			free(c);
		}
	}
	free(p->spare);
	p->spare = NULL;
	p->lru_tail = NULL;
	p->bytes = 0;
	memset(p->dev_bytes, 0, sizeof(p->dev_bytes));
	p->count = 0;
}

static struct aclmem_pool global_pool;
static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void)
{
	size_t cap = aclmem_pool_parse_cap(getenv("NPU_MEM_POOL_MAX"),
					   ACLMEM_POOL_DEFAULT_CAP);

	aclmem_pool_init(&global_pool, cap, aclmem_buf_release);
	aclmem_dbg("pool cap %zu bytes", cap);
}

struct aclmem_pool *aclmem_pool_global(void)
{
	pthread_once(&global_once, global_init);
	return &global_pool;
}

/* With no context left, the cached buffers go back to the driver. */
static void global_idle(bool finalize)
{
	(void)finalize;
	aclmem_pool_trim(aclmem_pool_global(), 0);
}

static void global_fork_prepare(void)
{
	pthread_mutex_lock(&aclmem_pool_global()->lock);
}

static void global_fork_parent(void)
{
	pthread_mutex_unlock(&global_pool.lock);
}

/* The buffer table forgot the parked buffers' entries first (ranks). */
static void global_fork_child(void)
{
	aclmem_pool_forget(&global_pool);
}

ACLMEM_PART(.rank = ACLMEM_RANK_POOL,
	    .idle = global_idle,
	    .fork_prepare = global_fork_prepare,
	    .fork_parent = global_fork_parent,
	    .fork_child = global_fork_child)
