package ideabench

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
)

// permutation returns the order in which candidates 0..k-1 get letters A...
// for one (seed, item, permutation index). The generator is our own
// splitmix64 and Fisher-Yates rather than math/rand so that a Go upgrade can
// never reshuffle a recorded experiment: the order is part of the request, so
// a different order would re-run (and re-pay for) every ranking.
func permutation(seed int, item string, p, k int) []int {
	h := sha256.New()
	h.Write([]byte("rank_ideas\x00"))
	h.Write([]byte(strconv.Itoa(seed)))
	h.Write([]byte{0})
	h.Write([]byte(item))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(p)))
	var sum [sha256.Size]byte
	r := splitmix64(binary.LittleEndian.Uint64(h.Sum(sum[:0])))
	perm := make([]int, k)
	for i := range perm {
		perm[i] = i
	}
	for i := k - 1; i > 0; i-- {
		j := r.intn(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm
}

type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a uniform value in [0, n) by rejection, without modulo bias.
func (s *splitmix64) intn(n int) int {
	bound := uint64(n)
	threshold := -bound % bound // 2^64 mod bound: the values to reject below
	for {
		if x := s.next(); x >= threshold {
			return int(x % bound)
		}
	}
}
