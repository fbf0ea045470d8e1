// SPDX-License-Identifier: MIT
/*
 * Kernel binaries (aclrtBinaryLoadFromFile and its family): a binary is a
 * shared object that ascendc_library(NAME SHARED ...) built, its kernels
 * compiled for the CPU.  Loading dlopen()s it (RTLD_NOW | RTLD_LOCAL) and
 * checks the marker ACLMEM_BINARY_MARK; a kernel's handle is its entry
 * aclmem_kernel_entry_<name> (<aclmem/kernel.h>), which turns a packed
 * argument block into a launch that lib/launch.c runs as a stream task.
 *
 * Object model: a struct binary holds the functions looked up in it and
 * the argument lists made for them; all three are handles the caller
 * holds, valid while the binary is on the loaded list.  The binary itself
 * is counted: one reference for the load, one per launch queued and not
 * yet released.  aclrtBinaryUnLoad takes it off the list at once (its
 * handles are refused from then on) and drops the load's reference; the
 * shared object is closed and everything freed when the last queued
 * launch has been released, so a launch queued before the unload still
 * runs its kernel.
 *
 * Lock: bin_lock guards the loaded list and every binary's lists and
 * argument lists; it is never held across a dlopen, an entry or a queue.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl_rt.h"
#include "aclmem/kernel.h"
#include "launch.h"
#include "log.h"

struct param {
	struct param *next;
	size_t off, size;
	bool holder;		/* a placeholder: a pointer to buf */
	void *buf;
	size_t buf_size;
};

struct args {
	struct args *next;
	struct func *fn;
	unsigned char *block;
	size_t len, cap;
	bool final;
	struct param *params;
};

struct func {
	struct func *next;
	struct binary *bin;
	aclmem_kernel_entry_fn entry;
	char name[];
};

struct binary {
	struct binary *next;
	void *dl;
	int fd;			/* LoadFromData's file, -1 */
	unsigned int refs;
	struct func *funcs;
	struct args *args;
};

static pthread_mutex_t bin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct binary *loaded;

/* Under bin_lock: the loaded binary h, or NULL. */
static struct binary *find_binary(const void *h)
{
	struct binary *b;

	for (b = loaded; b; b = b->next)
		if (b == h)
			return b;
	return NULL;
}

static struct func *find_func(const void *h)
{
	struct binary *b;
	struct func *f;

	for (b = loaded; b; b = b->next)
		for (f = b->funcs; f; f = f->next)
			if (f == h)
				return f;
	return NULL;
}

static struct args *find_args(const void *h)
{
	struct binary *b;
	struct args *a;

	for (b = loaded; b; b = b->next)
		for (a = b->args; a; a = a->next)
			if (a == h)
				return a;
	return NULL;
}

static void free_args(struct args *a)
{
	struct param *p, *pn;

	for (p = a->params; p; p = pn) {
		pn = p->next;
		free(p->buf);
		free(p);
	}
	free(a->block);
	free(a);
}

static void binary_put(struct binary *b)
{
	struct func *f, *fn;
	struct args *a, *an;
	bool last;

	pthread_mutex_lock(&bin_lock);
	last = !--b->refs;
	pthread_mutex_unlock(&bin_lock);
	if (!last)
		return;
	for (a = b->args; a; a = an) {
		an = a->next;
		free_args(a);
	}
	for (f = b->funcs; f; f = fn) {
		fn = f->next;
		free(f);
	}
	dlclose(b->dl);
	/*
	 * The loader knows a loaded object by its file's inode: a memfd
	 * closed while its object is loaded could lend its number to the
	 * next one, which would then be taken for the same object.
	 */
	if (b->fd >= 0)
		close(b->fd);
	free(b);
}

