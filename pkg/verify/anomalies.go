package verify

import (
	"container/heap"
	"sort"
)

// anomalyList keeps the first max anomalies in key order and counts them
// all: a store of millions of misnamed blobs costs max entries of memory, not
// one per blob, and lists the same ones a full sort would.
type anomalyList struct {
	max int
	n   int64
	h   anomalyHeap
}

func newAnomalyList(max int) *anomalyList { return &anomalyList{max: max} }

func (l *anomalyList) add(a Anomaly) {
	l.n++
	switch {
	case l.max <= 0:
	case len(l.h) < l.max:
		heap.Push(&l.h, a)
	case anomalyLess(a, l.h[0]):
		l.h[0] = a
		heap.Fix(&l.h, 0)
	}
}

// sorted returns the kept anomalies in key order.
func (l *anomalyList) sorted() []Anomaly {
	out := append([]Anomaly{}, l.h...)
	sort.Slice(out, func(i, j int) bool { return anomalyLess(out[i], out[j]) })
	return out
}

func anomalyLess(a, b Anomaly) bool {
	return a.Key < b.Key || a.Key == b.Key && a.Kind < b.Kind
}

// anomalyHeap is a max-heap: its root is the last anomaly kept, the first to
// give way to a smaller one.
type anomalyHeap []Anomaly

func (h anomalyHeap) Len() int           { return len(h) }
func (h anomalyHeap) Less(i, j int) bool { return anomalyLess(h[j], h[i]) }
func (h anomalyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *anomalyHeap) Push(x any)        { *h = append(*h, x.(Anomaly)) }
func (h *anomalyHeap) Pop() any {
	old := *h
	a := old[len(old)-1]
	*h = old[:len(old)-1]
	return a
}
