// SPDX-License-Identifier: MIT
/*
 * Virtual memory: aclrtReserveMemAddress/aclrtReleaseMemAddress,
 * aclrtMallocPhysical/aclrtFreePhysical, aclrtMapMem/aclrtUnmapMem,
 * access flags, and sharing physical handles between processes.
 *
 * A reservation is one anonymous PROT_NONE, MAP_NORESERVE mapping: address
 * space, no memory.  A physical handle (aclrtDrvMemHandle) points to a
 * struct phys naming one npu-mem buffer of this process's device file.
 * aclrtMapMem maps the buffer (from a granularity-aligned offset) over part
 * of a reservation with MAP_FIXED; aclrtUnmapMem puts PROT_NONE anonymous
 * memory back in its place, so the range stays reserved.  Access flags are
 * mprotect() of the piece: the CPU's view is the only one the library has,
 * and it is also what stands for the device in aclrtMemcpy and friends.
 * A change of several pieces is all or nothing: one whose mprotect fails
 * puts those changed before it back.
 *
 * Handles live in a duplicate of the device file descriptor (the same open
 * file, so the same driver client): aclFinalize closes the library's own
 * descriptor, but handles and pieces belong to the program until it frees
 * them, as CANN's do.
 *
 * Granularity (aclrtMemGetAllocationGranularity, memory.c) is the page:
 * 4 KiB for normal memory, 2 MiB for huge pages, 1 GiB for HUGE1G.  Sizes
 * of physical allocations are rounded up to it; mapped sizes, offsets and
 * addresses must be multiples of it.  Reservations are aligned to 2 MiB,
 * or 1 GiB from 1 GiB of size on, or the alignment asked if larger, so
 * that any kind of handle can be mapped at their start.
 *
 * Shareable handles are the driver's IPC keys.  The 64-bit handles of
 * aclrtMemExportToShareableHandle (and V2's DEFAULT type) are
 * NPU_MEM_IPC_KEY64 keys, which admit only the pids given to
 * aclrtMemSetPidToShareableHandle, or, with pid validation disabled
 * (NPU_MEM_IPC_ANY_PID), any process of the exporter's user, as CANN's
 * DISABLE_PID_VALIDATION asks; the UAPI header says why 64 random bits
 * suffice for that.  V2's FABRIC type holds the driver's full 128-bit key
 * (in data[0..15], the rest zero), with the same two choices.  A module
 * older than that rule refuses KEY64 | ANY_PID (-EINVAL): then disabling
 * the validation of a 64-bit handle is ACL_ERROR_RT_FEATURE_NOT_SUPPORT.
 *
 * Pieces are device memory for memcpy, memset, attributes and the like:
 * memory.c's lookups ask here (aclmem_mem_ext) for addresses outside its
 * own buffers.  One read-write lock covers every table; those lookups
 * share it.  It is taken after memory.c's table lock is released,
 * never while holding it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acl/acl_rt.h"
#include "aclmem/aclmem.h"
#include "addrtree.h"
#include "args.h"
#include "context.h"
#include "device.h"
#include "log.h"
#include "memory.h"

#define SZ_4K	((size_t)4096)
#define SZ_2M	((size_t)2 << 20)
#define SZ_1G	((size_t)1 << 30)
#define MAX_ALIGN	((size_t)1 << 40)

struct phys {
	struct addrtree_node node;	/* key: the handle's own address */
	struct phys *next;		/* every phys, for key searches */
	uint32_t handle;		/* in vfd */
	uint32_t page_size;
	uint64_t mmap_offset;
	size_t size;			/* usable: rounded to the granularity */
	size_t gran;
	aclrtPhysicalMemProp prop;
	int32_t mem_device;		/* whose memory: ALLOC's, an exporter's */
	unsigned int refs;		/* aclrtMallocPhysical/Retain - Free */
	unsigned int maps;		/* pieces mapping it */
	bool imported;
	bool exported;
	uint64_t key[2];		/* the export's key */
};

struct resv {
	struct addrtree_node node;	/* key: start */
	size_t size;
	struct addrtree pieces;		/* by start address */
};

struct piece {
	struct addrtree_node node;	/* key: start, in its resv's tree */
	size_t size;
	uint64_t offset;		/* into the handle's buffer */
	struct phys *phys;
	uint32_t access;		/* aclrtMemAccessFlags */
};

static pthread_rwlock_t vmm_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct addrtree resvs;
static struct addrtree handles;
static struct phys *phys_list;
static int vfd = -1;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

#define to_phys(n)  ((struct phys *)((char *)(n) - offsetof(struct phys, node)))
#define to_resv(n)  ((struct resv *)((char *)(n) - offsetof(struct resv, node)))
#define to_piece(n) ((struct piece *)((char *)(n) - offsetof(struct piece, node)))

static void atfork_prepare(void)
{
	pthread_rwlock_wrlock(&vmm_lock);
}

static void atfork_parent(void)
{
	pthread_rwlock_unlock(&vmm_lock);
}

/*
 * The child keeps the reservations (anonymous memory is inherited), but
 * not the pieces (the driver's mappings are VM_DONTCOPY: they are holes
 * in the child's copy) nor the handles, which are the parent's file's.
 */
static void atfork_child(void)
{
	struct addrtree_node *n, *pn;
	struct addrtree keep;
	struct phys *p;

	pthread_rwlock_init(&vmm_lock, NULL);
	addrtree_init(&keep);
	while ((n = addrtree_pop(&resvs))) {
		struct resv *r = to_resv(n);

		while ((pn = addrtree_pop(&r->pieces)))
			free(to_piece(pn));
		addrtree_insert(&keep, n);
	}
	resvs = keep;
	while ((p = phys_list)) {
		phys_list = p->next;
		free(p);
	}
	addrtree_init(&handles);
	if (vfd >= 0)
		close(vfd);
	vfd = -1;
}

