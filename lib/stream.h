/* SPDX-License-Identifier: MIT */
/*
 * Streams: each is a queue of copies and fills run in order by a worker
 * thread of its own.  Errors met by queued work are kept and returned by the
 * next synchronisation of that stream.
 */
#ifndef ACLMEM_STREAM_H
#define ACLMEM_STREAM_H

/* Wait for every stream; the first error any of them kept (cleared). */
int aclmem_streams_sync_all(void);

/*
 * Destroy every stream (device reset to zero references, aclFinalize):
 * force discards work not yet started, otherwise it is waited for.
 */
void aclmem_streams_destroy_all(int force);

void aclmem_streams_atfork_prepare(void);
void aclmem_streams_atfork_parent(void);
void aclmem_streams_atfork_child(void);

#endif /* ACLMEM_STREAM_H */
