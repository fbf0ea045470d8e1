// SPDX-License-Identifier: MIT
/*
 * Pages shared between processes by key: see ipc.h for the model.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl_rt.h"
#include "ipc.h"
#include "log.h"

#define IPC_MAGIC	0x61636c69U	/* "acli" */
#define PAGE		4096

_Static_assert(sizeof(struct aclmem_ipc_page) <= PAGE, "one page");

int aclmem_ipc_create(enum aclmem_ipc_kind kind, struct aclmem_ipc *ipc)
{
	struct aclmem_ipc_page *p;
	int fd;

	fd = memfd_create(kind == ACLMEM_IPC_NOTIFY ? "aclmem-notify" :
			  "aclmem-event", MFD_CLOEXEC);
	if (fd < 0) {
		aclmem_err("memfd_create: %s", strerror(errno));
		return kind == ACLMEM_IPC_NOTIFY ? ACL_ERROR_RT_NO_NOTIFY_RESOURCE :
						   ACL_ERROR_RT_NO_EVENT_RESOURCE;
	}
	if (ftruncate(fd, PAGE)) {
		aclmem_err("ftruncate: %s", strerror(errno));
		close(fd);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	if (getrandom(p->nonce, sizeof(p->nonce), 0) !=
	    (ssize_t)sizeof(p->nonce)) {
		munmap(p, PAGE);
		close(fd);
		return ACL_ERROR_RT_INTERNAL_ERROR;
	}
	p->kind = kind;
	p->owner = getpid();
	__atomic_store_n(&p->magic, IPC_MAGIC, __ATOMIC_RELEASE);
	ipc->page = p;
	ipc->fd = fd;
	return ACL_SUCCESS;
}

void aclmem_ipc_destroy(struct aclmem_ipc *ipc)
{
	if (ipc->page)
		munmap(ipc->page, PAGE);
	if (ipc->fd >= 0)
		close(ipc->fd);
	ipc->page = NULL;
	ipc->fd = -1;
}

int aclmem_ipc_key(const struct aclmem_ipc *ipc, char *key, size_t len)
{
	char nonce[33];
	int i, n;

	if (ipc->fd < 0)
		return ACL_ERROR_RT_PARAM_INVALID;	/* not ours to export */
	for (i = 0; i < 16; i++)
		sprintf(nonce + 2 * i, "%02x", ipc->page->nonce[i]);
	n = snprintf(key, len, "aclmem:%d:%d:%s", (int)ipc->page->owner,
		     ipc->fd, nonce);
	if (n < 0 || (size_t)n >= len)
		return ACL_ERROR_INVALID_PARAM;
	return ACL_SUCCESS;
}

int aclmem_ipc_allow(struct aclmem_ipc *ipc, const int32_t *pid, size_t num)
{
	struct aclmem_ipc_page *p = ipc->page;
	size_t i;

	for (i = 0; i < num; i++)
		if (pid[i] <= 0)
			return ACL_ERROR_INVALID_PARAM;
	if (p->npids + num > ACLMEM_IPC_MAX_PIDS)
		return ACL_ERROR_RT_OVER_LIMIT;
	for (i = 0; i < num; i++)
		p->pids[p->npids + i] = pid[i];
	__atomic_store_n(&p->npids, p->npids + (uint32_t)num,
			 __ATOMIC_RELEASE);
	return ACL_SUCCESS;
}

static int parse_key(const char *key, int *pid, int *fd, uint8_t nonce[16])
{
	char hex[33];
	int i, n = 0;

	if (sscanf(key, "aclmem:%d:%d:%32[0-9a-f]%n", pid, fd, hex, &n) != 3 ||
	    key[n] || strlen(hex) != 32 || *pid <= 0 || *fd < 0)
		return -1;
	for (i = 0; i < 16; i++) {
		unsigned int b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		nonce[i] = (uint8_t)b;
	}
	return 0;
}

int aclmem_ipc_open(enum aclmem_ipc_kind kind, const char *key,
		    struct aclmem_ipc *ipc)
{
	struct aclmem_ipc_page *p;
	uint8_t nonce[16];
	char path[64];
	int pid, fd, mfd, ret = ACL_ERROR_RT_PARAM_INVALID;
	uint32_t i, n;
	struct stat st;

	if (parse_key(key, &pid, &fd, nonce)) {
		aclmem_err("IPC key \"%.80s\": not a key this library made", key);
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	mfd = open(path, O_RDWR | O_CLOEXEC);
	if (mfd < 0) {
		aclmem_err("IPC key \"%s\": %s: %s", key, path, strerror(errno));
		return errno == EACCES || errno == EPERM ?
		       ACL_ERROR_RT_NO_PERMISSION : ACL_ERROR_RT_PARAM_INVALID;
	}
	if (fstat(mfd, &st) || st.st_size < PAGE) {
		close(mfd);
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	close(mfd);
	if (p == MAP_FAILED)
		return ACL_ERROR_RT_PARAM_INVALID;
	if (__atomic_load_n(&p->magic, __ATOMIC_ACQUIRE) != IPC_MAGIC ||
	    p->kind != kind || memcmp(p->nonce, nonce, sizeof(nonce)) ||
	    p->owner != pid) {
		aclmem_err("IPC key \"%s\": names another object", key);
		goto fail;
	}
	if (!__atomic_load_n(&p->any_pid, __ATOMIC_ACQUIRE) &&
	    getpid() != pid) {
		n = __atomic_load_n(&p->npids, __ATOMIC_ACQUIRE);
		for (i = 0; i < n && i < ACLMEM_IPC_MAX_PIDS; i++)
			if (p->pids[i] == getpid())
				break;
		if (i == n || i == ACLMEM_IPC_MAX_PIDS) {
			aclmem_err("IPC key \"%s\": pid %d not allowed by the "
				   "exporter (SetImportPid)", key, getpid());
			ret = ACL_ERROR_RT_NO_PERMISSION;
			goto fail;
		}
	}
	ipc->page = p;
	ipc->fd = -1;
	return ACL_SUCCESS;
fail:
	munmap(p, PAGE);
	return ret;
}

void aclmem_ipc_wait(uint32_t *word, uint32_t val, long ns)
{
	struct timespec ts = { 0, ns < 0 ? 10 * 1000 * 1000L : ns };

	while (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	/* Shared between processes: no FUTEX_PRIVATE_FLAG. */
	syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
}

void aclmem_ipc_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}