/* Options: what CANN's loader takes; none changes anything here. */
static int check_options(const char *fn, const aclrtBinaryLoadOptions *o)
{
	size_t i;

	if (!o || !o->numOpt)
		return ACL_SUCCESS;
	if (!o->options)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: numOpt %zu with options NULL", fn,
				   o->numOpt);
	for (i = 0; i < o->numOpt; i++) {
		const aclrtBinaryLoadOption *op = &o->options[i];

		switch (op->type) {
		case ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD:
			if (op->value.isLazyLoad > 1)
				goto bad;
			break;
		case ACL_RT_BINARY_LOAD_OPT_MAGIC:
			if (op->value.magic != ACL_RT_BINARY_MAGIC_ELF_AICORE &&
			    op->value.magic != ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE &&
			    op->value.magic != ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE)
				goto bad;
			break;
		case ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE:
			return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
					   "%s: AI CPU kernels do not exist here",
					   fn);
		default:
			goto bad;
		}
	}
	return ACL_SUCCESS;
bad:
	return aclmem_fail(ACL_ERROR_INVALID_PARAM,
			   "%s: option %zu: type %d with value %u", fn, i,
			   (int)o->options[i].type, o->options[i].value.rsv[0]);
}

static aclError load(const char *fn, const char *path, const char *what,
		     int fd, aclrtBinHandle *binHandle)
{
	const unsigned int *mark;
	struct binary *b;
	void *dl;

	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return aclmem_fail(ACL_ERROR_PARSE_FILE,
				   "%s: %s is not a loadable binary: %s", fn,
				   what, dlerror());
	mark = dlsym(dl, ACLMEM_BINARY_MARK);
	if (!mark || *mark != ACLMEM_BINARY_VERSION) {
		dlclose(dl);
		return aclmem_fail(ACL_ERROR_PARSE_FILE,
				   "%s: %s was not built by ascendc_library "
				   "(no %s %u)", fn, what, ACLMEM_BINARY_MARK,
				   ACLMEM_BINARY_VERSION);
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		dlclose(dl);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	b->dl = dl;
	b->fd = fd;
	b->refs = 1;
	pthread_mutex_lock(&bin_lock);
	b->next = loaded;
	loaded = b;
	pthread_mutex_unlock(&bin_lock);
	*binHandle = b;
	return ACL_SUCCESS;
}

aclError aclrtBinaryLoadFromFile(const char *binPath,
				 aclrtBinaryLoadOptions *options,
				 aclrtBinHandle *binHandle)
{
	static const char fn[] = "aclrtBinaryLoadFromFile";
	char path[4096];
	int ret;

	if (!binPath || !binHandle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL",
				   fn, !binPath ? "binPath" : "binHandle");
	ret = check_options(fn, options);
	if (ret)
		return ret;
	if (access(binPath, R_OK))
		return aclmem_fail(ACL_ERROR_INVALID_FILE, "%s: %s: %s", fn,
				   binPath, strerror(errno));
	/* dlopen() searches the library path for a name without a slash. */
	if ((size_t)snprintf(path, sizeof(path), "%s%s",
			     strchr(binPath, '/') ? "" : "./", binPath) >=
	    sizeof(path))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: binPath too long", fn);
	return load(fn, path, binPath, -1, binHandle);
}

aclError aclrtBinaryLoadFromData(const void *data, size_t length,
				 const aclrtBinaryLoadOptions *options,
				 aclrtBinHandle *binHandle)
{
	static const char fn[] = "aclrtBinaryLoadFromData";
	const char *p = data;
	char path[64];
	size_t done;
	int fd, ret;

	if (!data || !length || !binHandle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !data ? "data is NULL" :
				   !length ? "length is 0" : "binHandle is NULL");
	ret = check_options(fn, options);
	if (ret)
		return ret;
	/* The dynamic loader maps files: the data becomes an unnamed one. */
	fd = memfd_create("aclmem-binary", MFD_CLOEXEC);
	if (fd < 0)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: memfd_create: %s", fn, strerror(errno));
	for (done = 0; done < length;) {
		ssize_t n = write(fd, p + done, length - done);

		if (n <= 0) {
			close(fd);
			return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
					   "%s: writing %zu bytes: %s", fn,
					   length, strerror(errno));
		}
		done += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = load(fn, path, "the data", fd, binHandle);
	if (ret)
		close(fd);
	return ret;
}

aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle)
{
	struct binary *b, **pp;

	if (!binHandle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtBinaryUnLoad: binHandle is NULL");
	pthread_mutex_lock(&bin_lock);
	b = find_binary(binHandle);
	if (b)
		for (pp = &loaded; *pp; pp = &(*pp)->next)
			if (*pp == b) {
				*pp = b->next;
				break;
			}
	pthread_mutex_unlock(&bin_lock);
	if (!b)
		return aclmem_fail(ACL_ERROR_RT_INVALID_HANDLE,
				   "aclrtBinaryUnLoad: %p is not a loaded binary",
				   binHandle);
	binary_put(b);
	return ACL_SUCCESS;
}

aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle,
				const char *kernelName,
				aclrtFuncHandle *funcHandle)
{
	static const char fn[] = "aclrtBinaryGetFunction";
	char sym[sizeof(ACLMEM_KERNEL_ENTRY_PREFIX) + 256];
	aclmem_kernel_entry_fn entry;
	struct binary *b;
	struct func *f;
	size_t len;

	if (!binHandle || !kernelName || !funcHandle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL",
				   fn, !binHandle ? "binHandle" :
				   !kernelName ? "kernelName" : "funcHandle");
	len = strlen(kernelName);
	pthread_mutex_lock(&bin_lock);
	b = find_binary(binHandle);
	if (!b) {
		pthread_mutex_unlock(&bin_lock);
		return aclmem_fail(ACL_ERROR_RT_INVALID_HANDLE,
				   "%s: %p is not a loaded binary", fn,
				   binHandle);
	}
	for (f = b->funcs; f; f = f->next)
		if (!strcmp(f->name, kernelName))
			break;
	if (f) {
		*funcHandle = f;
		pthread_mutex_unlock(&bin_lock);
		return ACL_SUCCESS;
	}
	/* The binary stays: unloading it needs this lock. */
	snprintf(sym, sizeof(sym), "%s%s", ACLMEM_KERNEL_ENTRY_PREFIX,
		 kernelName);
	*(void **)&entry = len < 256 ? dlsym(b->dl, sym) : NULL;
	f = entry ? malloc(sizeof(*f) + len + 1) : NULL;
	if (f) {
		f->bin = b;
		f->entry = entry;
		memcpy(f->name, kernelName, len + 1);
		f->next = b->funcs;
		b->funcs = f;
		*funcHandle = f;
	}
	pthread_mutex_unlock(&bin_lock);
	if (!entry)
		return aclmem_fail(ACL_ERROR_RT_KERNEL_LOOKUP,
				   "%s: no kernel %s in the binary", fn,
				   kernelName);
	return f ? ACL_SUCCESS : ACL_ERROR_RT_MEMORY_ALLOCATION;
}