static void atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* The file handles are made in; under the write lock.  ACL code. */
static int vfd_get(void)
{
	int fd;

	if (vfd >= 0)
		return ACL_SUCCESS;
	fd = fcntl(aclmem_ctx_fd(), F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return aclmem_fail(aclmem_open_errno_to_acl(errno),
				   "duplicating the device file: %s",
				   strerror(errno));
	vfd = fd;
	return ACL_SUCCESS;
}

/* A live handle (aclrtFreePhysical not called as often as made). */
static struct phys *phys_find(aclrtDrvMemHandle h)
{
	struct addrtree_node *n = addrtree_find(&handles, (uintptr_t)h);

	return n && to_phys(n)->refs ? to_phys(n) : NULL;
}

/* The failure of a call whose handle is not a live one. */
static int not_phys(const char *fn, aclrtDrvMemHandle h)
{
	return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
			   "%s(%p): not a live physical handle", fn, h);
}

static void phys_unlink(struct phys *p)
{
	struct phys **pp;

	addrtree_remove(&handles, p->node.key);
	for (pp = &phys_list; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
}

/*
 * Drop what the driver holds for a handle nobody uses any more (no
 * references, no pieces); under the write lock.
 */
static void phys_put(struct phys *p)
{
	int ret;

	if (p->refs || p->maps)
		return;
	phys_unlink(p);
	ret = aclmem_free(vfd, p->handle);
	if (ret)
		aclmem_warn("FREE of handle %u: %s", p->handle, strerror(-ret));
	free(p);
}

static int ipc_revoke(const uint64_t key[2])
{
	struct npu_mem_ipc_revoke r;

	memset(&r, 0, sizeof(r));
	r.key[0] = key[0];
	r.key[1] = key[1];
	return aclmem_do_ioctl(vfd, NPU_MEM_IOCTL_IPC_REVOKE, &r);
}

/* ---- reservations ---- */

static struct resv *resv_at(const void *p)
{
	struct addrtree_node *n = addrtree_find_le(&resvs, (uintptr_t)p);

	if (!n || (uintptr_t)p - n->key >= to_resv(n)->size)
		return NULL;
	return to_resv(n);
}

static struct piece *piece_at(struct resv *r, const void *p)
{
	struct addrtree_node *n = addrtree_find_le(&r->pieces, (uintptr_t)p);

	if (!n || (uintptr_t)p - n->key >= to_piece(n)->size)
		return NULL;
	return to_piece(n);
}

/* Under the lock: the piece that starts at p, and its reservation. */
static struct piece *piece_start(const void *p, struct resv **rp)
{
	struct resv *r = resv_at(p);
	struct addrtree_node *n;

	n = r ? addrtree_find(&r->pieces, (uintptr_t)p) : NULL;
	if (rp)
		*rp = r;
	return n ? to_piece(n) : NULL;
}

/* The failure of a call whose p is not the start of a mapped piece. */
static int not_piece(const char *fn, const void *p)
{
	return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
			   "%s(%p): not the start of a mapped piece", fn, p);
}

static bool pow2(size_t v)
{
	return v && !(v & (v - 1));
}

/*
 * aclrtReserveMemAddress's argument checks, in order: the length (whole
 * 4 KiB pages) and the alignment to reserve with, or an ACL code (logged).
 */
static int reserve_args(const char *fn, void **virPtr, size_t size,
			size_t alignment, void *expectPtr, uint64_t flags,
			size_t *len, size_t *align)
{
	if (!virPtr || !size)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !virPtr ? "virPtr is NULL" : "size is 0");
	/* CANN takes page types 0 (normal) and 1 (huge) here. */
	if (flags > HUGE_PAGE_TYPE)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: flags %llu (0 or 1)", fn,
				   (unsigned long long)flags);
	if (alignment && !pow2(alignment))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: alignment %zu is not a power of two",
				   fn, alignment);
	/* The over-reservation of reserve_aligned() grows with it. */
	if (alignment > MAX_ALIGN)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: alignment %zu is above 2^40 (1 TiB), "
				   "the largest supported", fn, alignment);
	if (size > ((size_t)1 << 46))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: size %zu too large", fn, size);
	*len = (size + SZ_4K - 1) & ~(SZ_4K - 1);
	*align = *len >= SZ_1G ? SZ_1G : SZ_2M;
	if (alignment > *align)
		*align = alignment;
	if (expectPtr && ((uintptr_t)expectPtr & (*align - 1)))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: expectPtr %p not aligned to %zu", fn,
				   expectPtr, *align);
	return ACL_SUCCESS;
}

/* Address space at exactly [expectPtr, +len): ACL code, logged. */
static int reserve_fixed(const char *fn, void *expectPtr, size_t len)
{
	void *m;
	int ret;

	m = mmap(expectPtr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED) {
		ret = errno;
		return aclmem_fail(ret == EEXIST ? ACL_ERROR_RT_PARAM_INVALID :
				   aclmem_mmap_errno_to_acl(ret),
				   "%s: [%p, +%zu) cannot be reserved: %s",
				   fn, expectPtr, len, strerror(ret));
	}
	/* Kernels (and tools) that ignore the flag take it as a hint. */
	if (m != expectPtr) {
		munmap(m, len);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: [%p, +%zu) is taken", fn,
				   expectPtr, len);
	}
	return ACL_SUCCESS;
}

