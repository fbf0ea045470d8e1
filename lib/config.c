// SPDX-License-Identifier: MIT
/*
 * aclInit's JSON configuration file.
 *
 * CANN's rules (aclInit's documentation and its JSON reader): a file that
 * cannot be opened is ACL_ERROR_INVALID_FILE, an empty one is no
 * configuration, one that is not JSON is ACL_ERROR_PARSE_FILE, and "{" and
 * "[" may each nest at most 10 deep.  The default device is documented as
 * {"defaultDevice": {"default_device": "0"}}: a decimal string; an integer
 * is taken too, since a hand-written file easily has one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json.h>

#include "acl/acl_rt.h"
#include "config.h"
#include "log.h"

#define MAX_NESTING	10
/* A configuration is a few hundred bytes; refuse to slurp a huge file. */
#define MAX_FILE_BYTES	(16u << 20)

static atomic_int default_device = -1;

int aclmem_config_default_device(void)
{
	return atomic_load_explicit(&default_device, memory_order_acquire);
}

void aclmem_config_reset(void)
{
	atomic_store(&default_device, -1);
}

/* Object and array depth below (and including) o, counted apart. */
static int nesting_ok(struct json_object *o, int objs, int arrs)
{
	if (json_object_is_type(o, json_type_object)) {
		if (++objs > MAX_NESTING)
			return 0;
		json_object_object_foreach(o, key, val) {
			(void)key;
			if (!nesting_ok(val, objs, arrs))
				return 0;
		}
	} else if (json_object_is_type(o, json_type_array)) {
		size_t i, n = json_object_array_length(o);

		if (++arrs > MAX_NESTING)
			return 0;
		for (i = 0; i < n; i++)
			if (!nesting_ok(json_object_array_get_idx(o, i), objs,
					arrs))
				return 0;
	}
	return 1;
}

/* The file's bytes (NUL-terminated) or NULL with *err an ACL code. */
static char *slurp(const char *path, size_t *len, int *err)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int fd;

	*err = ACL_ERROR_INVALID_FILE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		aclmem_err("aclInit: %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > MAX_FILE_BYTES) {
		aclmem_err("aclInit: %s: not a regular file of at most %u bytes",
			   path, MAX_FILE_BYTES);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		*err = ACL_ERROR_BAD_ALLOC;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got != (size_t)st.st_size) {
		aclmem_err("aclInit: %s: short read", path);
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[got] = '\0';
	*len = got;
	*err = ACL_SUCCESS;
out:
	close(fd);
	return buf;
}

/* defaultDevice.default_device -> *dev (-1 if absent); ACL code. */
static int read_default_device(struct json_object *root, const char *path,
			       int *dev)
{
	struct json_object *section, *val;
	long long id;

	*dev = -1;
	if (!json_object_object_get_ex(root, "defaultDevice", &section))
		return ACL_SUCCESS;
	if (!json_object_is_type(section, json_type_object) ||
	    !json_object_object_get_ex(section, "default_device", &val)) {
		aclmem_err("aclInit: %s: defaultDevice must be an object with "
			   "\"default_device\"", path);
		return ACL_ERROR_INVALID_PARAM;
	}
	if (json_object_is_type(val, json_type_string)) {
		const char *s = json_object_get_string(val);
		char *end;

		errno = 0;
		id = strtoll(s, &end, 10);
		if (!*s || *end || errno || *s == '-' || *s == '+' ||
		    *s == ' ')
			id = -1;
	} else if (json_object_is_type(val, json_type_int)) {
		id = json_object_get_int64(val);
	} else {
		id = -1;
	}
	if (id < 0 || id > INT_MAX) {
		aclmem_err("aclInit: %s: default_device %s is not a device id",
			   path, json_object_to_json_string(val));
		return ACL_ERROR_INVALID_PARAM;
	}
	*dev = (int)id;
	return ACL_SUCCESS;
}

int aclmem_config_load(const char *path)
{
	struct json_tokener *tok;
	struct json_object *root;
	enum json_tokener_error err;
	size_t len = 0, off = 0;
	char *text;
	int ret, dev = -1;

	if (!path || !*path) {
		aclmem_config_reset();
		return ACL_SUCCESS;
	}
	text = slurp(path, &len, &ret);
	if (!text)
		return ret;
	if (!len) {
		free(text);
		aclmem_config_reset();
		return ACL_SUCCESS;
	}
	/* One past CANN's limit, so deeper files fail in nesting_ok too. */
	tok = json_tokener_new_ex(2 * MAX_NESTING + 1);
	if (!tok) {
		free(text);
		return ACL_ERROR_BAD_ALLOC;
	}
	root = json_tokener_parse_ex(tok, text, (int)len);
	err = json_tokener_get_error(tok);
	if (root && err == json_tokener_success) {
		/* One value, then nothing but white space. */
		off = json_tokener_get_parse_end(tok);
		while (off < len && text[off] && strchr(" \t\r\n", text[off]))
			off++;
	}
	if (!root || err != json_tokener_success || off < len) {
		aclmem_err("aclInit: %s is not valid JSON: %s", path,
			   err != json_tokener_success ?
			   json_tokener_error_desc(err) :
			   root ? "data after the value" : "no value");
		json_object_put(root);
		json_tokener_free(tok);
		free(text);
		return ACL_ERROR_PARSE_FILE;
	}
	json_tokener_free(tok);
	free(text);
	if (!json_object_is_type(root, json_type_object)) {
		aclmem_err("aclInit: %s: the configuration must be a JSON object",
			   path);
		ret = ACL_ERROR_PARSE_FILE;
	} else if (!nesting_ok(root, 0, 0)) {
		aclmem_err("aclInit: %s nests \"{\" or \"[\" deeper than %d",
			   path, MAX_NESTING);
		ret = ACL_ERROR_PARSE_FILE;
	} else {
		ret = read_default_device(root, path, &dev);
	}
	json_object_put(root);
	if (!ret)
		atomic_store(&default_device, dev);
	return ret;
}
