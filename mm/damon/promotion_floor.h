/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DAMOS promotion floor (CONFIG_DAMOS_PROMOTION_FLOOR): mm/damon/core.c's
 * hooks into mm/damon/promotion_floor.c.
 */
#ifndef _MM_DAMON_PROMOTION_FLOOR_H
#define _MM_DAMON_PROMOTION_FLOOR_H

#include <linux/damon.h>

#ifdef CONFIG_DAMOS_PROMOTION_FLOOR
void damos_floor_publish(struct damon_ctx *c, struct damos *s);
bool damos_floor_admits(struct damon_ctx *c, struct damon_region *r,
			struct damos *s);
#else
static inline void damos_floor_publish(struct damon_ctx *c, struct damos *s)
{
}

static inline bool damos_floor_admits(struct damon_ctx *c,
				      struct damon_region *r, struct damos *s)
{
	return true;
}
#endif

#endif /* _MM_DAMON_PROMOTION_FLOOR_H */
