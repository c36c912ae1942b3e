// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cxxwork.cc - the C++ workload of bench.py's "stacks" case. The bench
 * builds it itself with g++ -O2 -fomit-frame-pointer (no frame pointers:
 * only .eh_frame unwinds it, as in most distribution C++), so it is not
 * part of the meson build. Its call chain, all non-inlined:
 *
 *   main -> bench::run -> bench::batch<Rec> -> bench::stage<Rec>
 *        -> bench::sort_by<Rec, ByKey> (std::sort: std::__introsort_loop ...)
 *         | bench::histogram (std::map)
 *         | bench::checksum<Rec>
 *
 *   frb-cxx [ROUNDS]    ROUNDS batches of work, then exit 0 (0 or none:
 *                       until killed)
 */
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

namespace bench {

static volatile std::uint64_t sink;

struct Rec {
	std::uint32_t key;
	std::uint32_t weight;
	double value;
};

struct ByKey {
	bool operator()(const Rec &a, const Rec &b) const
	{
		return a.key != b.key ? a.key < b.key : a.weight < b.weight;
	}
};

template <typename T, typename Cmp>
__attribute__((noinline)) void sort_by(std::vector<T> &v, std::mt19937 &rng, Cmp cmp)
{
	std::shuffle(v.begin(), v.end(), rng);
	std::sort(v.begin(), v.end(), cmp);
}

__attribute__((noinline)) std::uint64_t histogram(const std::vector<Rec> &v,
						  std::map<std::uint32_t, std::uint64_t> &m)
{
	std::uint64_t s = 0;

	for (std::size_t i = 0; i < v.size(); i += 4)
		m[v[i].key % 4096] += v[i].weight;
	for (const auto &kv : m)
		s += kv.second;
	if (m.size() > 3000)
		m.clear();
	return s;
}

template <typename T>
__attribute__((noinline)) std::uint64_t checksum(const std::vector<T> &v)
{
	std::uint64_t h = 1469598103934665603ULL;

	for (const T &r : v)
		h = (h ^ r.key) * 1099511628211ULL + static_cast<std::uint64_t>(r.value);
	return h;
}

template <typename T>
__attribute__((noinline)) void stage(std::vector<T> &v, std::map<std::uint32_t, std::uint64_t> &m,
				     std::mt19937 &rng)
{
	sort_by(v, rng, ByKey());
	sink = sink + histogram(v, m);
	sink = sink + checksum(v);
}

template <typename T>
__attribute__((noinline)) void batch(std::vector<T> &v, std::map<std::uint32_t, std::uint64_t> &m,
				     std::mt19937 &rng)
{
	for (int i = 0; i < 4; i++)
		stage(v, m, rng);
	sink = sink + 1;
}

__attribute__((noinline)) void run(unsigned long rounds)
{
	std::mt19937 rng(42);
	std::vector<Rec> v(16384);
	std::map<std::uint32_t, std::uint64_t> m;

	for (Rec &r : v)
		r = Rec{ static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng() % 1000),
			 static_cast<double>(rng() % 100000) / 7.0 };
	for (unsigned long i = 0; !rounds || i < rounds; i++)
		batch(v, m, rng);
}

} // namespace bench

int main(int argc, char **argv)
{
	bench::run(argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 0);
	return 0;
}
