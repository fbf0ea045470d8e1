/* SPDX-License-Identifier: MIT */
/*
 * CANN's TDT queues (acl/acl_tdt_queue.h): queues named by a qid that
 * carry buffers (acltdtBuf) or copies of data between the program's own
 * threads.  Names, types and values are CANN's; queue routes are not
 * provided, and granting or attaching a queue for another process answers
 * ACL_ERROR_FEATURE_UNSUPPORTED (lib/README.md).  Programs link
 * -lacl_tdt_queue.
 */
#ifndef INC_EXTERNAL_ACL_ACL_TDT_QUEUE_H_
#define INC_EXTERNAL_ACL_ACL_TDT_QUEUE_H_

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_TDT_QUEUE_PERMISSION_MANAGE		1
#define ACL_TDT_QUEUE_PERMISSION_DEQUEUE	2
#define ACL_TDT_QUEUE_PERMISSION_ENQUEUE	4

typedef void *acltdtBuf;
typedef struct tagMemQueueAttr acltdtQueueAttr;

typedef enum {
	ACL_TDT_QUEUE_NAME_PTR = 0,
	ACL_TDT_QUEUE_DEPTH_UINT32
} acltdtQueueAttrType;

typedef enum {
	ACL_TDT_NORMAL_MEM = 0,
	ACL_TDT_DVPP_MEM
} acltdtAllocBufType;

ACL_FUNC_VISIBILITY aclError acltdtCreateQueue(const acltdtQueueAttr *attr,
					       uint32_t *qid);
ACL_FUNC_VISIBILITY aclError acltdtDestroyQueue(uint32_t qid);
ACL_FUNC_VISIBILITY aclError acltdtEnqueue(uint32_t qid, acltdtBuf buf, int32_t timeout);
ACL_FUNC_VISIBILITY aclError acltdtDequeue(uint32_t qid, acltdtBuf *buf, int32_t timeout);
ACL_FUNC_VISIBILITY aclError acltdtEnqueueData(uint32_t qid, const void *data,
					       size_t dataSize, const void *userData,
					       size_t userDataSize, int32_t timeout,
					       uint32_t rsv);
ACL_FUNC_VISIBILITY aclError acltdtDequeueData(uint32_t qid, void *data, size_t dataSize,
					       size_t *retDataSize, void *userData,
					       size_t userDataSize, int32_t timeout);
ACL_FUNC_VISIBILITY aclError acltdtGrantQueue(uint32_t qid, int32_t pid,
					      uint32_t permission, int32_t timeout);
ACL_FUNC_VISIBILITY aclError acltdtAttachQueue(uint32_t qid, int32_t timeout,
					       uint32_t *permission);

ACL_FUNC_VISIBILITY aclError acltdtAllocBuf(size_t size, uint32_t type, acltdtBuf *buf);
ACL_FUNC_VISIBILITY aclError acltdtFreeBuf(acltdtBuf buf);
ACL_FUNC_VISIBILITY aclError acltdtGetBufData(const acltdtBuf buf, void **dataPtr,
					      size_t *size);
ACL_FUNC_VISIBILITY aclError acltdtSetBufDataLen(acltdtBuf buf, size_t len);
ACL_FUNC_VISIBILITY aclError acltdtGetBufDataLen(acltdtBuf buf, size_t *len);
ACL_FUNC_VISIBILITY aclError acltdtGetBufUserData(const acltdtBuf buf, void *dataPtr,
						  size_t size, size_t offset);
ACL_FUNC_VISIBILITY aclError acltdtSetBufUserData(acltdtBuf buf, const void *dataPtr,
						  size_t size, size_t offset);

ACL_FUNC_VISIBILITY acltdtQueueAttr *acltdtCreateQueueAttr(void);
ACL_FUNC_VISIBILITY aclError acltdtDestroyQueueAttr(const acltdtQueueAttr *attr);
ACL_FUNC_VISIBILITY aclError acltdtSetQueueAttr(acltdtQueueAttr *attr,
						acltdtQueueAttrType type, size_t len,
						const void *param);
ACL_FUNC_VISIBILITY aclError acltdtGetQueueAttr(const acltdtQueueAttr *attr,
						acltdtQueueAttrType type, size_t len,
						size_t *paramRetSize, void *param);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_TDT_QUEUE_H_ */
