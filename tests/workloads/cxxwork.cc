// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cxxwork.cc - a C++ workload for the stack tests (test_stacks.py), built
 * with -O2 -fomit-frame-pointer: only .eh_frame can unwind it. Its call
 * chain is known, so it is ground truth:
 *
 *   main -> work::level1 -> work::level2<unsigned> -> work::level3
 *        -> work::sort_all<unsigned> (std::sort) | work::tally (std::map)
 *
 *   frcxx [SECONDS]    (default: run until killed)
 */
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>
#include <random>
#include <vector>

namespace work {

static volatile unsigned long sink;

static double now()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

template <typename T>
__attribute__((noinline)) void sort_all(std::vector<T> &v, std::mt19937 &rng)
{
	/* A length that varies per call: see level1(). */
	size_t n = v.size() / 2 + rng() % (v.size() / 2);

	std::shuffle(v.begin(), v.end(), rng);
	std::sort(v.begin(), v.begin() + n);
	sink = sink + v[v.size() / 2];
}

__attribute__((noinline)) unsigned long tally(std::map<unsigned, unsigned long> &m,
					      std::mt19937 &rng)
{
	unsigned long s = 0;

	unsigned n = 2000 + rng() % 2000;

	for (unsigned i = 0; i < n; i++)
		m[rng() % 8192] += i;
	for (const auto &kv : m)
		s += kv.second;
	if (m.size() > 6000)
		m.clear();
	return s;
}

__attribute__((noinline)) void level3(std::vector<unsigned> &v,
				      std::map<unsigned, unsigned long> &m, std::mt19937 &rng)
{
	sort_all(v, rng);
	sink = sink + tally(m, rng);
}

template <typename T>
__attribute__((noinline)) void level2(std::vector<T> &v, std::map<T, unsigned long> &m,
				      std::mt19937 &rng)
{
	for (int i = 0; i < 4; i++)
		level3(v, m, rng);
	sink = sink + 1;
}

/*
 * Each call of sort_all() and tally() does a random amount of work (from
 * the seeded rng, so runs are alike). With a fixed amount, one round took a
 * steady time, and a 499 Hz sampler could lock onto its phase for seconds:
 * two perf records of one run then disagreed on the share of std::sort by
 * up to 7 points (leaf overlap 0.92), more than sampling noise.
 */
__attribute__((noinline)) void level1(double seconds)
{
	std::mt19937 rng(42);
	std::vector<unsigned> v(20000);
	std::map<unsigned, unsigned long> m;
	double until = seconds > 0 ? now() + seconds : 0;

	for (unsigned i = 0; i < v.size(); i++)
		v[i] = rng();
	do
		level2(v, m, rng);
	while (!until || now() < until);
}

} // namespace work

int main(int argc, char **argv)
{
	work::level1(argc > 1 ? std::atof(argv[1]) : 0);
	return 0;
}