aclError aclrtKernelArgsInit(aclrtFuncHandle funcHandle,
			     aclrtArgsHandle *argsHandle)
{
	struct func *f;
	struct args *a;

	if (!funcHandle || !argsHandle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtKernelArgsInit: %s is NULL",
				   !funcHandle ? "funcHandle" : "argsHandle");
	a = calloc(1, sizeof(*a));
	if (!a)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	pthread_mutex_lock(&bin_lock);
	f = find_func(funcHandle);
	if (f) {
		a->fn = f;
		a->next = f->bin->args;
		f->bin->args = a;
		*argsHandle = a;
	}
	pthread_mutex_unlock(&bin_lock);
	if (f)
		return ACL_SUCCESS;
	free(a);
	return aclmem_fail(ACL_ERROR_RT_INVALID_HANDLE,
			   "aclrtKernelArgsInit: %p is not a function of a "
			   "loaded binary", funcHandle);
}

/*
 * Under bin_lock: the argument list h, or an error code after a message;
 * a finalized one only if final is allowed.
 */
static int get_args(const char *fn, aclrtArgsHandle h, bool final_ok,
		    struct args **out)
{
	struct args *a = find_args(h);

	if (!a)
		return aclmem_fail(ACL_ERROR_RT_INVALID_HANDLE,
				   "%s: %p is not an argument list of a loaded "
				   "binary", fn, h);
	if (a->final && !final_ok)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: the argument list is finalized", fn);
	*out = a;
	return ACL_SUCCESS;
}

