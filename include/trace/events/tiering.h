/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tiering

#if !defined(_TRACE_TIERING_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_TIERING_H

#include <linux/tiering_stat.h>
#include <linux/tracepoint.h>

TRACE_DEFINE_ENUM(TIERING_DAMON_HOT);
TRACE_DEFINE_ENUM(TIERING_DAMON_COLD);
TRACE_DEFINE_ENUM(TIERING_DEMOTION);

/**
 * tiering_migrate - one batch of a tiering migration
 * @src_nid: node the pages were on
 * @dst_nid: node they were to move to
 * @nr_moved: base pages that moved
 * @nr_failed: base pages that were tried and stayed on @src_nid
 * @reason: enum tiering_reason
 */
TRACE_EVENT(tiering_migrate,
	    TP_PROTO(int src_nid, int dst_nid, unsigned int nr_moved,
		     unsigned int nr_failed, enum tiering_reason reason),
	    TP_ARGS(src_nid, dst_nid, nr_moved, nr_failed, reason),
	    TP_STRUCT__entry(__field(int, src_nid)
			     __field(int, dst_nid)
			     __field(unsigned int, nr_moved)
			     __field(unsigned int, nr_failed)
			     __field(enum tiering_reason, reason)),
	    TP_fast_assign(__entry->src_nid = src_nid;
			   __entry->dst_nid = dst_nid;
			   __entry->nr_moved = nr_moved;
			   __entry->nr_failed = nr_failed;
			   __entry->reason = reason;),
	    TP_printk("src_nid=%d dst_nid=%d nr_moved=%u nr_failed=%u reason=%s",
		      __entry->src_nid, __entry->dst_nid, __entry->nr_moved,
		      __entry->nr_failed,
		      __print_symbolic(__entry->reason,
				       { TIERING_DAMON_HOT, "damon_hot" },
				       { TIERING_DAMON_COLD, "damon_cold" },
				       { TIERING_DEMOTION, "demotion" }))
);

#endif /* _TRACE_TIERING_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
