/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tiering

#if !defined(_TRACE_TIERING_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_TIERING_H

#include <linux/tiering_stat.h>
#include <linux/tracepoint.h>

TRACE_DEFINE_ENUM(TIERING_DAMON_HOT);
TRACE_DEFINE_ENUM(TIERING_DAMON_COLD);
TRACE_DEFINE_ENUM(TIERING_NUMA_HINT);
TRACE_DEFINE_ENUM(TIERING_DEMOTION);
TRACE_DEFINE_ENUM(NUMA_HINT_LATENCY_TIME);
TRACE_DEFINE_ENUM(NUMA_HINT_LATENCY_FAULTS);
TRACE_DEFINE_ENUM(NUMA_HINT_PROMOTE);
TRACE_DEFINE_ENUM(NUMA_HINT_FREE_SPACE);
TRACE_DEFINE_ENUM(NUMA_HINT_REJECT_LATENCY);
TRACE_DEFINE_ENUM(NUMA_HINT_REJECT_RATELIMIT);
TRACE_DEFINE_ENUM(NUMA_HINT_REJECT_FIRST);

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
				       { TIERING_NUMA_HINT, "numa_hint" },
				       { TIERING_DEMOTION, "demotion" }))
);

/**
 * tiering_promote_decision - a NUMA-balancing promotion candidate decided
 * @src_nid: lower-tier node of the faulting folio
 * @dst_nid: top-tier node it would be promoted to
 * @nr_pages: base pages in the folio
 * @latency: its hint-fault latency, in ms or faults (see @mode)
 * @threshold: the threshold @latency was compared with
 * @mode: enum numa_hint_latency_mode
 * @decision: enum numa_hint_decision
 */
TRACE_EVENT(tiering_promote_decision,
	    TP_PROTO(int src_nid, int dst_nid, unsigned int nr_pages,
		     unsigned int latency, unsigned int threshold,
		     enum numa_hint_latency_mode mode,
		     enum numa_hint_decision decision),
	    TP_ARGS(src_nid, dst_nid, nr_pages, latency, threshold, mode,
		    decision),
	    TP_STRUCT__entry(__field(int, src_nid)
			     __field(int, dst_nid)
			     __field(unsigned int, nr_pages)
			     __field(unsigned int, latency)
			     __field(unsigned int, threshold)
			     __field(enum numa_hint_latency_mode, mode)
			     __field(enum numa_hint_decision, decision)),
	    TP_fast_assign(__entry->src_nid = src_nid;
			   __entry->dst_nid = dst_nid;
			   __entry->nr_pages = nr_pages;
			   __entry->latency = latency;
			   __entry->threshold = threshold;
			   __entry->mode = mode;
			   __entry->decision = decision;),
	    TP_printk("src_nid=%d dst_nid=%d nr_pages=%u latency=%u threshold=%u mode=%s decision=%s",
		      __entry->src_nid, __entry->dst_nid, __entry->nr_pages,
		      __entry->latency, __entry->threshold,
		      __print_symbolic(__entry->mode,
				       { NUMA_HINT_LATENCY_TIME, "time" },
				       { NUMA_HINT_LATENCY_FAULTS, "faults" }),
		      __print_symbolic(__entry->decision,
				       { NUMA_HINT_PROMOTE, "promote" },
				       { NUMA_HINT_FREE_SPACE, "free_space" },
				       { NUMA_HINT_REJECT_LATENCY, "latency" },
				       { NUMA_HINT_REJECT_RATELIMIT, "ratelimit" },
				       { NUMA_HINT_REJECT_FIRST, "first" }))
);

#endif /* _TRACE_TIERING_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