/* Under bin_lock: a parameter of size bytes at its C alignment. */
static int append(struct args *a, size_t size, bool holder,
		  aclrtParamHandle *paramHandle)
{
	size_t align = size == 1 || size == 2 || size == 4 ? size : 8;
	size_t off = (a->len + align - 1) & ~(align - 1);
	struct param *p, **pp;

	if (off + size > a->cap) {
		size_t cap = a->cap ? a->cap : 64;
		unsigned char *nb;

		while (cap < off + size)
			cap *= 2;
		nb = realloc(a->block, cap);
		if (!nb)
			return ACL_ERROR_RT_MEMORY_ALLOCATION;
		memset(nb + a->cap, 0, cap - a->cap);
		a->block = nb;
		a->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	p->off = off;
	p->size = size;
	p->holder = holder;
	for (pp = &a->params; *pp; pp = &(*pp)->next)
		;
	*pp = p;
	a->len = off + size;
	*paramHandle = p;
	return ACL_SUCCESS;
}

aclError aclrtKernelArgsAppend(aclrtArgsHandle argsHandle, void *param,
			       size_t paramSize, aclrtParamHandle *paramHandle)
{
	static const char fn[] = "aclrtKernelArgsAppend";
	struct param *p;
	struct args *a;
	int ret;

	if (!argsHandle || !param || !paramSize || !paramHandle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !argsHandle ? "argsHandle is NULL" :
				   !param ? "param is NULL" :
				   !paramSize ? "paramSize is 0" :
				   "paramHandle is NULL");
	pthread_mutex_lock(&bin_lock);
	ret = get_args(fn, argsHandle, false, &a);
	if (!ret)
		ret = append(a, paramSize, false, paramHandle);
	if (!ret) {
		p = *paramHandle;
		memcpy(a->block + p->off, param, paramSize);
	}
	pthread_mutex_unlock(&bin_lock);
	return ret;
}

aclError aclrtKernelArgsAppendPlaceHolder(aclrtArgsHandle argsHandle,
					  aclrtParamHandle *paramHandle)
{
	static const char fn[] = "aclrtKernelArgsAppendPlaceHolder";
	struct args *a;
	int ret;

	if (!argsHandle || !paramHandle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL",
				   fn, !argsHandle ? "argsHandle" : "paramHandle");
	pthread_mutex_lock(&bin_lock);
	ret = get_args(fn, argsHandle, false, &a);
	if (!ret)
		ret = append(a, sizeof(void *), true, paramHandle);
	pthread_mutex_unlock(&bin_lock);
	return ret;
}

/* Under bin_lock: p, a parameter of a, or NULL. */
static struct param *find_param(struct args *a, const void *p)
{
	struct param *q;

	for (q = a->params; q; q = q->next)
		if (q == p)
			return q;
	return NULL;
}

aclError aclrtKernelArgsGetPlaceHolderBuffer(aclrtArgsHandle argsHandle,
					     aclrtParamHandle paramHandle,
					     size_t dataSize, void **bufferAddr)
{
	static const char fn[] = "aclrtKernelArgsGetPlaceHolderBuffer";
	struct param *p = NULL;
	struct args *a;
	void *buf;
	int ret;

	if (!argsHandle || !paramHandle || !dataSize || !bufferAddr)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !argsHandle ? "argsHandle is NULL" :
				   !paramHandle ? "paramHandle is NULL" :
				   !dataSize ? "dataSize is 0" :
				   "bufferAddr is NULL");
	pthread_mutex_lock(&bin_lock);
	ret = get_args(fn, argsHandle, true, &a);
	if (!ret) {
		p = find_param(a, paramHandle);
		if (!p || !p->holder)
			ret = aclmem_fail(ACL_ERROR_INVALID_PARAM,
					  "%s: %p is not a placeholder of the "
					  "argument list", fn, paramHandle);
	}
	if (!ret) {
		buf = realloc(p->buf, dataSize);
		if (buf) {
			p->buf = buf;
			p->buf_size = dataSize;
			*bufferAddr = buf;
		} else {
			ret = ACL_ERROR_RT_MEMORY_ALLOCATION;
		}
	}
	pthread_mutex_unlock(&bin_lock);
	return ret;
}