/* len bytes of address space aligned to align, at *a: ACL code, logged. */
static int reserve_aligned(const char *fn, size_t len, size_t align,
			   uintptr_t *a)
{
	size_t span, head;
	void *m;
	int ret;

	/* Over-reserve, then trim to the alignment. */
	span = len + align - SZ_4K;
	m = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		ret = errno;
		return aclmem_fail(aclmem_mmap_errno_to_acl(ret),
				   "%s: %zu bytes of address space: %s",
				   fn, span, strerror(ret));
	}
	*a = ((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1);
	head = *a - (uintptr_t)m;
	if (head)
		munmap(m, head);
	if (span - head > len)
		munmap((void *)(*a + len), span - head - len);
	return ACL_SUCCESS;
}

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
				void *expectPtr, uint64_t flags)
{
	static const char fn[] = "aclrtReserveMemAddress";
	size_t align = 0, len = 0;
	struct resv *r;
	uintptr_t a;
	int ret;

	ret = reserve_args(fn, virPtr, size, alignment, expectPtr, flags,
			   &len, &align);
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	a = (uintptr_t)expectPtr;
	if (expectPtr)
		ret = reserve_fixed(fn, expectPtr, len);
	else
		ret = reserve_aligned(fn, len, align, &a);
	if (ret) {
		free(r);
		return ret;
	}
	r->node.key = a;
	r->size = len;
	addrtree_init(&r->pieces);
	pthread_once(&atfork_once, atfork_register);
	pthread_rwlock_wrlock(&vmm_lock);
	addrtree_insert(&resvs, &r->node);
	pthread_rwlock_unlock(&vmm_lock);
	*virPtr = (void *)a;
	return ACL_SUCCESS;
}

aclError aclrtReleaseMemAddress(void *virPtr)
{
	static const char fn[] = "aclrtReleaseMemAddress";
	struct addrtree_node *n;
	struct resv *r = NULL;
	int ret = ACL_SUCCESS;

	if (!virPtr)
		return aclmem_arg_null(fn, "virPtr");
	pthread_rwlock_wrlock(&vmm_lock);
	n = addrtree_find(&resvs, (uintptr_t)virPtr);
	if (!n)
		ret = ACL_ERROR_RT_PARAM_INVALID;
	else if (to_resv(n)->pieces.count)
		ret = ACL_ERROR_RT_PARAM_INVALID;
	else
		r = to_resv(addrtree_remove(&resvs, n->key));
	pthread_rwlock_unlock(&vmm_lock);
	if (ret)
		return aclmem_fail(ret, "%s(%p): %s", fn, virPtr,
				   n ? "pieces are still mapped in it (aclrtUnmapMem first)" :
				   "not the start of a reservation");
	if (munmap(virPtr, r->size))
		aclmem_warn("%s: munmap(%p): %s", fn, virPtr, strerror(errno));
	free(r);
	return ACL_SUCCESS;
}

/* ---- physical memory ---- */

/* The driver's policy for a granularity (see the file comment). */
static uint32_t gran_policy(size_t g)
{
	if (g == SZ_1G)
		return NPU_MEM_POLICY_HUGE1G_ONLY;
	/* Huge pages where there are, so that a busy machine still works. */
	if (g == SZ_2M)
		return NPU_MEM_POLICY_HUGE_FIRST;
	return NPU_MEM_POLICY_NORMAL_ONLY;
}

/* Make and record a phys for a driver buffer; under the write lock. */
static struct phys *phys_new(uint32_t handle, const struct npu_mem_buffer *kb,
			     size_t size, size_t gran,
			     const aclrtPhysicalMemProp *prop, bool imported)
{
	struct phys *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->handle = handle;
	p->page_size = aclmem_buffer_page_size(kb);
	p->mmap_offset = kb->mmap_offset;
	p->size = size;
	p->gran = gran;
	p->prop = *prop;
	p->mem_device = prop->location.type == ACL_MEM_LOCATION_TYPE_DEVICE ?
			(int32_t)prop->location.id : 0;
	p->refs = 1;
	p->imported = imported;
	p->node.key = (uintptr_t)p;
	addrtree_insert(&handles, &p->node);
	p->next = phys_list;
	phys_list = p;
	return p;
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
			     const aclrtPhysicalMemProp *prop, uint64_t flags)
{
	static const char fn[] = "aclrtMallocPhysical";
	aclrtPhysicalMemProp pr;
	struct npu_mem_buffer kb;
	struct phys *p;
	uint32_t h;
	size_t g;
	int ret;

	if (!handle || !prop || !size || flags)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !handle ? "handle is NULL" : !prop ?
				   "prop is NULL" : !size ? "size is 0" :
				   "flags must be 0");
	if (prop->handleType != ACL_MEM_HANDLE_TYPE_NONE ||
	    prop->allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: handleType %d, allocationType %d", fn,
				   (int)prop->handleType,
				   (int)prop->allocationType);
	pr = *prop;
	/* The attribute and location rules are the granularity's. */
	ret = aclrtMemGetAllocationGranularity(&pr,
			ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g);
	if (ret)
		return ret;
	if (size > SIZE_MAX - (g - 1) || size > NPU_MEM_MAX_ALLOC)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: size %zu too large", fn, size);
	size = (size + g - 1) & ~(g - 1);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	pthread_once(&atfork_once, atfork_register);
	pthread_rwlock_wrlock(&vmm_lock);
	ret = vfd_get();
	if (ret)
		goto out;
	/* Device memory from its device (and node); host memory from 0's. */
	ret = aclmem_dev_alloc(vfd, prop->location.type ==
			       ACL_MEM_LOCATION_TYPE_DEVICE ?
			       (int32_t)prop->location.id : 0,
			       size, gran_policy(g), 0, &h, &kb);
	if (ret) {
		ret = aclmem_fail(aclmem_ioctl_errno_to_acl(-ret),
				  "%s: ALLOC of %zu bytes: %s", fn, size,
				  strerror(-ret));
		goto out;
	}
	p = phys_new(h, &kb, size, g, prop, false);
	if (!p) {
		aclmem_free(vfd, h);
		ret = aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				  "%s: out of memory", fn);
		goto out;
	}
	*handle = p;
