/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_bufcheck: every rule a struct npu_mem_buffer (the answer of ALLOC
 * and QUERY) must follow, as a checker that never asserts and costs
 * nothing when the answer is right.  Loops of thousands of calls
 * (kernel/alloc_race) count what they see and report once; the fuzzer
 * (tests/fuzz/, a plain C program that links nothing from tests/common/)
 * includes it too, so it is header only.
 *
 * A wrong answer is rarely wrong in one field only: a description read from
 * a freed buffer has size 0, no pages and offset 0 all at once.  So the
 * checker returns the set of rules broken (a bitmask of NM_DESC_*) and one
 * message listing them, letting a caller count each rule separately.
 */
#ifndef NMTEST_BUFCHECK_H
#define NMTEST_BUFCHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/npu_mem.h>

/* Flags of ABI 1.0 headers that predate them (the values are ABI). */
#ifndef NPU_MEM_BUF_BOUNCED
#define NPU_MEM_BUF_BOUNCED		(1U << 3)
#endif
#ifndef NPU_MEM_BUF_DEV_UNMAPPED
#define NPU_MEM_BUF_DEV_UNMAPPED	(1U << 4)
#endif
#ifndef NPU_MEM_DEV_REMOVED
#define NPU_MEM_DEV_REMOVED		(1U << 3)
#endif
#ifndef NPU_MEM_BUF_HOST
#define NPU_MEM_BUF_HOST		(1U << 5)
#endif
#ifndef NPU_MEM_BUF_IMPORTED
#define NPU_MEM_BUF_IMPORTED		(1U << 6)
#endif
#ifndef NPU_MEM_BUF_FOREIGN
#define NPU_MEM_BUF_FOREIGN		(1U << 7)
#endif

#define NM_DESC_KNOWN_FLAGS						\
	(NPU_MEM_BUF_READONLY | NPU_MEM_BUF_DEV_CONTIG |			\
	 NPU_MEM_BUF_DEV_HIDDEN | NPU_MEM_BUF_BOUNCED | NPU_MEM_BUF_DEV_UNMAPPED | \
	 NPU_MEM_BUF_HOST | NPU_MEM_BUF_IMPORTED | NPU_MEM_BUF_FOREIGN)

/* The rules, one bit each in nm_desc_check()'s answer. */
enum nm_desc_rule {
	NM_DESC_SIZE,	/* size: the request rounded up to its policy's page */
	NM_DESC_POLICY,	/* policy: the one asked for (and a known one) */
	NM_DESC_PAGES,	/* huge/normal/giant counts make up exactly size */
	NM_DESC_FLAGS,	/* known bits; READONLY as asked; HIDDEN per opener */
	NM_DESC_OFFSET,	/* mmap_offset: non-zero, page aligned, fits off_t */
	NM_DESC_DEV,	/* dev_addr, dev_segments, DEV_CONTIG (or hidden) */
	NM_DESC_NRULES
};

static const char *const nm_desc_rule_names[NM_DESC_NRULES] = {
	"size", "policy", "page counts", "flags", "mmap_offset",
	"device address",
};

/* What the answer must match. */
struct nm_desc_expect {
	/* false: QUERY of a buffer whose request is unknown; the answer is then
	 * checked against itself (its own policy, READONLY taken as given) */
	bool req_known;
	uint64_t req;		/* ALLOC's size */
	uint32_t policy;	/* ALLOC's policy */
	uint32_t alloc_flags;	/* ALLOC's flags */
	/* the device layout is withheld: no IOMMU and the file was opened
	 * without CAP_SYS_ADMIN (see "What a caller sees") */
	bool hidden;
};

/* The page a policy rounds to (0 for an unknown policy). */
static inline uint64_t nm_desc_unit(uint32_t policy)
{
	switch (policy) {
	case NPU_MEM_POLICY_HUGE_FIRST:
	case NPU_MEM_POLICY_NORMAL_ONLY:
		return 4096;
	case NPU_MEM_POLICY_HUGE_ONLY:
		return 2ULL << 20;
	case NPU_MEM_POLICY_HUGE1G_ONLY:
		return 1ULL << 30;
	}
	return 0;
}

