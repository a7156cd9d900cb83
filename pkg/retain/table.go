package retain

// groupTable finds groups (hex parts, skeletons) by a lookup string, folded
// to lower case: an open-addressed array whose slots hold 32 bits of the
// string's hash beside the group's index, so that a probe reads one slot and
// no string unless the hash matches, behind a bitset filter small enough to
// stay in the processor's cache. Mark probes it for every window of a hex
// run and every word ending of a session string: most probes are misses,
// and the filter answers them.
type groupTable struct {
	slots  []uint64 // hash>>32<<32 | index+1; 0 is empty
	next   []int32  // the next group with the same lookup string, or -1
	filter []uint64 // one bit per hash value, mod len(filter)*64
}

// newGroupTable indexes groups 0 … n-1 by lookup(k) and its hash.
func newGroupTable(n int, lookup func(k int) string, hash func(string) uint64) groupTable {
	if n == 0 {
		return groupTable{}
	}
	t := groupTable{slots: make([]uint64, tableSize(n)), next: make([]int32, n)}
	// Eight bits per group, at most 2^21 (256 KiB): a miss passes the
	// filter about one time in eight, and the filter stays in L2.
	bits := 64
	for bits < 8*n && bits < 1<<21 {
		bits <<= 1
	}
	t.filter = make([]uint64, bits/64)
	for k := range n {
		t.next[k] = -1
		key := lookup(k)
		h := hash(key)
		t.filter[(h&uint64(bits-1))>>6] |= 1 << (h & 63)
		for i := slot(h, len(t.slots)); ; {
			e := t.slots[i]
			if e == 0 {
				t.slots[i] = h>>32<<32 | uint64(k+1)
				break
			}
			if uint32(e>>32) == uint32(h>>32) && lookup(int(uint32(e)-1)) == key {
				// Chain behind the first group of this lookup string.
				first := int(uint32(e) - 1)
				t.next[k], t.next[first] = t.next[first], int32(k)
				break
			}
			if i++; i == len(t.slots) {
				i = 0
			}
		}
	}
	return t
}

// find is the first group whose lookup string is b (folded) and whose hash
// is h, or -1; matches says whether group k's lookup string is b.
func (t *groupTable) find(h uint64, matches func(k int) bool) int {
	if len(t.slots) == 0 {
		return -1
	}
	bits := uint64(len(t.filter) * 64)
	if t.filter[(h&(bits-1))>>6]&(1<<(h&63)) == 0 {
		return -1
	}
	for i := slot(h, len(t.slots)); ; {
		e := t.slots[i]
		if e == 0 {
			return -1
		}
		if uint32(e>>32) == uint32(h>>32) && matches(int(uint32(e)-1)) {
			return int(uint32(e) - 1)
		}
		if i++; i == len(t.slots) {
			i = 0
		}
	}
}