out:
	pthread_rwlock_unlock(&vmm_lock);
	return ret;
}

/*
 * CANN: freeing a handle whose memory is still mapped succeeds; the memory
 * goes when the last piece is unmapped.  The handle is dead at once (and
 * its shareable handle revoked) unless aclrtMemRetainAllocationHandle took
 * more references.
 */
aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
	static const char fn[] = "aclrtFreePhysical";
	struct phys *p;
	int ret;

	if (!handle)
		return aclmem_arg_null(fn, "handle");
	pthread_rwlock_wrlock(&vmm_lock);
	p = phys_find(handle);
	if (!p) {
		pthread_rwlock_unlock(&vmm_lock);
		return not_phys(fn, handle);
	}
	if (!--p->refs && p->exported) {
		ret = ipc_revoke(p->key);
		if (ret)
			aclmem_warn("%s: IPC_REVOKE: %s", fn, strerror(-ret));
		p->exported = false;
	}
	phys_put(p);
	pthread_rwlock_unlock(&vmm_lock);
	return ACL_SUCCESS;
}

aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle,
						   aclrtPhysicalMemProp *prop)
{
	static const char fn[] = "aclrtMemGetAllocationPropertiesFromHandle";
	struct phys *p;

	if (!handle || !prop)
		return aclmem_arg_null(fn, !handle ? "handle" : "prop");
	pthread_rwlock_rdlock(&vmm_lock);
	p = phys_find(handle);
	if (p)
		*prop = p->prop;
	pthread_rwlock_unlock(&vmm_lock);
	if (!p)
		return not_phys(fn, handle);
	return ACL_SUCCESS;
}

/* ---- mapping ---- */

/*
 * Under the write lock: the live handle and the reservation that
 * [a, a + size) from the handle's offset may be mapped at, checked in
 * CANN's order; else an ACL code and *why.
 */
