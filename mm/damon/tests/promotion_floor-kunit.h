/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the DAMOS promotion floor (mm/damon/promotion_floor.c).
 */

#ifndef _DAMON_PROMOTION_FLOOR_TEST_H
#define _DAMON_PROMOTION_FLOOR_TEST_H

#include <kunit/test.h>

static void damos_floor_test_rate(struct kunit *test)
{
	/* 20 accesses in 20 s: 1 a second, 1,000 per 1,000 s */
	KUNIT_EXPECT_EQ(test, damos_floor_rate(20 * 10000, 20000000), 1000UL);
	/* one access in 100 ms: 10 a second */
	KUNIT_EXPECT_EQ(test, damos_floor_rate(10000, 100000), 10000UL);
	KUNIT_EXPECT_EQ(test, damos_floor_rate(0, 100000), 0UL);
	/* no division by zero */
	KUNIT_EXPECT_EQ(test, damos_floor_rate(1, 0), 100000UL);
}

/*
 * regions [0, 4M) 0 accesses, [4M, 8M) 2.5, [8M, 16M) 20, [16M, 17M) 200, and
 * the score histogram that a running kdamond allocates
 */
static struct damon_ctx *damos_floor_test_ctx(struct kunit *test)
{
	static const unsigned long bounds[] = {0, 4, 8, 16, 17};
	static const unsigned int bps[] = {0, 25000, 200000, 2000000};
	struct damon_ctx *c = damon_new_ctx();
	struct damon_target *t;
	struct damon_region *r;
	int i;

	if (!c)
		kunit_skip(test, "ctx alloc fail");
	c->regions_score_histogram =
		kunit_kcalloc(test, DAMOS_MAX_SCORE + 1,
			      sizeof(*c->regions_score_histogram), GFP_KERNEL);
	t = c->regions_score_histogram ? damon_new_target() : NULL;
	if (!t) {
		damon_destroy_ctx(c);
		kunit_skip(test, "alloc fail");
	}
	damon_add_target(c, t);
	for (i = 0; i < ARRAY_SIZE(bps); i++) {
		r = damon_new_region(bounds[i] << 20, bounds[i + 1] << 20);
		if (!r) {
			damon_destroy_ctx(c);
			kunit_skip(test, "region alloc fail");
		}
		r->nr_accesses_bp = bps[i];
		damon_add_region(r, t);
	}
	return c;
}

static void damos_floor_test_nr_accesses(struct kunit *test)
{
	struct damon_ctx *c = damos_floor_test_ctx(test);

	/* the coldest region holds data: its accesses and one more */
	KUNIT_EXPECT_EQ(test, damos_floor_nr_accesses_bp(c, 0), 10000U);
	KUNIT_EXPECT_EQ(test, damos_floor_nr_accesses_bp(c, (4 << 20) - 1),
			10000U);
	/* free memory fills the coldest 4 MiB; 2.5 accesses round up to 3 */
	KUNIT_EXPECT_EQ(test, damos_floor_nr_accesses_bp(c, 4 << 20), 40000U);
	KUNIT_EXPECT_EQ(test, damos_floor_nr_accesses_bp(c, 8 << 20), 210000U);
	/* the last bin holds DAMOS_MAX_SCORE accesses and more */
	KUNIT_EXPECT_EQ(test, damos_floor_nr_accesses_bp(c, 16 << 20),
			(DAMOS_MAX_SCORE + 1) * 10000U);
	/* no data beyond the free memory: no floor */
	KUNIT_EXPECT_EQ(test, damos_floor_nr_accesses_bp(c, 17 << 20), 0U);
	damon_destroy_ctx(c);
}

static void damos_floor_test_admits(struct kunit *test)
{
	struct damos_access_pattern pattern = {};
	struct damos_quota quota = {};
	struct damos_watermarks wmarks = {};
	struct damon_region r = {};
	struct damos_floor saved;
	struct damon_ctx *c;
	struct damos *s;

	if (!damos_floors)
		kunit_skip(test, "no floors");
	c = damon_new_ctx();
	if (!c)
		kunit_skip(test, "ctx alloc fail");
	/* 20 samples of 5 ms an aggregation */
	c->attrs.sample_interval = 5000;
	c->attrs.aggr_interval = 100000;
	s = damon_new_scheme(&pattern, DAMOS_MIGRATE_HOT, 0, &quota, &wmarks, 1);
	if (!s) {
		damon_destroy_ctx(c);
		kunit_skip(test, "scheme alloc fail");
	}
	saved = damos_floors[0];

	/* one access an aggregation: 10 a second */
	r.nr_accesses_bp = 10000;
	damos_floors[0] = (struct damos_floor){
		.rate = 10000, .expires = jiffies + HZ * 60, .published = true,
	};
	KUNIT_EXPECT_TRUE(test, damos_floor_admits(c, &r, s));	/* no floor_nid */
	s->floor_nid = 0;
	KUNIT_EXPECT_FALSE(test, damos_floor_admits(c, &r, s));	/* not above */
	damos_floors[0].rate = 9999;
	KUNIT_EXPECT_TRUE(test, damos_floor_admits(c, &r, s));
	damos_floors[0].rate = ULONG_MAX;
	r.nr_accesses_bp = 199999;
	KUNIT_EXPECT_FALSE(test, damos_floor_admits(c, &r, s));
	/* every sample saw an access */
	r.nr_accesses_bp = 200000;
	KUNIT_EXPECT_TRUE(test, damos_floor_admits(c, &r, s));
	r.nr_accesses_bp = 0;
	KUNIT_EXPECT_FALSE(test, damos_floor_admits(c, &r, s));
	/* a stale floor, or none published, admits */
	damos_floors[0].expires = jiffies - 1;
	KUNIT_EXPECT_TRUE(test, damos_floor_admits(c, &r, s));
	damos_floors[0].expires = jiffies + HZ * 60;
	damos_floors[0].published = false;
	KUNIT_EXPECT_TRUE(test, damos_floor_admits(c, &r, s));
	/* only migrate_hot reads the floor */
	damos_floors[0].published = true;
	s->action = DAMOS_MIGRATE_COLD;
	KUNIT_EXPECT_TRUE(test, damos_floor_admits(c, &r, s));

	damos_floors[0] = saved;
	damon_destroy_scheme(s);
	damon_destroy_ctx(c);
}

static struct kunit_case damos_floor_test_cases[] = {
	KUNIT_CASE(damos_floor_test_rate),
	KUNIT_CASE(damos_floor_test_nr_accesses),
	KUNIT_CASE(damos_floor_test_admits),
	{},
};

static struct kunit_suite damos_floor_test_suite = {
	.name = "damos-promotion-floor",
	.test_cases = damos_floor_test_cases,
};

kunit_test_suite(damos_floor_test_suite);

#endif /* _DAMON_PROMOTION_FLOOR_TEST_H */