static inline void nm_desc_say(char *msg, size_t len, size_t *at,
			       const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!msg || *at >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at += (size_t)n;
}

static inline unsigned int nm_desc_rules(const struct npu_mem_buffer *b,
					 const struct nm_desc_expect *e,
					 char *msg, size_t len)
{
	uint32_t policy = e->req_known ? e->policy : b->policy;
	uint64_t unit = nm_desc_unit(policy), want;
	uint64_t chunks = (uint64_t)b->huge_pages + b->normal_pages +
			  b->giant_pages;
	uint64_t bytes = (uint64_t)b->huge_pages * (2ULL << 20) +
			 (uint64_t)b->normal_pages * 4096 +
			 (uint64_t)b->giant_pages * (1ULL << 30);
	unsigned int bad = 0;
	size_t at = 0;
	bool pages_ok;
	/* another driver's dma-buf (DMABUF_IMPORT): its pages are not ours */
	bool foreign = b->flags & NPU_MEM_BUF_FOREIGN;

	if (msg && len)
		msg[0] = 0;
	nm_desc_say(msg, len, &at, "{size %#llx off %#llx dev %#llx huge %u "
		    "normal %u giant %u policy %u flags %#x segs %u}:",
		    (unsigned long long)b->size,
		    (unsigned long long)b->mmap_offset,
		    (unsigned long long)b->dev_addr, b->huge_pages,
		    b->normal_pages, b->giant_pages, b->policy, b->flags,
		    b->dev_segments);

	if (b->policy != policy || !unit) {
		bad |= 1U << NM_DESC_POLICY;
		nm_desc_say(msg, len, &at, " policy %u, asked %u;", b->policy,
			    policy);
	}
	/* unit 0 (unknown policy): the size cannot be judged, only non-zero */
	want = e->req_known ? (unit ? (e->req + unit - 1) / unit * unit : 0) :
	       (unit ? b->size / unit * unit : b->size);
	if (!b->size || b->size != want) {
		bad |= 1U << NM_DESC_SIZE;
		nm_desc_say(msg, len, &at, " size %#llx, want %#llx;",
			    (unsigned long long)b->size,
			    (unsigned long long)want);
	}
	switch (policy) {
	case NPU_MEM_POLICY_NORMAL_ONLY:
		pages_ok = !b->huge_pages && !b->giant_pages;
		break;
	case NPU_MEM_POLICY_HUGE_ONLY:
		pages_ok = !b->normal_pages && !b->giant_pages;
		break;
	case NPU_MEM_POLICY_HUGE_FIRST:
		pages_ok = !b->giant_pages;
		break;
	case NPU_MEM_POLICY_HUGE1G_ONLY:
		pages_ok = !b->huge_pages && !b->normal_pages;
		break;
	default:
		pages_ok = true;
	}
	if (foreign && chunks) {
		bad |= 1U << NM_DESC_PAGES;
		nm_desc_say(msg, len, &at, " FOREIGN with pages of its own;");
	} else if (!foreign && (!pages_ok || bytes != b->size || !chunks)) {
		bad |= 1U << NM_DESC_PAGES;
		nm_desc_say(msg, len, &at, " pages make %#llx bytes%s;",
			    (unsigned long long)bytes,
			    pages_ok ? "" : ", of a kind the policy excludes");
	}

	if (b->flags & ~NM_DESC_KNOWN_FLAGS) {
		bad |= 1U << NM_DESC_FLAGS;
		nm_desc_say(msg, len, &at, " unknown flags %#x;",
			    b->flags & ~NM_DESC_KNOWN_FLAGS);
	}
	if (e->req_known && !!(b->flags & NPU_MEM_BUF_READONLY) !=
	    !!(e->alloc_flags & NPU_MEM_ALLOC_READONLY)) {
		bad |= 1U << NM_DESC_FLAGS;
		nm_desc_say(msg, len, &at, " READONLY %s, asked %s;",
			    b->flags & NPU_MEM_BUF_READONLY ? "set" : "clear",
			    e->alloc_flags & NPU_MEM_ALLOC_READONLY ? "set" :
								      "clear");
	}
	/* The device is never removed under these tests. */
	if (b->flags & NPU_MEM_BUF_DEV_UNMAPPED) {
		bad |= 1U << NM_DESC_FLAGS;
		nm_desc_say(msg, len, &at, " DEV_UNMAPPED, device present;");
	}
	if (!!(b->flags & NPU_MEM_BUF_DEV_HIDDEN) != e->hidden) {
		bad |= 1U << NM_DESC_FLAGS;
		nm_desc_say(msg, len, &at, " DEV_HIDDEN %s, want %s;",
			    b->flags & NPU_MEM_BUF_DEV_HIDDEN ? "set" : "clear",
			    e->hidden ? "set" : "clear");
	}

	/* registered host memory is not mapped through the file: offset 0 */
	if ((b->flags & NPU_MEM_BUF_HOST) ? b->mmap_offset != 0 :
	    !b->mmap_offset || (b->mmap_offset & 4095) ||
	    b->mmap_offset > (uint64_t)INT64_MAX - b->size) {
		bad |= 1U << NM_DESC_OFFSET;
		nm_desc_say(msg, len, &at, " mmap_offset %#llx;",
			    (unsigned long long)b->mmap_offset);
	}

	if (b->flags & NPU_MEM_BUF_DEV_HIDDEN) {
		/* Withheld: address, segments and contiguity alike. */
		if (b->dev_addr || b->dev_segments ||
		    (b->flags & NPU_MEM_BUF_DEV_CONTIG)) {
			bad |= 1U << NM_DESC_DEV;
			nm_desc_say(msg, len, &at, " DEV_HIDDEN with dev_addr "
				    "%#llx, %u segments%s;",
				    (unsigned long long)b->dev_addr,
				    b->dev_segments,
				    b->flags & NPU_MEM_BUF_DEV_CONTIG ?
				    ", DEV_CONTIG" : "");
		}
	} else {
		if (!b->dev_addr || (b->dev_addr & 4095)) {
			bad |= 1U << NM_DESC_DEV;
			nm_desc_say(msg, len, &at, " dev_addr %#llx;",
				    (unsigned long long)b->dev_addr);
		}
		if (!b->dev_segments || (!foreign && b->dev_segments > chunks) ||
		    !!(b->flags & NPU_MEM_BUF_DEV_CONTIG) !=
		    (b->dev_segments == 1)) {
			bad |= 1U << NM_DESC_DEV;
			nm_desc_say(msg, len, &at, " %u segments for %llu "
				    "pieces, DEV_CONTIG %s;", b->dev_segments,
				    (unsigned long long)chunks,
				    (b->flags & NPU_MEM_BUF_DEV_CONTIG) ?
				    "set" : "clear");
		}
	}
	return bad;
}

/*
 * Check b against every rule of the UAPI header; returns the broken rules
 * (1U << NM_DESC_*), 0 when it is right.  msg (may be NULL) gets the
 * answer and what is wrong with it.  Formatting costs more than checking,
 * and loops that race the driver want their calls close together: the
 * message is only written for a wrong answer.
 */
static inline unsigned int nm_desc_check(const struct npu_mem_buffer *b,
					 const struct nm_desc_expect *e,
					 char *msg, size_t len)
{
	unsigned int bad = nm_desc_rules(b, e, NULL, 0);

	if (msg && len)
		msg[0] = 0;
	if (bad && msg)
		nm_desc_rules(b, e, msg, len);
	return bad;
}

/* Whether the calling thread has CAP_SYS_ADMIN in its effective set: what
 * an open() now would record as the opener's right to see device addresses. */
static inline bool nm_desc_cap_sys_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32));
}

#endif /* NMTEST_BUFCHECK_H */