static int map_target(aclrtDrvMemHandle handle, uintptr_t a, size_t size,
		      size_t offset, struct phys **pp, struct resv **rp,
		      const char **why)
{
	struct addrtree_node *n;
	struct phys *p;
	struct resv *r;

	p = phys_find(handle);
	if (!p) {
		*why = "not a live physical handle";
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	if ((size | offset | a) & (p->gran - 1)) {
		*why = "address, size or offset not a multiple of the handle's granularity";
		return ACL_ERROR_INVALID_PARAM;
	}
	if (offset > p->size || size > p->size - offset) {
		*why = "offset + size past the end of the physical memory";
		return ACL_ERROR_INVALID_PARAM;
	}
	r = resv_at((void *)a);
	if (!r || size > r->size - (a - r->node.key)) {
		*why = "not inside one reservation";
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	n = addrtree_find_le(&r->pieces, a + size - 1);
	if (n && n->key + to_piece(n)->size > a) {
		*why = "overlaps a piece already mapped";
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	*pp = p;
	*rp = r;
	return ACL_SUCCESS;
}

/*
 * Under the write lock: maps p's memory from offset at virPtr and records
 * the piece in r; else an ACL code and *why.
 */
static int map_piece(struct phys *p, struct resv *r, void *virPtr,
		     size_t size, size_t offset, const char **why)
{
	struct piece *pc;
	void *m;
	int ret;

	pc = calloc(1, sizeof(*pc));
	if (!pc) {
		*why = "out of memory";
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	m = mmap(virPtr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 vfd, (off_t)(p->mmap_offset + offset));
	if (m == MAP_FAILED) {
		ret = aclmem_mmap_errno_to_acl(errno);
		*why = strerror(errno);
		/* A failed MAP_FIXED may have unmapped the range: reserve it again. */
		mmap(virPtr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_NORESERVE | MAP_FIXED, -1, 0);
		free(pc);
		return ret;
	}
	pc->node.key = (uintptr_t)virPtr;
	pc->size = size;
	pc->offset = offset;
	pc->phys = p;
	pc->access = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
	addrtree_insert(&r->pieces, &pc->node);
	p->maps++;
	return ACL_SUCCESS;
}

aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
		     aclrtDrvMemHandle handle, uint64_t flags)
{
	static const char fn[] = "aclrtMapMem";
	const char *why = NULL;
	struct phys *p = NULL;
	struct resv *r = NULL;
	int ret;

	if (!virPtr || !handle || !size || flags)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !virPtr ? "virPtr is NULL" : !handle ?
				   "handle is NULL" : !size ? "size is 0" :
				   "flags must be 0");
	pthread_rwlock_wrlock(&vmm_lock);
	ret = map_target(handle, (uintptr_t)virPtr, size, offset, &p, &r,
			 &why);
	if (!ret)
		ret = map_piece(p, r, virPtr, size, offset, &why);
	pthread_rwlock_unlock(&vmm_lock);
	if (ret)
		return aclmem_fail(ret, "%s(%p, %zu, %zu, %p): %s", fn, virPtr,
				   size, offset, handle, why);
	return ACL_SUCCESS;
}

aclError aclrtUnmapMem(void *virPtr)
{
	static const char fn[] = "aclrtUnmapMem";
	struct piece *pc;
	struct resv *r;
	void *m;

	if (!virPtr)
		return aclmem_arg_null(fn, "virPtr");
	pthread_rwlock_wrlock(&vmm_lock);
	pc = piece_start(virPtr, &r);
	if (!pc) {
		pthread_rwlock_unlock(&vmm_lock);
		return not_piece(fn, virPtr);
	}
	/* The range stays reserved: anonymous PROT_NONE memory over it. */
	m = mmap(virPtr, pc->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE | MAP_FIXED, -1, 0);
	if (m == MAP_FAILED)
		aclmem_warn("%s: re-reserving [%p, +%zu): %s", fn, virPtr,
			    pc->size, strerror(errno));
	addrtree_remove(&r->pieces, pc->node.key);
	pc->phys->maps--;
	phys_put(pc->phys);
	pthread_rwlock_unlock(&vmm_lock);
	free(pc);
	return ACL_SUCCESS;
}

aclError aclrtMemRetainAllocationHandle(void *virPtr, aclrtDrvMemHandle *handle)
{
	static const char fn[] = "aclrtMemRetainAllocationHandle";
	struct piece *pc;

	if (!virPtr || !handle)
		return aclmem_arg_null(fn, !virPtr ? "virPtr" : "handle");
	pthread_rwlock_wrlock(&vmm_lock);
	pc = piece_start(virPtr, NULL);
	if (pc) {
		pc->phys->refs++;
		*handle = pc->phys;
	}
	pthread_rwlock_unlock(&vmm_lock);
	if (!pc)
		return not_piece(fn, virPtr);
	return ACL_SUCCESS;
}

/* ---- access ---- */

static int access_prot(uint32_t flags)
{
	switch (flags) {
	case ACL_RT_MEM_ACCESS_FLAGS_NONE:
		return PROT_NONE;
	case ACL_RT_MEM_ACCESS_FLAGS_READ:
		return PROT_READ;
	case ACL_RT_MEM_ACCESS_FLAGS_READWRITE:
		return PROT_READ | PROT_WRITE;
	default:
		return -1;
	}
}

static int location_check(const char *fn, const aclrtMemLocation *loc)
{
	if (loc->type != ACL_MEM_LOCATION_TYPE_HOST &&
	    loc->type != ACL_MEM_LOCATION_TYPE_DEVICE)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: location type %d (host or device)", fn,
				   (int)loc->type);
	if (loc->type == ACL_MEM_LOCATION_TYPE_DEVICE)
		return aclmem_arg_device(fn, loc->id);
	return ACL_SUCCESS;
}

/* The next piece after n's, if one follows it directly. */
static struct addrtree_node *piece_next(struct resv *r,
					struct addrtree_node *n)
{
	return addrtree_find(&r->pieces, n->key + to_piece(n)->size);
}

/*
 * Under the write lock: the pieces of r that tile [a, end) get flags (prot
 * for mprotect); 0, or the errno of the first mprotect that failed.  All
 * or nothing: after a failure the pieces before it get their recorded
 * access back, so the range is as it was.
 */
static int pieces_protect(const char *fn, struct resv *r, uintptr_t a,
			  uintptr_t end, uint32_t flags, int prot)
{
	struct addrtree_node *n, *bad;
	int err;

	for (bad = addrtree_find(&r->pieces, a); bad && bad->key < end;
	     bad = piece_next(r, bad))
		if (mprotect((void *)bad->key, to_piece(bad)->size, prot))
			break;
	err = bad && bad->key < end ? errno : 0;
	for (n = addrtree_find(&r->pieces, a); n && n != bad && n->key < end;
	     n = piece_next(r, n)) {
		if (!err) {
			to_piece(n)->access = flags;
		} else if (mprotect((void *)n->key, to_piece(n)->size,
				    access_prot(to_piece(n)->access))) {
			/* Rare: then at least the record tells the truth. */
			aclmem_warn("%s: restoring [%#lx, +%zu): %s", fn,
				    (unsigned long)n->key, to_piece(n)->size,
				    strerror(errno));
			to_piece(n)->access = flags;
		}
	}
	return err;
}

/*
 * The range must be whole mapped pieces following each other.  There is
 * one mapping, seen by the CPU and standing for the device as well, so
 * every descriptor applies to it: the last one decides.
 */
aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc,
			   size_t count)
{
	static const char fn[] = "aclrtMemSetAccess";
	struct addrtree_node *n;
	uintptr_t a = (uintptr_t)virPtr, end;
	struct resv *r;
	uint32_t flags = 0;
	size_t i;
	int ret, prot = 0;

	if (!virPtr || !desc || !size || !count)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !virPtr ? "virPtr is NULL" : !desc ?
				   "desc is NULL" : !size ? "size is 0" :
				   "count is 0");
	for (i = 0; i < count; i++) {
		ret = location_check(fn, &desc[i].location);
		if (ret)
			return ret;
		prot = access_prot(desc[i].flags);
		if (prot < 0)
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "%s: desc[%zu].flags 0x%x", fn, i,
					   (unsigned int)desc[i].flags);
		flags = desc[i].flags;
	}
	if (aclmem_range_wraps(virPtr, size))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: range overflows", fn);
	end = a + size;
	pthread_rwlock_wrlock(&vmm_lock);
	r = resv_at(virPtr);
	/* Check the whole range first: all or nothing. */
	for (n = r ? addrtree_find(&r->pieces, a) : NULL; n && n->key < end;
	     n = addrtree_find(&r->pieces, n->key + to_piece(n)->size))
		if (n->key + to_piece(n)->size == end)
			break;
	if (!n || n->key >= end) {
		pthread_rwlock_unlock(&vmm_lock);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s(%p, %zu): not whole mapped pieces", fn,
				   virPtr, size);
	}
	ret = pieces_protect(fn, r, a, end, flags, prot);
	pthread_rwlock_unlock(&vmm_lock);
	if (ret)
		return aclmem_fail(aclmem_mmap_errno_to_acl(ret),
				   "%s(%p, %zu): mprotect: %s", fn, virPtr,
				   size, strerror(ret));
	return ACL_SUCCESS;
}

aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location,
			   uint64_t *flag)
{
	static const char fn[] = "aclrtMemGetAccess";
	struct piece *pc;
	int ret;

	if (!virPtr || !location || !flag)
		return aclmem_arg_null(fn, !virPtr ? "virPtr" :
				       !location ? "location" : "flag");
	ret = location_check(fn, location);
	if (ret)
		return ret;
	pthread_rwlock_rdlock(&vmm_lock);
	pc = piece_start(virPtr, NULL);
	if (pc)
		*flag = pc->access;
	pthread_rwlock_unlock(&vmm_lock);
	if (!pc)
		return not_piece(fn, virPtr);
	return ACL_SUCCESS;
}

/* ---- what the rest of the library sees ---- */

/*
 * Where [p, p + len) lies among the mapped pieces: INSIDE when every byte
 * is in pieces that follow each other without a gap and none of them has
 * ACL_RT_MEM_ACCESS_FLAGS_NONE (out describes the first: its handle, the
 * offset in it; readonly if any is read-only); OVERRUN when p is inside a
 * reservation but the range is not wholly usable; NONE when p is in no
 * reservation.
 */
static enum aclmem_lookup vmm_lookup(const void *p, size_t len,
				     struct aclmem_range *out)
{
	enum aclmem_lookup ret = ACLMEM_RANGE_NONE;
	struct addrtree_node *n;
	struct piece *first;
	uintptr_t end;
	bool ro;
	struct resv *r;

	/* Nothing reserved yet (the usual case): no lock. */
	if (!__atomic_load_n(&resvs.root, __ATOMIC_RELAXED))
		return ACLMEM_RANGE_NONE;
	pthread_rwlock_rdlock(&vmm_lock);
	r = resv_at(p);
	if (!r)
		goto out;
	ret = ACLMEM_RANGE_OVERRUN;
	first = piece_at(r, p);
	if (!first || first->access == ACL_RT_MEM_ACCESS_FLAGS_NONE ||
	    aclmem_range_wraps(p, len))
		goto out;
	end = (uintptr_t)p + len;
	ro = first->access == ACL_RT_MEM_ACCESS_FLAGS_READ;
	/* Pieces that follow each other carry the range on. */
	for (n = &first->node; end > n->key + to_piece(n)->size;) {
		n = addrtree_find(&r->pieces, n->key + to_piece(n)->size);
		if (!n || to_piece(n)->access == ACL_RT_MEM_ACCESS_FLAGS_NONE)
			goto out;
		ro |= to_piece(n)->access == ACL_RT_MEM_ACCESS_FLAGS_READ;
	}
	if (out) {
		out->handle = first->phys->handle;
		out->offset = first->offset + ((uintptr_t)p - first->node.key);
		out->page_size = first->phys->page_size;
		out->kind = first->phys->prop.location.type ==
			    ACL_MEM_LOCATION_TYPE_DEVICE ? ACLMEM_BUF_DEVICE :
							   ACLMEM_BUF_HOST;
		out->device = out->kind == ACLMEM_BUF_DEVICE ?
			      first->phys->mem_device : 0;
		out->readonly = ro;
	}
	ret = ACLMEM_RANGE_INSIDE;
out:
	pthread_rwlock_unlock(&vmm_lock);
	return ret;
}

/* The piece holding p: its start and size; ACL_SUCCESS or 107000. */
static int vmm_piece_range(const void *p, void **base, size_t *size)
{
	struct piece *pc = NULL;
	struct resv *r;

	if (!__atomic_load_n(&resvs.root, __ATOMIC_RELAXED))
		return ACL_ERROR_RT_PARAM_INVALID;
	pthread_rwlock_rdlock(&vmm_lock);
	r = resv_at(p);
	if (r)
		pc = piece_at(r, p);
	if (pc) {
		*base = (void *)pc->node.key;
		*size = pc->size;
	}
	pthread_rwlock_unlock(&vmm_lock);
	return pc ? ACL_SUCCESS : ACL_ERROR_RT_PARAM_INVALID;
}

/* Pieces are device memory for memcpy, memset, attributes and the like. */
ACLMEM_MEM_EXT(.lookup = vmm_lookup,
	       .piece_range = vmm_piece_range)

/* ---- sharing between processes ---- */

/* A key this process exported (from a handle still alive), or NULL. */
static struct phys *export_find(const uint64_t key[2])
{
	struct phys *p;

	for (p = phys_list; p; p = p->next)
		if (p->exported && p->key[0] == key[0] && p->key[1] == key[1])
			return p;
	return NULL;
}