aclError aclrtKernelArgsParaUpdate(aclrtArgsHandle argsHandle,
				   aclrtParamHandle paramHandle, void *param,
				   size_t paramSize)
{
	static const char fn[] = "aclrtKernelArgsParaUpdate";
	struct param *p;
	struct args *a;
	int ret;

	if (!argsHandle || !paramHandle || !param || !paramSize)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !argsHandle ? "argsHandle is NULL" :
				   !paramHandle ? "paramHandle is NULL" :
				   !param ? "param is NULL" : "paramSize is 0");
	pthread_mutex_lock(&bin_lock);
	ret = get_args(fn, argsHandle, true, &a);
	if (!ret) {
		p = find_param(a, paramHandle);
		if (!p || p->holder || p->size != paramSize)
			ret = aclmem_fail(ACL_ERROR_INVALID_PARAM,
					  "%s: %p is not a parameter of %zu "
					  "bytes of the argument list", fn,
					  paramHandle, paramSize);
		else
			memcpy(a->block + p->off, param, paramSize);
	}
	pthread_mutex_unlock(&bin_lock);
	return ret;
}

aclError aclrtKernelArgsFinalize(aclrtArgsHandle argsHandle)
{
	struct args *a;
	int ret;

	if (!argsHandle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtKernelArgsFinalize: argsHandle is NULL");
	pthread_mutex_lock(&bin_lock);
	ret = get_args("aclrtKernelArgsFinalize", argsHandle, true, &a);
	if (!ret)
		a->final = true;
	pthread_mutex_unlock(&bin_lock);
	return ret;
}

/*
 * A queued launch of a binary's kernel: the kernel's own launch, the
 * placeholder buffers it points into, and the binary it runs in.
 */
struct bin_launch {
	struct binary *bin;
	aclmem_kernel_block_fn block;
	aclmem_kernel_release_fn release;
	void *launch;
	void *data;
};

static int bin_block(void *p, uint32_t idx)
{
	struct bin_launch *l = p;

	return l->block(l->launch, idx);
}

static void bin_release(void *p)
{
	struct bin_launch *l = p;

	if (l->release)
		l->release(l->launch);
	free(l->data);
	binary_put(l->bin);
	free(l);
}

static int check_cfg(const char *fn, const aclrtLaunchKernelCfg *cfg)
{
	size_t i;

	if (!cfg || !cfg->numAttrs)
		return ACL_SUCCESS;
	if (!cfg->attrs)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: numAttrs %zu with attrs NULL", fn,
				   cfg->numAttrs);
	for (i = 0; i < cfg->numAttrs; i++)
		if (cfg->attrs[i].id < ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE ||
		    cfg->attrs[i].id > ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING)
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "%s: attribute %zu: unknown id %d",
					   fn, i, (int)cfg->attrs[i].id);
	return ACL_SUCCESS;
}

/* Under bin_lock: the function h with a reference on its binary taken. */
static int get_func(const char *fn, aclrtFuncHandle h, struct func **out)
{
	struct func *f = find_func(h);

	if (!f)
		return aclmem_fail(ACL_ERROR_RT_INVALID_HANDLE,
				   "%s: %p is not a function of a loaded binary",
				   fn, h);
	f->bin->refs++;
	*out = f;
	return ACL_SUCCESS;
}

/*
 * Queue f over blocks with the packed arguments block (len bytes), which
 * the entry copies; data, the placeholders' buffers the block points
 * into, goes with the launch.  The caller's reference on f's binary goes
 * with it too.
 */
