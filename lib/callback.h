/* SPDX-License-Identifier: MIT */
/*
 * Host callbacks queued on streams (aclrtLaunchCallback, aclrtLaunchHostFunc)
 * and the threads subscribed to run them.
 */
#ifndef ACLMEM_CALLBACK_H
#define ACLMEM_CALLBACK_H

struct aclmem_stream;

/*
 * A stream is being destroyed (its worker has stopped): forget its
 * subscriptions and run the callbacks it handed out that no thread ran.
 */
void aclmem_callbacks_stream_gone(const struct aclmem_stream *s);

#endif /* ACLMEM_CALLBACK_H */