static int do_export(const char *fn, aclrtDrvMemHandle handle, bool key64,
		     bool any_pid, uint64_t key[2])
{
	struct npu_mem_ipc_export e;
	struct phys *p;
	int ret;

	pthread_rwlock_wrlock(&vmm_lock);
	p = phys_find(handle);
	if (!p || p->imported || p->exported) {
		pthread_rwlock_unlock(&vmm_lock);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID, "%s(%p): %s", fn,
				   handle, !p ? "not a live physical handle" :
				   p->imported ? "an imported handle" :
				   "already exported");
	}
	memset(&e, 0, sizeof(e));
	e.handle = p->handle;
	e.flags = (key64 ? NPU_MEM_IPC_KEY64 : 0) |
		  (any_pid ? NPU_MEM_IPC_ANY_PID : 0);
	ret = aclmem_do_ioctl(vfd, NPU_MEM_IOCTL_IPC_EXPORT, &e);
	if (!ret) {
		p->exported = true;
		p->key[0] = key[0] = e.key[0];
		p->key[1] = key[1] = e.key[1];
	}
	pthread_rwlock_unlock(&vmm_lock);
	if (ret == -EINVAL && key64 && any_pid)
		return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
				   "%s: this npu-mem module refuses a 64-bit "
				   "handle without pid validation", fn);
	if (ret)
		return aclmem_fail(aclmem_ioctl_errno_to_acl(-ret),
				   "%s: IPC_EXPORT: %s", fn, strerror(-ret));
	return ACL_SUCCESS;
}

/*
 * A 64-bit shareable handle (V1's, V2's DEFAULT type) into *sh; flags
 * (DISABLE_PID_VALIDATION or 0) choose between the pid list and the
 * exporter's user.  ACL code, logged.
 */
static int export_key64(const char *fn, aclrtDrvMemHandle handle,
			uint64_t flags, void *sh)
{
	uint64_t key[2];
	int ret;

	ret = do_export(fn, handle, true, flags != 0, key);
	if (!ret)
		*(uint64_t *)sh = key[0];
	return ret;
}

aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
					 aclrtMemHandleType handleType,
					 uint64_t flags,
					 uint64_t *shareableHandle)
{
	static const char fn[] = "aclrtMemExportToShareableHandle";

	if (!handle || !shareableHandle)
		return aclmem_arg_null(fn, !handle ? "handle" :
				       "shareableHandle");
	if (handleType != ACL_MEM_HANDLE_TYPE_NONE ||
	    flags > ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: handleType %d, flags 0x%llx", fn,
				   (int)handleType, (unsigned long long)flags);
	return export_key64(fn, handle, flags, shareableHandle);
}

aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle,
					   uint64_t flags,
					   aclrtMemSharedHandleType shareType,
					   void *shareableHandle)
{
	static const char fn[] = "aclrtMemExportToShareableHandleV2";
	aclrtMemFabricHandle *fh = shareableHandle;
	uint64_t key[2];
	int ret;

	if (!handle || !shareableHandle)
		return aclmem_arg_null(fn, !handle ? "handle" :
				       "shareableHandle");
	if (flags > ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION ||
	    (shareType != ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT &&
	     shareType != ACL_MEM_SHARE_HANDLE_TYPE_FABRIC))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: flags 0x%llx, shareType %d", fn,
				   (unsigned long long)flags, (int)shareType);
	if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT)
		return export_key64(fn, handle, flags, shareableHandle);
	ret = do_export(fn, handle, false, flags != 0, key);
	if (ret)
		return ret;
	memset(fh, 0, sizeof(*fh));
	memcpy(fh->data, key, sizeof(key));
	return ACL_SUCCESS;
}

static int set_pids(const char *fn, const uint64_t key[2], int32_t *pid,
		    size_t num)
{
	struct npu_mem_ipc_set_pids s;
	int ret;

	if (!pid || !num || num > NPU_MEM_IPC_MAX_PIDS)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !pid ? "pid is NULL" : !num ? "pidNum is 0" :
				   "more pids than one handle can hold");
	pthread_rwlock_rdlock(&vmm_lock);
	if (!export_find(key)) {
		pthread_rwlock_unlock(&vmm_lock);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: not a shareable handle this process "
				   "exported", fn);
	}
	memset(&s, 0, sizeof(s));
	s.key[0] = key[0];
	s.key[1] = key[1];
	s.pids = (uintptr_t)pid;
	s.count = (uint32_t)num;
	ret = aclmem_do_ioctl(vfd, NPU_MEM_IOCTL_IPC_SET_PIDS, &s);
	pthread_rwlock_unlock(&vmm_lock);
	if (ret == -ESRCH)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: a pid names no process", fn);
	if (ret == -ENOSPC)
		return aclmem_fail(ACL_ERROR_RT_OVER_LIMIT,
				   "%s: the pid list is full (%d)", fn,
				   NPU_MEM_IPC_MAX_PIDS);
	if (ret)
		return aclmem_fail(aclmem_ioctl_errno_to_acl(-ret),
				   "%s: IPC_SET_PIDS: %s", fn, strerror(-ret));
	return ACL_SUCCESS;
}

aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle,
					 int32_t *pid, size_t pidNum)
{
	uint64_t key[2] = { shareableHandle, 0 };

	return set_pids("aclrtMemSetPidToShareableHandle", key, pid, pidNum);
}

