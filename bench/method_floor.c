// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floors: clearing pages is the part of handing out fresh memory that
 * nobody can avoid, so two rows clear memory that is already mapped and
 * touched (alloc.c's floor_buf, made before each size).  One uses glibc's
 * memset, the other the guest kernel's own clear_page() instructions: under
 * emulation the two differ much more than on hardware.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The clear_page() variant in use, for the tables and meta.txt. */
const char *kclear_name = "memset";

/*
 * The x86 kernel's clear_page() variants (arch/x86/lib/clear_page_64.S),
 * one 4 KiB page per call as the kernel does; chosen like the kernel's
 * alternatives: ERMS, else REP_GOOD, else the unrolled loop.
 */
#if defined(__x86_64__)
static void kclear_orig(void *page)
{
	__asm__ __volatile__(
		"xorl %%eax, %%eax\n\t"
		"movl $64, %%ecx\n"
		"1:\n\t"
		"decl %%ecx\n\t"
		"movq %%rax, (%0)\n\t"
		"movq %%rax, 8(%0)\n\t"
		"movq %%rax, 16(%0)\n\t"
		"movq %%rax, 24(%0)\n\t"
		"movq %%rax, 32(%0)\n\t"
		"movq %%rax, 40(%0)\n\t"
		"movq %%rax, 48(%0)\n\t"
		"movq %%rax, 56(%0)\n\t"
		"leaq 64(%0), %0\n\t"
		"jnz 1b\n\t"
		: "+r"(page) : : "rax", "rcx", "cc", "memory");
}

static void kclear_rep(void *page)
{
	__asm__ __volatile__(
		"xorl %%eax, %%eax\n\t"
		"movl $512, %%ecx\n\t"
		"rep stosq\n\t"
		: "+D"(page) : : "rax", "rcx", "cc", "memory");
}

static void kclear_erms(void *page)
{
	__asm__ __volatile__(
		"xorl %%eax, %%eax\n\t"
		"movl $4096, %%ecx\n\t"
		"rep stosb\n\t"
		: "+D"(page) : : "rax", "rcx", "cc", "memory");
}
#else
static void kclear_orig(void *page)
{
	memset(page, 0, PAGE);
}
#define kclear_rep kclear_orig
#define kclear_erms kclear_orig
#endif

static void (*kclear_page)(void *page) = kclear_orig;

void pick_kclear(void)
{
#if defined(__x86_64__)
	char *text = nm_read_file("/proc/cpuinfo"), *flags, line[4096];

	kclear_name = "clear_page_orig";
	flags = text ? strstr(text, "\nflags") : NULL;
	if (flags) {
		/* The line with a space after its last flag: " name " matches. */
		snprintf(line, sizeof(line), "%.*s ",
			 (int)strcspn(flags + 1, "\n"), flags + 1);
		if (strstr(line, " erms ")) {
			kclear_page = kclear_erms;
			kclear_name = "clear_page_erms";
		} else if (strstr(line, " rep_good ")) {
			kclear_page = kclear_rep;
			kclear_name = "clear_page_rep";
		}
	}
	free(text);
#endif
}
/* The floor: memset(0) over memory already mapped and touched. */
static int floor_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t t0 = now_ns();

	(void)m;
	memset(floor_buf, 0, size);
	__asm__ __volatile__("" : : "r"(floor_buf) : "memory");
	s->get = now_ns() - t0;
	s->rel = 0;
	return 0;
}

/* The same bytes cleared with the guest kernel's clear_page(), page by page. */
static int kclear_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t t0 = now_ns(), off;

	(void)m;
	for (off = 0; off < size; off += PAGE)
		kclear_page((char *)floor_buf + off);
	s->get = now_ns() - t0;
	s->rel = 0;
	return 0;
}

/* Its label names the variant, which is known only at run time. */
static char kclear_label[64];

static int kclear_setup(struct method *m)
{
	(void)m;
	snprintf(kclear_label, sizeof(kclear_label), "floor: %s", kclear_name);
	return 0;
}

struct method method_floor = {
	.key = "floor",
	.label = "floor: memset(0), mapped mem",
	.once = floor_once,
};

struct method method_kclear = {
	.key = "floor_kclear",
	.label = kclear_label,
	.setup = kclear_setup,
	.once = kclear_once,
};
