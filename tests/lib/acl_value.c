// SPDX-License-Identifier: MIT
/*
 * aclrtValueWrite / aclrtValueWait: a stream waits until a device word
 * meets its condition (each of GEQ, EQ, AND, NOR), written by the CPU or by
 * another stream's aclrtValueWrite; work queued after the wait runs only
 * then; bad words, flags and freed buffers get their errors.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "acltest_device.h"
#include "acl/acl.h"

START_TEST(wait_holds_the_stream)
{
	static const struct {
		uint32_t flag;
		uint64_t value, no, yes;
	} c[] = {
		{ ACL_STREAM_WAIT_VALUE_GEQ, 10, 9, 11 },
		{ ACL_STREAM_WAIT_VALUE_EQ, 10, 11, 10 },
		{ ACL_STREAM_WAIT_VALUE_AND, 0x6, 0x9, 0x2 },
		{ ACL_STREAM_WAIT_VALUE_NOR, 0x0, ~0ULL, 0x5 },
	};
	uint64_t *word;
	unsigned char *buf;
	aclrtStream s;
	aclrtStreamStatus st;
	size_t i;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&word, 64, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&buf, 64, 2), 0);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		*word = c[i].no;
		buf[0] = 0;
		ck_assert_int_eq(aclrtValueWait(word, c[i].value, c[i].flag, s),
				 0);
		ck_assert_int_eq(aclrtMemsetAsync(buf, 64, 0x5a, 64, s), 0);
		usleep(50000);
		ck_assert_int_eq(aclrtStreamQuery(s, &st), 0);
		ck_assert_msg(st == ACL_STREAM_STATUS_NOT_READY && buf[0] == 0,
			      "flag %u: went on with the word at %#llx",
			      c[i].flag, (unsigned long long)c[i].no);
		*word = c[i].yes;
		ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
		ck_assert_int_eq(buf[0], 0x5a);
	}
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(word), 0);
	ck_assert_int_eq(aclrtFree(buf), 0);
}
END_TEST

START_TEST(write_on_one_stream_releases_another)
{
	aclrtStream a, b;
	uint64_t *word;

	ck_assert_int_eq(aclrtCreateStream(&a), 0);
	ck_assert_int_eq(aclrtCreateStream(&b), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&word, 8, 2), 0);
	*word = 0;
	ck_assert_int_eq(aclrtValueWait(word, 7, ACL_STREAM_WAIT_VALUE_EQ, b), 0);
	ck_assert_int_eq(aclrtValueWrite(word, 7, 0, a), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(b), 0);
	ck_assert_int_eq(*word, 7);
	ck_assert_int_eq(aclrtDestroyStream(a), 0);
	ck_assert_int_eq(aclrtDestroyStream(b), 0);
	ck_assert_int_eq(aclrtFree(word), 0);
}
END_TEST

START_TEST(bad_words)
{
	uint64_t host = 0, *word;
	aclrtStream s;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&word, 64, 2), 0);
	ck_assert_int_eq(aclrtValueWrite(NULL, 1, 0, s), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtValueWrite(word, 1, 1, s), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtValueWait(word, 1, 4, s), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtValueWrite((char *)word + 4, 1, 0, s),
			 ACL_ERROR_RT_ADDR_UNALIGNED);
	ck_assert_int_eq(aclrtValueWrite(&host, 1, 0, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtValueWait(&host, 1, 0, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Past the reserved end, inside its page. */
	ck_assert_int_eq(aclrtValueWrite((char *)word + 4096 - 8, 1, 0, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Freed before the queued write runs: an error at sync, no write. */
	{
		void *doomed;

		ck_assert_int_eq(aclrtMalloc(&doomed, 64, 2), 0);
		ck_assert_int_eq(aclrtValueWait(word, 1, 0, s), 0);
		ck_assert_int_eq(aclrtValueWrite(doomed, 5, 0, s), 0);
		ck_assert_int_eq(aclrtFree(doomed), 0);
		*word = 1;
		ck_assert_int_eq(aclrtSynchronizeStream(s),
				 ACL_ERROR_RT_PARAM_INVALID);
	}
	/* A wait nothing satisfies gives way to forced destruction. */
	*word = 0;
	ck_assert_int_eq(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, s), 0);
	usleep(20000);
	ck_assert_int_eq(aclrtDestroyStreamForce(s), 0);
	ck_assert_int_eq(aclrtFree(word), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_value");

	acltest_require_device();
	nm_add_fx(s, wait_holds_the_stream, 30, &acltest_device);
	nm_add_fx(s, write_on_one_stream_releases_another, 30, &acltest_device);
	nm_add_fx(s, bad_words, 30, &acltest_device);
	return acltest_run(s);
}