/* The key a V2 shareable handle holds; ACL code. */
static int v2_key(const char *fn, const void *sh,
		  aclrtMemSharedHandleType type, uint64_t key[2])
{
	if (!sh)
		return aclmem_arg_null(fn, "shareableHandle");
	if (type == ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT) {
		memcpy(&key[0], sh, sizeof(uint64_t));
		key[1] = 0;
		return ACL_SUCCESS;
	}
	if (type == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC) {
		memcpy(key, ((const aclrtMemFabricHandle *)sh)->data,
		       2 * sizeof(uint64_t));
		return ACL_SUCCESS;
	}
	return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: shareType %d", fn,
			   (int)type);
}

aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle,
					   aclrtMemSharedHandleType shareType,
					   int32_t *pid, size_t pidNum)
{
	static const char fn[] = "aclrtMemSetPidToShareableHandleV2";
	uint64_t key[2];
	int ret = v2_key(fn, shareableHandle, shareType, key);

	return ret ? ret : set_pids(fn, key, pid, pidNum);
}

/* The memory attribute an imported buffer is described with. */
static aclrtMemAttr import_attr(const struct npu_mem_buffer *kb, size_t *g)
{
	switch (kb->policy) {
	case NPU_MEM_POLICY_HUGE1G_ONLY:
		*g = SZ_1G;
		return ACL_MEM_HUGE1G;
	case NPU_MEM_POLICY_NORMAL_ONLY:
		*g = SZ_4K;
		return ACL_MEM_NORMAL;
	default:
		*g = SZ_2M;
		return ACL_MEM_HUGE;
	}
}

/*
 * The exporter's device of an imported handle (QUERY), and, for a handle
 * imported into another device, the buffer DMA-mapped for that one
 * (PEER_MAP, best effort as peer.c's: a module without it, or a mapping
 * already there, changes nothing the CPU's copies need).
 */
static int32_t import_owner(uint32_t h, int32_t dev)
{
	struct npu_mem_query q = { .handle = h };
	struct npu_mem_peer pm = { .handle = h, .device = (uint32_t)dev };

	if (aclmem_do_ioctl(vfd, NPU_MEM_IOCTL_QUERY, &q))
		return dev;
	if ((int32_t)q.device != dev)
		aclmem_do_ioctl(vfd, NPU_MEM_IOCTL_PEER_MAP, &pm);
	return (int32_t)q.device;
}

/*
 * A handle imported into device dev (-1: the current device).  CANN lets
 * another device than the exporter's import it, and asks for peer access
 * (aclrtDeviceEnablePeerAccess) to use it there: the handle is dev's (its
 * properties name dev) but its memory stays the exporter's device's, so a
 * copy between it and dev's own memory needs peer access, as between any
 * two devices' buffers; the import itself enables none.
 */
static int do_import(const char *fn, const uint64_t key[2], int32_t dev,
		     aclrtDrvMemHandle *handle)
{
	struct npu_mem_ipc_import im;
	aclrtPhysicalMemProp prop;
	struct phys *p;
	size_t g;
	int ret;

	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (dev < 0)
		dev = aclmem_ctx_device(aclmem_ctx_current());
	pthread_once(&atfork_once, atfork_register);
	pthread_rwlock_wrlock(&vmm_lock);
	/* CANN: export and import are for two processes, not one. */
	if (export_find(key)) {
		pthread_rwlock_unlock(&vmm_lock);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: this process exported that handle", fn);
	}
	ret = vfd_get();
	if (ret) {
		pthread_rwlock_unlock(&vmm_lock);
		return ret;
	}
	memset(&im, 0, sizeof(im));
	im.key[0] = key[0];
	im.key[1] = key[1];
	ret = aclmem_do_ioctl(vfd, NPU_MEM_IOCTL_IPC_IMPORT, &im);
	if (ret) {
		pthread_rwlock_unlock(&vmm_lock);
		if (ret == -ENOENT)
			return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
					   "%s: no such shareable handle (never "
					   "exported, freed, or its exporter "
					   "gone)", fn);
		if (ret == -EACCES)
			return aclmem_fail(ACL_ERROR_RT_NO_PERMISSION,
					   "%s: this process is not on the "
					   "handle's pid list", fn);
		return aclmem_fail(aclmem_ioctl_errno_to_acl(-ret),
				   "%s: IPC_IMPORT: %s", fn, strerror(-ret));
	}
	memset(&prop, 0, sizeof(prop));
	prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
	prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
	prop.memAttr = import_attr(&im.buf, &g);
	prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = (uint32_t)dev;
	p = phys_new(im.handle, &im.buf, im.buf.size & ~(uint64_t)(g - 1), g,
		     &prop, true);
	if (!p) {
		aclmem_free(vfd, im.handle);
	} else {
		p->mem_device = import_owner(im.handle, dev);
		*handle = p;
	}
	pthread_rwlock_unlock(&vmm_lock);
	if (!p)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	return ACL_SUCCESS;
}

aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle,
					   int32_t deviceId,
					   aclrtDrvMemHandle *handle)
{
	static const char fn[] = "aclrtMemImportFromShareableHandle";
	uint64_t key[2] = { shareableHandle, 0 };
	int ret;

	if (!handle)
		return aclmem_arg_null(fn, "handle");
	ret = aclmem_arg_device(fn, deviceId);
	return ret ? ret : do_import(fn, key, deviceId, handle);
}

aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle,
					     aclrtMemSharedHandleType shareType,
					     uint64_t flags,
					     aclrtDrvMemHandle *handle)
{
	static const char fn[] = "aclrtMemImportFromShareableHandleV2";
	uint64_t key[2];
	int ret;

	if (!handle || flags)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !handle ? "handle is NULL" : "flags must be 0");
	ret = v2_key(fn, shareableHandle, shareType, key);
	return ret ? ret : do_import(fn, key, -1, handle);
}