static aclError queue(const char *fn, struct func *f, uint32_t blocks,
		      const void *block, size_t len, void *data,
		      aclrtStream stream)
{
	struct bin_launch *l = calloc(1, sizeof(*l));
	int ret;

	if (!l) {
		free(data);
		binary_put(f->bin);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	l->bin = f->bin;
	l->data = data;
	ret = f->entry(block, len, blocks, &l->block, &l->release, &l->launch);
	if (ret) {
		l->release = NULL;
		bin_release(l);
		if (ret == ACL_ERROR_INVALID_PARAM)
			aclmem_fail(ret, "%s: kernel %s: %zu bytes of "
				    "arguments are not its parameters", fn,
				    f->name, len);
		return ret;
	}
	return aclmem_kernel_launch_func(f->name, blocks, stream, bin_block,
					 bin_release, l, f, block,
					 (uint32_t)len);
}

/*
 * Under bin_lock: a copy of a's block whose placeholders point into
 * *data, a copy of their buffers (NULL for one without a buffer).
 */
static int snapshot(struct args *a, unsigned char **block, void **data)
{
	size_t total = 0, at = 0;
	struct param *p;
	unsigned char *d = NULL;

	for (p = a->params; p; p = p->next)
		if (p->holder && p->buf)
			total += (p->buf_size + 31) & ~(size_t)31;
	*block = malloc(a->len ? a->len : 1);
	if (total)
		d = malloc(total);
	if (!*block || (total && !d)) {
		free(*block);
		free(d);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	memcpy(*block, a->block, a->len);
	for (p = a->params; p; p = p->next) {
		void *ptr = NULL;

		if (!p->holder)
			continue;
		if (p->buf) {
			ptr = d + at;
			memcpy(ptr, p->buf, p->buf_size);
			at += (p->buf_size + 31) & ~(size_t)31;
		}
		memcpy(*block + p->off, &ptr, sizeof(ptr));
	}
	*data = d;
	return ACL_SUCCESS;
}

aclError aclrtLaunchKernelWithConfig(aclrtFuncHandle funcHandle,
				     uint32_t numBlocks, aclrtStream stream,
				     aclrtLaunchKernelCfg *cfg,
				     aclrtArgsHandle argsHandle, void *reserve)
{
	static const char fn[] = "aclrtLaunchKernelWithConfig";
	unsigned char *block = NULL;
	void *data = NULL;
	struct func *f = NULL;
	struct args *a;
	size_t len = 0;
	int ret;

	if (!funcHandle || !numBlocks || !argsHandle || reserve)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !funcHandle ? "funcHandle is NULL" :
				   !numBlocks ? "numBlocks is 0" :
				   !argsHandle ? "argsHandle is NULL" :
				   "reserve is not NULL");
	ret = check_cfg(fn, cfg);
	if (ret)
		return ret;
	pthread_mutex_lock(&bin_lock);
	f = find_func(funcHandle);
	if (!f)
		ret = aclmem_fail(ACL_ERROR_RT_INVALID_HANDLE,
				  "%s: %p is not a function of a loaded binary",
				  fn, funcHandle);
	if (!ret)
		ret = get_args(fn, argsHandle, true, &a);
	if (!ret && !a->final)
		ret = aclmem_fail(ACL_ERROR_INVALID_PARAM,
				  "%s: the argument list is not finalized", fn);
	if (!ret && a->fn != funcHandle)
		ret = aclmem_fail(ACL_ERROR_INVALID_PARAM,
				  "%s: the argument list was made for kernel "
				  "%s", fn, a->fn->name);
	if (!ret)
		ret = snapshot(a, &block, &data);
	if (!ret) {
		len = a->len;
		f->bin->refs++;
	}
	pthread_mutex_unlock(&bin_lock);
	if (ret) {
		free(block);
		free(data);
		return ret;
	}
	ret = queue(fn, f, numBlocks, block, len, data, stream);
	free(block);
	return ret;
}

aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t numBlocks,
			   const void *argsData, size_t argsSize,
			   aclrtStream stream)
{
	static const char fn[] = "aclrtLaunchKernel";
	struct func *f = NULL;
	int ret;

	if (!funcHandle || !argsData)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL",
				   fn, !funcHandle ? "funcHandle" : "argsData");
	pthread_mutex_lock(&bin_lock);
	ret = get_func(fn, funcHandle, &f);
	pthread_mutex_unlock(&bin_lock);
	if (ret)
		return ret;
	return queue(fn, f, numBlocks, argsData, argsSize, NULL, stream);
}
